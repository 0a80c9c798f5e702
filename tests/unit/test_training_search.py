"""Training searches before it rejects: recomputation, ZeRO stage, tensor-parallel degree and
micro-batch are chosen per candidate; a job is rejected only when no setting fits."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.recommend_catalog import H100, L4, LLAMA_8B, LLAMA_70B, LLAMA_405B, snapshot
from wheretorun.engine import TrainingConfig, estimate_training
from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.caches import clear_caches
from wheretorun.engine.config import TrainingMethod
from wheretorun.engine.costs.training_jobs import TrainingJob, fastest_job, job_sizer
from wheretorun.engine.efficiency_data import DEFAULT_EFFICIENCY
from wheretorun.engine.errors import InvalidSpec
from wheretorun.engine.precision import Precision
from wheretorun.engine.recommend import recommend
from wheretorun.engine.recommendation import PlanOption, RejectReason
from wheretorun.engine.rules.rejection import Rejection
from wheretorun.engine.training_estimate import pipeline_bubble
from wheretorun.engine.training_setting import MICRO_BATCHES, TENSOR_PARALLEL, ZERO_STAGES, best_setting
from wheretorun.engine.workload import Constraints, OptionKind, TrainingWorkload

FULL_70B = TrainingWorkload(model="llama-3.3-70b", method="full", tokens=1e9, sequence_length=4096)


def test_the_70b_full_fine_tune_fits_16_h100_with_recomputation() -> None:
    # Without recomputation one H100 holds the 80 layers' activations of a 4,096-token sequence:
    # 80 x 4,096 x (18 x 8,192 + 6 x 28,672) bytes = 104.7 GB > 80 GB, on any count.
    bare = TrainingConfig(accelerator_count=64, tokens=1e9, sequence_length=4096)
    assert estimate_training(LLAMA_70B, H100, bare).min_accelerators is None
    # With recomputation the 16 bytes/parameter of 70.6e9 parameters shard over 16: ~70.6 GB each,
    # plus one layer's activations and the checkpoints: it fits on 16.
    job = fastest_job(LLAMA_70B, H100, FULL_70B, 8, math.inf, Assumptions(), DEFAULT_EFFICIENCY)
    assert isinstance(job, TrainingJob), job
    assert job.accelerators == 16
    assert job.setting is not None
    assert job.setting.activation_checkpointing
    assert "activation recomputation" in job.setting.describe()


def test_the_recommendation_offers_it_and_shows_the_setting() -> None:
    result = recommend(
        FULL_70B,
        Constraints(allowed_options=(OptionKind.CLOUD,), allowed_accelerators=("h100-sxm",)),
        Assumptions(horizon_months=12),
        snapshot(),
    )
    assert result.options, [group.examples for group in result.rejected]
    best = result.options[0]
    assert best.setting is not None
    assert "recomputation" in best.setting
    # one whole run: 16 x wall-clock hours
    assert best.accelerator_hours_per_run == pytest.approx(16 * best.wall_clock_hours_per_run)
    assert all(group.reason != RejectReason.DOES_NOT_FIT_MEMORY for group in result.rejected)


def _l4_training_options() -> tuple[PlanOption, ...]:
    """The 70B full fine-tune's options on L4 (cloud and owned), of which there are some."""
    result = recommend(
        FULL_70B,
        Constraints(allowed_options=(OptionKind.CLOUD, OptionKind.OWNED), allowed_accelerators=("l4",)),
        Assumptions(horizon_months=12),
        snapshot(),
    )
    assert result.options, [group.examples for group in result.rejected]
    return result.options


def test_a_run_whose_communication_has_no_figure_in_the_catalog_says_so() -> None:
    """The catalog has no interconnect figure for L4: a 70B fine-tune spread over L4s leaves its
    data-parallel communication out of the time, and its plans' risks must say so; the H100 job
    (450 GB/s published) has no such caveat."""
    assert L4.interconnect_gb_s is None
    l4_job = fastest_job(LLAMA_70B, L4, FULL_70B, 8, math.inf, Assumptions(), DEFAULT_EFFICIENCY)
    assert isinstance(l4_job, TrainingJob), l4_job
    assert l4_job.accelerators > 1
    assert len(l4_job.caveats) == 1
    assert "the catalog has no interconnect figure for l4" in l4_job.caveats[0]
    h100_job = fastest_job(LLAMA_70B, H100, FULL_70B, 8, math.inf, Assumptions(), DEFAULT_EFFICIENCY)
    assert isinstance(h100_job, TrainingJob), h100_job
    assert h100_job.caveats == ()
    for option in _l4_training_options():
        assert any("no interconnect figure for l4" in risk for risk in option.risks), option.label


