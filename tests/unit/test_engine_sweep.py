"""The vectorised sweep gives the single estimate's numbers, and marks impossible layouts."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from tests.unit.test_engine_values import (
    A100_SXM_80,
    DEEPSEEK_V3,
    H100_SXM,
    LLAMA2_7B,
    LLAMA3_70B,
    MIXTRAL_8X7B,
    RTX_4090,
)
from wheretorun.engine import (
    InferenceConfig,
    InvalidSpec,
    Precision,
    ServingEngine,
    SweepGrid,
    estimate_inference,
    sweep_inference,
)

GRID = SweepGrid.product(
    [LLAMA2_7B, LLAMA3_70B, MIXTRAL_8X7B, DEEPSEEK_V3],
    [H100_SXM, A100_SXM_80, RTX_4090],
    [1, 2, 3, 8],
    [Precision.BF16, Precision.FP8, Precision.GGUF_Q4_K_M],
    [ServingEngine.VLLM, ServingEngine.TENSORRT_LLM, ServingEngine.SGLANG, ServingEngine.LLAMA_CPP],
    [(128, 128, 1), (2048, 256, 32), (3500, 500, 7)],
)


def _single(index: int) -> InferenceConfig:
    return InferenceConfig(
        accelerator_count=int(GRID.accelerator_count[index]),
        weight_precision=GRID.precisions[int(GRID.precision_index[index])],
        engine=GRID.engines[int(GRID.engine_index[index])],
        input_tokens=int(GRID.input_tokens[index]),
        output_tokens=int(GRID.output_tokens[index]),
        concurrency=int(GRID.concurrency[index]),
    )


def test_grid_is_the_full_product() -> None:
    assert GRID.size == 4 * 3 * 4 * 3 * 4 * 3


def test_sweep_matches_single_estimates() -> None:
    result = sweep_inference(GRID)
    rng = np.random.default_rng(7)
    for index in rng.choice(GRID.size, size=150, replace=False):
        model = GRID.models[int(GRID.model_index[index])]
        accelerator = GRID.accelerators[int(GRID.accelerator_index[index])]
        try:
            single = estimate_inference(model, accelerator, _single(int(index)))
        except InvalidSpec:
            assert not result.valid[index]
            continue
        assert result.valid[index]
        assert bool(result.fits[index]) == single.memory.fits
        assert result.total_gb[index] == pytest.approx(single.memory.total_gb)
        assert result.max_concurrency[index] == single.memory.max_concurrency
        assert result.tpot_ms[index] == pytest.approx(single.performance.tpot_ms)
        assert result.ttft_ms[index] == pytest.approx(single.performance.ttft_ms)
        assert result.output_tokens_per_s[index] == pytest.approx(single.performance.output_tokens_per_s)


def test_three_way_tensor_parallel_is_invalid_not_an_error() -> None:
    result = sweep_inference(GRID)
    three = GRID.accelerator_count == 3
    assert not result.valid[three].any()
    assert np.isnan(result.tpot_ms[three]).all()


def test_consumer_card_without_link_cannot_tensor_parallel() -> None:
    assert RTX_4090.interconnect_gb_s is None
    result = sweep_inference(GRID)
    rows = (GRID.accelerator_index == 2) & (GRID.accelerator_count > 1)
    assert not result.valid[rows].any()


def test_sweep_of_one_configuration() -> None:
    grid = SweepGrid.product(
        [LLAMA2_7B], [H100_SXM], [1], [Precision.BF16], [ServingEngine.VLLM], [(512, 64, 4)]
    )
    result = sweep_inference(grid)
    single = estimate_inference(
        LLAMA2_7B, H100_SXM, InferenceConfig(input_tokens=512, output_tokens=64, concurrency=4)
    )
    assert result.weights_gb[0] == pytest.approx(single.memory.weights_gb)
    assert math.isclose(
        result.output_tokens_per_s_per_sequence[0], single.performance.output_tokens_per_s_per_sequence
    )


def test_a_different_kv_precision_changes_the_cache() -> None:
    fp8 = dataclasses.replace(GRID, kv_cache_precision=Precision.FP8)
    bf16_cache = sweep_inference(GRID).kv_cache_gb
    fp8_cache = sweep_inference(fp8).kv_cache_gb
    valid = ~np.isnan(bf16_cache)
    assert np.allclose(fp8_cache[valid], bf16_cache[valid] / 2)
