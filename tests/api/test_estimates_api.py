"""`/v1/estimates`: the contract fields, physical sanity on catalog hardware, and 422s naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from wheretorun.api.inprocess import InProcessClient

LLAMA_3_8B_INLINE = {
    "name": "inline-llama-3.1-8b",
    "total_params_b": 8.0,
    "layers": 32,
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "attention_heads": 32,
    "kv_heads": 8,
    "head_dim": 128,
    "vocab_size": 128256,
    "max_context": 131072,
}


def post(client: InProcessClient, kind: str, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post(f"/v1/estimates/{kind}", json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def test_inference_contract_fields(client: InProcessClient) -> None:
    result = post(client, "inference", {"model": "llama-3.1-8b", "accelerator": "H100", "concurrency": 8})
    assert {"weights_gb", "kv_cache_gb", "total_gb", "available_gb", "fits", "max_concurrency"} <= set(
        result["memory"]
    )
    assert {"ttft_ms", "tpot_ms", "output_tokens_per_s_per_sequence", "output_tokens_per_s", "bound"} <= set(
        result["performance"]
    )
    assert result["accelerator"] == "h100-sxm"
    assert result["memory"]["fits"] is True
    assert result["performance"]["bound"] in {"memory_bandwidth", "compute", "interconnect"}


def test_batch_one_decode_stays_under_the_bandwidth_roofline(client: InProcessClient) -> None:
    accelerator = client.get("/v1/accelerators/H100").json()
    result = post(
        client, "inference", {"model": "llama-3.1-8b", "accelerator": "H100", "weight_precision": "bf16"}
    )
    # every output token reads all weights once: tokens/s <= bandwidth / weight bytes
    roofline = accelerator["memory_bandwidth_gb_s"] / result["memory"]["weights_gb"]
    assert 0 < result["performance"]["output_tokens_per_s_per_sequence"] <= roofline


def test_a_405b_model_does_not_fit_a_24gb_card(client: InProcessClient) -> None:
    result = post(
        client, "inference", {"model": "llama-3.1-405b", "accelerator": "RTX4090", "weight_precision": "int4"}
    )
    assert result["memory"]["fits"] is False
    # 405e9 parameters at 4 bits are ~200 GB of weights against 24 GB
    assert result["memory"]["shortfall_gb"] > 150


def test_an_inline_spec_gives_the_same_answer_as_the_catalog_id(client: InProcessClient) -> None:
    catalog = client.get("/v1/accelerators/L40S").json()
    inline = {
        "name": "my-l40s",
        "memory_gb": catalog["memory_gb"],
        "memory_bandwidth_gb_s": catalog["memory_bandwidth_gb_s"],
        "family": catalog["family"],
        "memory_kind": catalog["memory_kind"],
        "bf16_tflops": catalog["bf16_tflops"],
        "fp8_tflops": catalog["fp8_tflops"],
        "int8_tops": catalog["int8_tops"],
        "fp32_tflops": catalog["fp32_tflops"],
        "tdp_w": catalog["tdp_w"],
        "interconnect_gb_s": catalog["interconnect_gb_s"],
    }
    by_id = post(client, "inference", {"model": "llama-3.1-8b", "accelerator": "L40S", "concurrency": 16})
    by_spec = post(
        client, "inference", {"model": LLAMA_3_8B_INLINE, "accelerator": inline, "concurrency": 16}
    )
    assert by_spec["memory"] == by_id["memory"]
    assert by_spec["performance"] == by_id["performance"]


def test_latency_targets_yield_a_request_rate_that_meets_them(client: InProcessClient) -> None:
    body = {
        "model": "llama-3.1-70b",
        "accelerator": "H100",
        "accelerator_count": 4,
        "weight_precision": "fp8",
    }
    rate = post(client, "inference", {**body, "ttft_target_ms": 2000, "tpot_target_ms": 50})[
        "max_request_rate"
    ]
    assert rate is not None
    assert rate["requests_per_s"] > 0
    assert rate["ttft_ms"] <= 2000
    assert rate["tpot_ms"] <= 50
    without_targets = post(client, "inference", body)
    assert without_targets["max_request_rate"] is None


def test_training_contract_and_scaling(client: InProcessClient) -> None:
    body = {"model": "llama-3.1-8b", "accelerator": "A100-80GB", "accelerator_count": 8, "tokens": 1e10}
    result = post(client, "training", body)
    assert {
        "memory_per_accelerator_gb",
        "fits",
        "min_accelerators",
        "total_flops",
        "mfu",
        "accelerator_hours",
    } <= set(result)
    assert result["fits"] is True
    assert 0 < result["mfu"] < 1
    # 6 x params x tokens is the floor of the training maths; the input-embedding lookup
    # (vocab x hidden parameters) is a gather, not a matmul, so it is left out of the params
    matmul_params = 8e9 - 128256 * 4096
    assert result["total_flops"] >= 6 * matmul_params * 1e10
    assert result["total_flops"] <= 8 * 8e9 * 1e10 * 1.2  # at most recompute (8NT) plus attention
    doubled = post(client, "training", {**body, "tokens": 2e10})
    assert doubled["accelerator_hours"] == pytest.approx(2 * result["accelerator_hours"], rel=1e-6)
    lora = post(client, "training", {**body, "method": "lora"})
    assert lora["memory_per_accelerator_gb"] < result["memory_per_accelerator_gb"]


def test_pipeline_stages_split_the_weights_and_report_their_bubble(client: InProcessClient) -> None:
    # ZeRO-1 keeps the 16-bit weights whole per replica: 2 bytes x 70.6e9 = 141 GB; four stages
    # hold a quarter each. 80 layers do not split into 3 stages.
    body = {
        "model": "llama-3.1-70b",
        "accelerator": "H100",
        "accelerator_count": 64,
        "tokens": 1e9,
        "zero_stage": 1,
    }
    flat = post(client, "training", body)
    staged = post(client, "training", {**body, "pipeline_parallel": 4})
    assert staged["memory"]["weights_gb"] == pytest.approx(flat["memory"]["weights_gb"] / 4)
    assert any("bubble" in note for note in staged["notes"])
    response = client.post(
        "/v1/estimates/training", json={**body, "accelerator_count": 48, "pipeline_parallel": 3}
    )
    assert response.status_code == 422, response.text
    assert "body.pipeline_parallel" in [error["field"] for error in response.json()["errors"]]


def test_full_training_of_a_70b_model_does_not_fit_one_gpu(client: InProcessClient) -> None:
    result = post(
        client,
        "training",
        {"model": "llama-3.1-70b", "accelerator": "H100", "accelerator_count": 1, "tokens": 1e9},
    )
    assert result["fits"] is False
    # mixed-precision Adam keeps ~16 bytes per parameter: over 1 TB for 70B
    assert result["shortfall_gb"] > 1000
    assert result["min_accelerators"] is None or result["min_accelerators"] > 8


@pytest.mark.parametrize(
    ("kind", "body", "field"),
    [
        (
            "inference",
            {"model": {**LLAMA_3_8B_INLINE, "layers": 0}, "accelerator": "L4"},
            "body.model.layers",
        ),
        (
            "inference",
            {"model": {**LLAMA_3_8B_INLINE, "kv_heads": 6}, "accelerator": "L4"},
            "body.model.kv_heads",
        ),
        (
            "inference",
            {"model": "llama-3.1-8b", "accelerator": "L4", "accelerator_count": 3, "tensor_parallel": 3},
            "body.tensor_parallel",
        ),
        (
            "inference",
            {"model": "llama-3.1-8b", "accelerator": "L4", "weight_precision": "int3"},
            "body.weight_precision",
        ),
        (
            "inference",
            {"model": "llama-3.1-8b", "accelerator": "L4", "input_tokens": -5},
            "body.input_tokens",
        ),
        ("inference", {"model": "no-such-model", "accelerator": "L4"}, "body.model"),
        ("inference", {"model": "gpt-4o", "accelerator": "L4"}, "body.model"),
        ("inference", {"model": "llama-3.1-8b", "accelerator": "no-such-gpu"}, "body.accelerator"),
        ("inference", {"model": "llama-3.1-8b", "accelerator": "aws-inferentia"}, "body.accelerator"),
        ("inference", {"model": "llama-3.1-8b", "accelerator": "L4", "engine": "magic"}, "body.engine"),
        ("inference", {"model": "llama-3.1-8b", "accelerator": "L4", "surprise": 1}, "body.surprise"),
        ("training", {"model": "llama-3.1-8b", "accelerator": "L4", "tokens": -1}, "body.tokens"),
        (
            "training",
            {"model": "llama-3.1-8b", "accelerator": "L4", "tokens": 1e9, "zero_stage": 4},
            "body.zero_stage",
        ),
        (
            "training",
            {"model": "llama-3.1-8b", "accelerator": "L4", "tokens": 1e9, "precision": "int4"},
            "body.precision",
        ),
        (
            "training",
            {
                "model": "llama-3.1-8b",
                "accelerator": "L4",
                "tokens": 1e9,
                "accelerator_count": 6,
                "tensor_parallel": 4,
            },
            "body.tensor_parallel",
        ),
    ],
)
def test_impossible_inputs_are_422_naming_the_field(
    client: InProcessClient, kind: str, body: dict[str, Any], field: str
) -> None:
    response = client.post(f"/v1/estimates/{kind}", json=body)
    assert response.status_code == 422, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    fields = [error["field"] for error in response.json()["errors"]]
    assert any(f == field or f.startswith(field + ".") for f in fields), fields
