"""Enumerating the candidates of one workload kind, before the recommendation ranks them.

serving_candidates.py   online inference: hosted APIs, cloud, owned servers, local GPUs
batch_candidates.py     an offline batch job: hosted APIs and cloud instances
training_candidates.py  a training or fine-tuning job: cloud, owned, local
acceptable_models.py    which models a workload accepts, and how each can run
offers.py               cloud offers and hardware that pass the offer-level rules
cloud_table.py          every eligible cloud offer x pricing mode priced at once (numpy)
context.py              what one recommendation reads (Context) and the precisions tried
rejections.py           rejected candidates counted per rule

The rules that reject a candidate live in engine/rules/, one module per rule.
"""
