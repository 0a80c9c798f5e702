"""The rules that reject a candidate, one module per rule, each named after what it checks.

A rule is a small pure function that returns None (the candidate passes) or a `Rejection`
(rejection.py: the `RejectReason` reported and the facts in words). The first failing rule
decides; they apply in this order, the order of `RejectReason` (engine/recommendation.py):

 1. data_residency.py     violates_data_residency   on premises only; allowed regions
 2. constraints.py        violates_constraint       providers, accelerators, options, precision floor
 3. suspect_price.py      suspect_price             prices the catalog flags, unless asked for
 4. offer_support.py      unsupported_offer         GPU slices; TPUs or parts bought as another option
 5. hardware_spec.py      unspecified_hardware      no spec, TDP, compute peak or interconnect
 6. precision_support.py  unsupported_precision     a format the chip's engines do not run
 7. context_window.py     exceeds_context_window    longer than the model's window
 8. memory_fit.py         does_not_fit_memory       weights + KV cache (or training state) too big
 9. latency_target.py     misses_latency_target     TTFT / TPOT targets
10. local_capacity.py     exceeds_local_capacity    more than one stream for a local GPU
11. one_off_job.py        one_off_job               hardware bought for one batch job
12. missing_price.py      unpriced / incomplete_price  a price the plan needs is missing
    reserved_term.py      unpriced                  a reservation without a commitment term
13. deadline.py           misses_deadline           lead time, batch deadline, training run limit
14. spot_fallback.py      no_spot_fallback          spot serving with no priced fallback
15. cluster_network.py    no_cluster_network        a multi-instance job without a cluster network
16. budget.py             over_budget / over_capex  monthly budget, one purchase of hardware

first_failing.py chains them for a hosted-API row and for hardware to buy; the planning modules
(engine/planning/) apply the rest as they size and price candidates, cloud offers in bulk.
"""
