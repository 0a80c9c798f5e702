"""Time one in-process estimate and a 10,000-configuration vectorised sweep.

    .venv/bin/python bench/engine_speed.py

Targets (issue 3): one estimate well under 1 ms; 10,000 configurations under 1 s.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from wheretorun.calibration.catalog import accelerators, models  # noqa: E402
from wheretorun.engine import (  # noqa: E402
    InferenceConfig,
    Precision,
    ServingEngine,
    SweepGrid,
    TrainingConfig,
    estimate_inference,
    estimate_training,
    sweep_inference,
)


def _best_of(function: object, repeats: int, number: int) -> float:
    """Median over `repeats` of the mean seconds per call over `number` calls."""
    assert callable(function)
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            function()
        runs.append((time.perf_counter() - start) / number)
    return statistics.median(runs)


def main() -> int:
    model_table, gpu_table = models(), accelerators()
    llama70 = model_table["Llama-3-70B"]
    h100 = gpu_table["NVIDIA H100 SXM"]
    config = InferenceConfig(
        accelerator_count=2,
        weight_precision=Precision.FP8,
        engine=ServingEngine.VLLM,
        input_tokens=2048,
        output_tokens=256,
        concurrency=32,
    )
    single = _best_of(lambda: estimate_inference(llama70, h100, config), repeats=7, number=200)
    with_targets = InferenceConfig(
        accelerator_count=2,
        weight_precision=Precision.FP8,
        input_tokens=2048,
        output_tokens=256,
        concurrency=32,
        ttft_target_ms=1000,
        tpot_target_ms=50,
    )
    capacity = _best_of(lambda: estimate_inference(llama70, h100, with_targets), repeats=5, number=50)
    training = _best_of(
        lambda: estimate_training(llama70, h100, TrainingConfig(accelerator_count=64, tokens=1e12)),
        repeats=7,
        number=200,
    )

    chosen_models = [
        model_table[name]
        for name in (
            "Llama-3-8B",
            "Llama-3-70B",
            "Llama-3.1-405B",
            "Mixtral-8x7B-v0.1",
            "Qwen2.5-7B",
            "DeepSeek-V3",
            "Mistral-7B-v0.1",
            "Llama-2-13B",
            "Qwen2.5-72B",
            "Llama-2-7B",
        )
    ]
    chosen_gpus = [
        gpu_table[name]
        for name in (
            "NVIDIA H100 SXM",
            "NVIDIA H200 SXM",
            "NVIDIA B200 SXM",
            "NVIDIA A100 SXM 80GB",
            "NVIDIA L40S",
            "NVIDIA GeForce RTX 4090",
            "AMD Instinct MI300X",
            "NVIDIA L4",
            "NVIDIA RTX 6000 Ada",
            "Apple M2 Ultra",
        )
    ]

    def build_grid() -> SweepGrid:
        return SweepGrid.product(
            chosen_models,
            chosen_gpus,
            [1, 2, 4, 8, 16],
            [Precision.BF16, Precision.FP8, Precision.AWQ_INT4, Precision.GGUF_Q4_K_M],
            [ServingEngine.VLLM],
            [(1024, 256, 1), (2048, 512, 64), (512, 128, 16), (8192, 1024, 8), (256, 64, 256)],
        )

    start = time.perf_counter()
    grid = build_grid()
    build = time.perf_counter() - start
    assert grid.size == 10_000, grid.size
    start = time.perf_counter()
    result = sweep_inference(grid)  # first call also fills the per-(model, precision) caches
    cold = time.perf_counter() - start
    sweep = _best_of(lambda: sweep_inference(grid), repeats=5, number=1)

    print(f"one inference estimate:                 {single * 1e3:8.3f} ms   (target well under 1 ms)")
    print(f"one inference estimate + capacity search:{capacity * 1e3:7.3f} ms")
    print(f"one training estimate:                  {training * 1e3:8.3f} ms")
    print(f"10,000-configuration sweep (first call): {cold * 1e3:7.1f} ms   (target < 1000 ms)")
    print(f"10,000-configuration sweep (repeat):    {sweep * 1e3:8.1f} ms")
    print(f"  building the 10,000-row grid:         {build * 1e3:8.1f} ms")
    print(f"  valid {int(result.valid.sum())}, fitting {int(result.fits.sum())} of {grid.size}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
