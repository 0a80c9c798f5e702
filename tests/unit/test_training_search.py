"""Training searches before it rejects: recomputation, ZeRO stage, tensor-parallel degree and
micro-batch are chosen per candidate; a job is rejected only when no setting fits."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.recommend_catalog import H100, L4, LLAMA_8B, LLAMA_70B, LLAMA_405B, snapshot
from wheretorun.engine import TrainingConfig, estimate_training
from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.config import TrainingMethod
from wheretorun.engine.costs.training_jobs import JobFailure, TrainingJob, fastest_job
from wheretorun.engine.efficiency_data import DEFAULT_EFFICIENCY
from wheretorun.engine.precision import Precision
from wheretorun.engine.recommend import recommend
from wheretorun.engine.recommendation import RejectReason
from wheretorun.engine.training_setting import MICRO_BATCHES, TENSOR_PARALLEL, ZERO_STAGES
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


def test_a_job_no_setting_fits_is_still_rejected_for_memory() -> None:
    # 405B full training on 24 GB L4s: even fully sharded over 512 cards the activations of one
    # layer of a 4,096-token sequence plus the checkpoints exceed 24 GB? The search says which.
    workload = TrainingWorkload(model="llama-3.1-405b", method="full", tokens=1e9, sequence_length=4096)

    job = fastest_job(
        LLAMA_405B, L4, workload, 4, math.inf, Assumptions(max_accelerators_per_job=8), DEFAULT_EFFICIENCY
    )
    assert isinstance(job, JobFailure)
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