def test_a_run_says_where_its_training_efficiency_comes_from() -> None:
    """Hopper has a fit of its own (36 published runs); Ada has none and the all-family figure,
    the median of the fitted families, stands in (efficiency_data.py). A job's uncertainty says
    which, before the whole-run error, and so does every option trained on it."""
    h100_job = fastest_job(LLAMA_70B, H100, FULL_70B, 8, math.inf, Assumptions(), DEFAULT_EFFICIENCY)
    l4_job = fastest_job(LLAMA_70B, L4, FULL_70B, 8, math.inf, Assumptions(), DEFAULT_EFFICIENCY)
    assert isinstance(h100_job, TrainingJob), h100_job
    assert isinstance(l4_job, TrainingJob), l4_job
    assert h100_job.uncertainty.startswith("training efficiency of hopper at bf16: fitted on 36 figures")
    assert l4_job.uncertainty.startswith(
        "training efficiency of ada at bf16: no fit for ada at bf16; the all-family bf16 figure "
        "stands in: median of the fitted families (ampere, hopper)"
    )
    for job in (h100_job, l4_job):
        assert "; whole-run hours predicted within 19% (median" in job.uncertainty
    for option in _l4_training_options():
        assert option.uncertainty is not None
        assert option.uncertainty.startswith("training efficiency of ada at bf16: no fit"), option.label


@pytest.mark.parametrize(
    ("family", "precision", "source"),
    [
        # Volta trains in fp16 and its calibration rows are not fitted: the bf16 median stands in
        (
            "volta",
            Precision.FP16,
            "training efficiency of volta at fp16: no fit for volta at fp16; the all-family bf16 "
            "figure stands in: median of the fitted families (ampere, hopper)",
        ),
        # no fp32 fit for any family: the bf16 median stands in, even for Hopper
        (
            "hopper",
            Precision.FP32,
            "training efficiency of hopper at fp32: no fit for hopper at fp32; the all-family bf16 "
            "figure stands in: median of the fitted families (ampere, hopper)",
        ),
        # fp8 has Hopper's fit only: for another family, the fp8 median of one family stands in
        (
            "blackwell",
            Precision.FP8,
            "training efficiency of blackwell at fp8: no fit for blackwell at fp8; the all-family "
            "fp8 figure stands in: median of the fitted families (hopper)",
        ),
    ],
)
def test_the_efficiency_source_names_the_runs_precision_and_the_figure_used(
    family: str, precision: Precision, source: str
) -> None:
    chip = dataclasses.replace(H100, family=family)
    config = TrainingConfig(accelerator_count=8, precision=precision, tokens=1e8, sequence_length=2048)
    estimate = estimate_training(LLAMA_8B, chip, config)
    assert estimate.efficiency_source == source
    assert estimate.notes[0] == source


def test_a_run_near_its_limit_warns_that_the_estimate_error_would_break_it() -> None:
    """The whole-run hours are fitted within a 19% median error (efficiency_data.py): a run that
    takes more than limit / 1.19 says that error would break its limit; one well inside does not."""
    free = fastest_job(LLAMA_70B, H100, FULL_70B, 8, math.inf, Assumptions(), DEFAULT_EFFICIENCY)
    assert isinstance(free, TrainingJob), free
    hours = free.wall_hours
    tight = fastest_job(LLAMA_70B, H100, FULL_70B, 8, hours * 1.1, Assumptions(), DEFAULT_EFFICIENCY)
    assert isinstance(tight, TrainingJob), tight
    assert tight.wall_hours == hours
    # 1.1 x the run: 1 - 1 / 1.1 = 9% of the limit spare, and 1.19 x the run would pass it
    assert (
        "a run leaves 9% of its time limit spare; 19% more time, the estimate's median error, would pass"
        in " ".join(tight.caveats)
    )
    roomy = fastest_job(LLAMA_70B, H100, FULL_70B, 8, hours * 1.3, Assumptions(), DEFAULT_EFFICIENCY)
    assert isinstance(roomy, TrainingJob), roomy
    assert roomy.wall_hours == hours
    assert roomy.caveats == ()


def test_owned_training_counts_only_the_runs_made_after_delivery() -> None:
    """With a 3-month lead time and renting not allowed, the first 3 of 12 months make no runs
    (a risk says so): the cost per run is the total over the 9 months' runs."""
    workload = dataclasses.replace(FULL_70B, runs_per_year=4.0)
    result = recommend(
        workload,
        Constraints(allowed_options=(OptionKind.OWNED,), allowed_accelerators=("h100-sxm",)),
        Assumptions(horizon_months=12, hardware_lead_time_months=3),
        snapshot(),
    )
    assert result.options, [group.examples for group in result.rejected]
    owned = result.options[0]
    assert any("no runs until delivery" in risk for risk in owned.risks)
    assert owned.usd_per_run is not None
    assert float(owned.usd_per_run) == pytest.approx(float(owned.total_usd) / 3.0, abs=0.01)


