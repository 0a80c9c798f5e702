"""Hardware facts on the real seeded catalog (SQLite and PostgreSQL): GeForce peaks with FP32
accumulation, compute peaks of the NVL parts, precision support, and unknown compute.

First principles used below: prefill is compute-bound and decode bandwidth-bound, so two parts with
the same memory bandwidth (H200 NVL and H200 SXM: 4.8 TB/s) decode at the same speed, and the one
with the lower tensor peak (NVL 835.5 vs SXM 989 dense BF16 TFLOPS) can only be slower, by at most
the ratio of the peaks.
"""

from __future__ import annotations

from typing import Any

import pytest

from wheretorun.api.inprocess import InProcessClient


def ok(response: Any) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def problem_fields(response: Any) -> list[str]:
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    return [error["field"] for error in response.json()["errors"]]


def every_option(result: dict[str, Any]) -> list[dict[str, Any]]:
    best = [option for option in result["best_per_option"].values() if option]
    return [*result["options"], *best]


def rejected(result: dict[str, Any], reason: str) -> dict[str, Any] | None:
    return next((group for group in result["rejected"] if group["reason"] == reason), None)


def test_rtx_4090_bf16_is_the_fp32_accumulate_rate(client: InProcessClient) -> None:
    card = ok(client.get("/v1/accelerators/rtx-4090"))
    assert card["bf16_tflops"] == pytest.approx(165.2)
    assert card["fp8_tflops"] == pytest.approx(330.3)
    assert card["int8_tops"] == pytest.approx(660.6)
    assert "FP32 Accumulate" in card["spec_source"]
    assert ok(client.get("/v1/accelerators/rtx-3090"))["bf16_tflops"] == pytest.approx(71)


def test_accelerators_state_their_precision_support(client: InProcessClient) -> None:
    t4 = ok(client.get("/v1/accelerators/t4"))["precision_support"]
    assert t4["family"] == "turing"
    assert "fp8" not in t4["served"]
    assert "bf16" not in t4["native"]
    assert {"fp16", "int8", "awq-int4"} <= set(t4["served"])
    assert "docs.vllm.ai" in t4["source"]
    h100 = ok(client.get("/v1/accelerators/h100-sxm"))["precision_support"]
    assert {"bf16", "fp8", "int8"} <= set(h100["native"])
    assert ok(client.get("/v1/accelerators/rtx-4090"))["fp16_accumulate_tflops"] == pytest.approx(330.3)


@pytest.mark.parametrize("part", ["h100-nvl", "h200-nvl"])
def test_nvl_parts_have_sourced_compute_peaks(client: InProcessClient, part: str) -> None:
    card = ok(client.get(f"/v1/accelerators/{part}"))
    assert card["bf16_tflops"] == pytest.approx(835.5)
    assert card["fp8_tflops"] == pytest.approx(1670.5)
    assert "nvidia.com/en-us/data-center" in card["spec_source"]


def test_h200_nvl_estimate_keeps_its_prefill(client: InProcessClient) -> None:
    body = {"model": "llama-3.1-70b", "weight_precision": "fp8", "input_tokens": 2048, "output_tokens": 128}
    nvl = ok(client.post("/v1/estimates/inference", json={**body, "accelerator": "h200-nvl"}))["performance"]
    sxm = ok(client.post("/v1/estimates/inference", json={**body, "accelerator": "h200-sxm"}))["performance"]
    assert nvl["ttft_ms"] is not None
    assert nvl["ttft_ms"] >= sxm["ttft_ms"]
    assert nvl["ttft_ms"] <= sxm["ttft_ms"] * 1979 / 1670.5 * 1.01
    ratio = nvl["output_tokens_per_s"] / sxm["output_tokens_per_s"]
    assert 1670.5 / 1979 * 0.99 <= ratio <= 1.0  # was 2,771 / 384 = 7.2 with prefill dropped
    assert nvl["tpot_ms"] == pytest.approx(sxm["tpot_ms"], rel=0.01)