def test_a_job_no_setting_fits_is_still_rejected_for_memory() -> None:
    # 405B full training on 24 GB L4s: even fully sharded over 512 cards the activations of one
    # layer of a 4,096-token sequence plus the checkpoints exceed 24 GB? The search says which.
    workload = TrainingWorkload(model="llama-3.1-405b", method="full", tokens=1e9, sequence_length=4096)

    job = fastest_job(
        LLAMA_405B, L4, workload, 4, math.inf, Assumptions(max_accelerators_per_job=8), DEFAULT_EFFICIENCY
    )
    assert isinstance(job, Rejection)
    assert job.reason == RejectReason.DOES_NOT_FIT_MEMORY


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    model=st.sampled_from([LLAMA_8B, LLAMA_70B]),
    recompute=st.booleans(),
    stage=st.sampled_from(ZERO_STAGES),
    tp=st.sampled_from(TENSOR_PARALLEL),
    micro=st.sampled_from(MICRO_BATCHES),
    nodes=st.sampled_from([1, 2, 4, 8]),
    sequence=st.sampled_from([2048, 4096, 8192]),
)
def test_a_fitting_training_setting_is_never_rejected(
    model: object, recompute: bool, stage: int, tp: int, micro: int, nodes: int, sequence: int
) -> None:
    """If any searched setting fits on some count the job allows, the search finds a job (no
    deadline): it never answers does_not_fit_memory."""
    assert model in (LLAMA_8B, LLAMA_70B)
    arch = LLAMA_8B if model is LLAMA_8B else LLAMA_70B
    config = TrainingConfig(
        accelerator_count=8 * nodes,
        method=TrainingMethod.FULL,
        precision=Precision.BF16,
        tokens=1e9,
        sequence_length=sequence,
        micro_batch_size=micro,
        zero_stage=stage,
        activation_checkpointing=recompute,
        tensor_parallel=tp,
    )
    if not estimate_training(arch, H100, config).fits:
        return
    workload = TrainingWorkload(model=arch.name, method="full", tokens=1e9, sequence_length=sequence)
    job = fastest_job(
        arch, H100, workload, 8, math.inf, Assumptions(max_accelerators_per_job=64), DEFAULT_EFFICIENCY
    )
    assert isinstance(job, TrainingJob), job
    assert job.accelerators <= 8 * nodes


# ---- pipeline parallelism (issue 13: the search chooses the pipeline degree too) -----------------


def test_pipeline_stages_divide_the_model_states_per_accelerator() -> None:
    # ZeRO-1 shards only the optimiser state: 64 H100 as 16 data-parallel replicas of 4 stages hold
    # a quarter of the 16-bit weights each, 2 bytes x 70.6e9 / 4 = 35.3 GB, against 141 GB unstaged.
    staged = TrainingConfig(accelerator_count=64, tokens=1e9, zero_stage=1, pipeline_parallel=4)
    flat = TrainingConfig(accelerator_count=64, tokens=1e9, zero_stage=1)
    staged_memory = estimate_training(LLAMA_70B, H100, staged).memory
    flat_memory = estimate_training(LLAMA_70B, H100, flat).memory
    assert staged_memory.weights_gb == pytest.approx(flat_memory.weights_gb / 4)
    assert flat_memory.weights_gb == pytest.approx(2 * LLAMA_70B.total_params / 1e9, rel=0.01)
    # 1F1B: the first stage holds 4 micro-batches of 80 / 4 layers: the activations do not fall
    assert staged_memory.activations_gb == pytest.approx(flat_memory.activations_gb)


def test_the_pipeline_bubble_is_p_minus_one_over_the_micro_batches() -> None:
    # A 4M-token global batch of 4,096-token sequences is 976.6 sequences a step; 32 accelerators
    # in 4 stages are 8 data-parallel replicas, so m = 976.6 / 8 = 122.1 micro-batches of 1 and
    # the bubble adds (4 - 1) / 122.1 = 2.46% to the compute time.
    config = TrainingConfig(accelerator_count=32, sequence_length=4096, pipeline_parallel=4)
    assert pipeline_bubble(config) == pytest.approx(1 + 3 / (4e6 / 4096 / 8))
    assert pipeline_bubble(TrainingConfig(accelerator_count=32)) == 1.0


def test_a_stage_count_that_does_not_divide_the_layers_is_invalid() -> None:
    config = TrainingConfig(accelerator_count=48, pipeline_parallel=3)  # 80 layers
    with pytest.raises(InvalidSpec, match="pipeline_parallel"):
        estimate_training(LLAMA_70B, H100, config)