def test_fp8_on_a_t4_estimate_is_a_422_naming_weight_precision(client: InProcessClient) -> None:
    body = {"model": "llama-3.1-8b", "accelerator": "t4", "weight_precision": "fp8"}
    assert "body.weight_precision" in problem_fields(client.post("/v1/estimates/inference", json=body))
    assert ok(client.post("/v1/estimates/inference", json={**body, "weight_precision": "int8"}))


def test_bf16_training_on_a_v100_is_a_422_naming_precision(client: InProcessClient) -> None:
    body = {"model": "llama-3.1-8b", "accelerator": "v100-sxm2-32gb", "accelerator_count": 8, "tokens": 1e8}
    assert "body.precision" in problem_fields(client.post("/v1/estimates/training", json=body))
    assert ok(client.post("/v1/estimates/training", json={**body, "precision": "fp16"}))


def test_an_inline_spec_of_a_known_family_is_checked_too(client: InProcessClient) -> None:
    spec = {
        "name": "my-t4",
        "memory_gb": 16,
        "memory_bandwidth_gb_s": 300,
        "family": "turing",
        "memory_kind": "gddr",
        "bf16_tflops": 65,
    }
    body = {"model": "llama-3.1-8b", "accelerator": spec, "weight_precision": "fp8"}
    assert "body.weight_precision" in problem_fields(client.post("/v1/estimates/inference", json=body))


def test_an_accelerator_without_compute_peak_is_not_estimated(client: InProcessClient) -> None:
    """Apple M2 Ultra: memory and bandwidth are sourced, no TFLOPS figure is (calibration gpus.csv)."""
    body = {"model": "llama-3.1-8b", "accelerator": "apple-m2-ultra", "weight_precision": "fp16"}
    fields = problem_fields(client.post("/v1/estimates/inference", json=body))
    assert "body.accelerator" in fields


def test_fp8_on_t4_is_never_offered(client: InProcessClient) -> None:
    result = ok(
        client.post(
            "/v1/recommendations",
            json={
                "workload": {
                    "kind": "inference",
                    "model": "llama-3.1-8b",
                    "requests_per_day": 20000,
                    "input_tokens": 1000,
                    "output_tokens": 250,
                },
                "constraints": {"allowed_accelerators": ["t4"], "allowed_options": ["cloud"]},
            },
        )
    )
    options = every_option(result)
    assert options, result["rejected"]
    assert {option["setup"]["accelerator_id"] for option in options} == {"t4"}
    assert all(option["setup"]["precision"] != "fp8" for option in options)
    unsupported = rejected(result, "unsupported_precision")
    assert unsupported is not None
    assert any("t4" in example and "fp8" in example for example in unsupported["examples"])


def test_v100_is_never_offered_bf16_training(client: InProcessClient) -> None:
    result = ok(
        client.post(
            "/v1/recommendations",
            json={
                "workload": {"kind": "training", "model": "llama-3.1-8b", "method": "lora", "tokens": 2e8},
                "constraints": {"allowed_accelerators": ["v100-sxm2-16gb", "v100-sxm2-32gb"]},
            },
        )
    )
    options = every_option(result)
    assert options, result["rejected"]
    assert {option["setup"]["precision"] for option in options} == {"fp16"}


def test_no_recommended_option_runs_a_precision_its_family_lacks(client: InProcessClient) -> None:
    """Across the whole catalog: no bf16 on Turing/Volta parts, no fp8 below Ampere."""
    lacking = {"t4": {"bf16", "fp8"}, "v100-sxm2-16gb": {"bf16", "fp8", "int8", "awq-int4"}}
    lacking["v100-sxm2-32gb"] = lacking["v100-sxm2-16gb"]
    lacking["quadro-rtx-6000"] = lacking["t4"]
    result = ok(
        client.post(
            "/v1/recommendations",
            json={
                "workload": {
                    "kind": "inference",
                    "model": "llama-3.1-8b",
                    "requests_per_day": 5000,
                    "input_tokens": 500,
                    "output_tokens": 200,
                },
                "constraints": {"allowed_accelerators": sorted(lacking)},
            },
        )
    )
    options = every_option(result)
    assert options, result["rejected"]
    for option in options:
        setup = option["setup"]
        if setup["accelerator_id"] in lacking:
            assert setup["precision"] not in lacking[setup["accelerator_id"]], option["label"]