@pytest.mark.parametrize(("internode_gb_s", "pipelined"), [(1.0, True), (50.0, False)])
def test_stages_across_nodes_are_chosen_only_when_the_network_is_the_bottleneck(
    internode_gb_s: float, pipelined: bool
) -> None:
    # 70B full training on 8 nodes of 8 H100. Over 1 GB/s per accelerator (8 GB/s a node) the
    # ZeRO collectives (~1.5 x 141 GB a step per replica) dominate, and 8 stages cut them by 8 for
    # a bubble of a few per cent; over 50 GB/s (400 Gb/s InfiniBand) they hide behind compute and
    # the bubble would only cost time.
    found = best_setting(
        LLAMA_70B,
        H100,
        TrainingMethod.FULL,
        Precision.BF16,
        1e9,
        4096,
        64,
        8,
        DEFAULT_EFFICIENCY,
        internode_gb_s,
    )
    assert found is not None
    setting, estimate = found
    assert (setting.pipeline_parallel > 1) is pipelined, setting.describe()
    if pipelined:
        assert "pipeline-parallel" in setting.describe()
        assert any("bubble" in note for note in estimate.notes)
        unstaged = estimate_training(
            LLAMA_70B,
            H100,
            TrainingConfig(
                accelerator_count=64,
                tokens=1e9,
                sequence_length=4096,
                micro_batch_size=setting.micro_batch_size,
                zero_stage=3,
                activation_checkpointing=True,
                internode_bandwidth_gb_s=internode_gb_s,
            ),
        )
        assert unstaged.wall_clock_hours is not None
        assert estimate.wall_clock_hours is not None
        assert estimate.wall_clock_hours < unstaged.wall_clock_hours


def test_a_remembered_sizing_is_the_sizing_of_its_own_case() -> None:
    """The sizer answers each (accelerator, unit size, limit, cap, spot, network) as `fastest_job`
    does, is shared by workloads that differ only in deadline or runs per year (their limits are
    passed in), and not by one with other tokens."""
    clear_caches()
    a = Assumptions()
    sizer = job_sizer(LLAMA_70B, FULL_70B, a, DEFAULT_EFFICIENCY)
    cases = [
        (H100, 8, math.inf, None, False, None),
        (H100, 8, 40.0, None, False, 400.0),
        (H100, 8, 40.0, None, True, 400.0),
        (H100, 8, 40.0, 1, False, None),
        (L4, 8, math.inf, None, False, None),
        (H100, 1, math.inf, 1, False, None),
    ]
    first = [sizer(s, n, limit, cap, spot=spot, internode_gb_s=net) for s, n, limit, cap, spot, net in cases]
    again = [sizer(s, n, limit, cap, spot=spot, internode_gb_s=net) for s, n, limit, cap, spot, net in cases]
    expected = [
        fastest_job(
            LLAMA_70B, s, FULL_70B, n, limit, a, DEFAULT_EFFICIENCY, cap, spot=spot, internode_gb_s=net
        )
        for s, n, limit, cap, spot, net in cases
    ]
    assert first == again == expected
    assert len({type(job) for job in expected}) == 2  # both sized jobs and rejections
    assert len({job.wall_hours for job in expected if isinstance(job, TrainingJob)}) >= 2
    repeated = TrainingWorkload(
        model=FULL_70B.model,
        method="full",
        tokens=1e9,
        sequence_length=4096,
        deadline_hours=10,
        runs_per_year=9,
    )
    assert job_sizer(LLAMA_70B, repeated, a, DEFAULT_EFFICIENCY) is sizer
    more_tokens = TrainingWorkload(model=FULL_70B.model, method="full", tokens=4e9, sequence_length=4096)
    bigger = job_sizer(LLAMA_70B, more_tokens, a, DEFAULT_EFFICIENCY)
    assert bigger is not sizer
    assert bigger(H100, 8, math.inf) != sizer(H100, 8, math.inf)


def test_every_training_option_states_the_tokens_and_sequence_length_it_was_sized_for() -> None:
    """Memory and attention FLOPs follow from the sequence length, so an option says which one
    it assumed (4,096 here, not the 2,048 default) and how many tokens a run is."""
    result = recommend(
        FULL_70B,
        Constraints(allowed_options=(OptionKind.CLOUD, OptionKind.OWNED), allowed_accelerators=("h100-sxm",)),
        Assumptions(horizon_months=12),
        snapshot(),
    )
    assert {option.option for option in result.options} == {OptionKind.CLOUD, OptionKind.OWNED}
    for option in result.options:
        assert "A run is 1B tokens of full training in sequences of 4,096 tokens." in option.rationale, (
            option.label
        )
