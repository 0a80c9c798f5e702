"""Model reader: architectures are consistent and sourced; LiteLLM keys are linked by rule.

Calibration figures and LiteLLM keys are read from the shipped files in the test itself.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from wheretorun.pricing.records import ModelRecord
from wheretorun.pricing.sources.hosted import HostedMatcher, key_tokens
from wheretorun.pricing.sources.models import read_models

DATA = Path(__file__).resolve().parents[2] / "wheretorun" / "pricing" / "data"
LITELLM = DATA / "sources" / "litellm" / "model_prices_and_context_window.json"
CALIBRATION_MODELS = DATA / "calibration" / "models.csv"

REQUIRED_OPEN_MODELS = {
    "llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3-8b", "llama-3-70b", "llama-3.1-8b",
    "llama-3.1-70b", "llama-3.1-405b", "llama-3.2-1b", "llama-3.2-3b", "llama-3.3-70b",
    "mistral-7b-v0.1", "mixtral-8x7b", "mixtral-8x22b", "qwen2.5-7b", "qwen2.5-14b", "qwen2.5-32b",
    "qwen2.5-72b", "deepseek-v3", "gemma-2-9b", "gemma-2-27b", "phi-3-mini-4k", "phi-3-medium-4k",
}  # fmt: skip
# Configs that state head_dim explicitly, so head_dim x heads need not equal hidden_size.
EXPLICIT_HEAD_DIM = {"gemma-2-9b", "gemma-2-27b", "qwen3-32b", "qwen3-30b-a3b", "gpt-oss-120b", "gpt-oss-20b"}


@pytest.fixture(scope="module")
def models() -> list[ModelRecord]:
    return read_models(DATA)


@pytest.fixture(scope="module")
def by_id(models: list[ModelRecord]) -> dict[str, ModelRecord]:
    return {model.id: model for model in models}


@pytest.fixture(scope="module")
def open_models(models: list[ModelRecord]) -> list[ModelRecord]:
    return [model for model in models if model.open_weights]


@pytest.fixture(scope="module")
def litellm_keys() -> list[str]:
    return [key for key in json.loads(LITELLM.read_text(encoding="utf-8")) if key != "sample_spec"]


def test_widely_used_open_models_are_present(
    by_id: dict[str, ModelRecord], open_models: list[ModelRecord]
) -> None:
    assert REQUIRED_OPEN_MODELS <= by_id.keys()
    complete = [m for m in open_models if m.layers and m.attention_heads and m.kv_heads]
    assert len(complete) >= 20
    assert len(open_models) >= 22


def test_attention_shapes_are_consistent(open_models: list[ModelRecord]) -> None:
    for model in open_models:
        if model.attention_heads is None or model.kv_heads is None:
            continue
        assert model.attention_heads % model.kv_heads == 0, model.id
        if model.attention in {"MHA", "MLA"}:
            assert model.kv_heads == model.attention_heads, model.id
        elif model.attention == "GQA":
            assert model.kv_heads < model.attention_heads, model.id
        if (
            model.head_dim
            and model.hidden_size
            and model.attention != "MLA"
            and model.id not in EXPLICIT_HEAD_DIM
        ):
            assert model.head_dim * model.attention_heads == model.hidden_size, model.id


def test_kv_cache_bytes_follow_the_formula(open_models: list[ModelRecord]) -> None:
    for model in open_models:
        if model.attention == "MLA" or model.kv_cache_bytes_per_token_16bit is None:
            continue
        assert model.layers
        assert model.kv_heads
        assert model.head_dim
        expected = 2 * model.layers * model.kv_heads * model.head_dim * 2
        assert model.kv_cache_bytes_per_token_16bit == expected, model.id


def test_mixture_of_experts(open_models: list[ModelRecord]) -> None:
    moe = [m for m in open_models if m.experts]
    assert {m.id for m in moe} >= {"mixtral-8x7b", "mixtral-8x22b", "deepseek-v3", "gpt-oss-120b"}
    for model in moe:
        assert model.total_params_b is not None, model.id
        assert model.active_params_b is not None, model.id
        assert model.active_params_b < model.total_params_b, model.id
        assert model.experts_per_token is not None
        assert model.experts_per_token < (model.experts or 0)
    dense = [m for m in open_models if not m.experts]
    assert all(m.active_params_b is None for m in dense)


def test_sliding_windows(by_id: dict[str, ModelRecord]) -> None:
    for gemma in ("gemma-2-9b", "gemma-2-27b"):
        model = by_id[gemma]
        assert model.sliding_window == 4096
        assert model.layers is not None
        assert model.sliding_window_layers == model.layers // 2
    mistral = by_id["mistral-7b-v0.1"]
    assert (mistral.sliding_window, mistral.sliding_window_layers) == (4096, mistral.layers)
    assert by_id["mistral-7b-v0.3"].sliding_window is None
    assert by_id["llama-3.1-8b"].sliding_window is None


def test_calibration_rows_are_carried_over_exactly(by_id: dict[str, ModelRecord]) -> None:
    with CALIBRATION_MODELS.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    by_hf = {model.hf_id: model for model in by_id.values() if model.hf_id}
    checked = 0
    for row in rows:
        model = by_hf.get(row["hf_id"])
        if model is None:
            continue
        for column in ("layers", "hidden_size", "attention_heads", "kv_heads", "vocab_size", "max_context"):
            if row[column].isdigit():
                assert getattr(model, column) == int(row[column]), (model.id, column)
        if row["kv_cache_bytes_per_token_16bit"].isdigit():
            assert model.kv_cache_bytes_per_token_16bit == int(row["kv_cache_bytes_per_token_16bit"])
        checked += 1
    assert checked >= 16


def test_every_row_is_sourced(models: list[ModelRecord]) -> None:
    for model in models:
        assert model.source
    derived_params = {"gemma-2-9b", "gemma-2-27b", "phi-3-medium-4k", "mistral-7b-v0.3"}
    for model in models:
        if model.id in derived_params:
            assert "derived" in model.source
            assert "=" in model.source


def test_proprietary_models_have_no_architecture(models: list[ModelRecord]) -> None:
    proprietary = [m for m in models if not m.open_weights]
    names = {m.id for m in proprietary}
    assert {
        "gpt-4o",
        "gpt-4.1",
        "claude-sonnet-4.5",
        "claude-haiku-4.5",
        "gemini-2.5-pro",
        "gemini-2.5-flash",
    } <= names
    for model in proprietary:
        assert model.layers is None
        assert model.total_params_b is None
        assert model.hf_id is None
        assert model.hosted_model_ids, model.id


def test_hosted_ids_exist_and_belong_to_one_model(models: list[ModelRecord], litellm_keys: list[str]) -> None:
    known = set(litellm_keys)
    seen: set[str] = set()
    for model in models:
        for key in model.hosted_model_ids:
            assert key in known
            assert key not in seen
            seen.add(key)
    assert len(seen) > 300


@pytest.mark.parametrize(
    ("model_id", "key"),
    [
        ("llama-3.3-70b", "deepinfra/meta-llama/Llama-3.3-70B-Instruct"),
        ("llama-3.3-70b", "us.meta.llama3-3-70b-instruct-v1:0"),
        ("llama-3.3-70b", "fireworks_ai/accounts/fireworks/models/llama-v3p3-70b-instruct"),
        ("llama-3-8b", "bedrock/us-east-1/meta.llama3-8b-instruct-v1:0"),
        ("llama-3.1-8b", "together_ai/meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo"),
        ("mixtral-8x7b", "bedrock/us-west-2/mistral.mixtral-8x7b-instruct-v0:1"),
        ("mistral-7b-instruct-v0.2", "mistral.mistral-7b-instruct-v0:2"),
        ("deepseek-v3", "deepinfra/deepseek-ai/DeepSeek-V3"),
        ("gpt-oss-120b", "groq/openai/gpt-oss-120b"),
        ("gpt-4o", "gpt-4o-2024-08-06"),
        ("claude-sonnet-4.5", "anthropic.claude-sonnet-4-5-20250929-v1:0"),
        ("claude-sonnet-4.5", "vertex_ai/claude-sonnet-4-5@20250929"),
        ("gemini-2.5-pro", "gemini/gemini-2.5-pro"),
    ],
)
def test_known_hosted_keys_are_linked(
    by_id: dict[str, ModelRecord], litellm_keys: list[str], model_id: str, key: str
) -> None:
    assert key in litellm_keys
    assert key in by_id[model_id].hosted_model_ids


@pytest.mark.parametrize(
    ("model_id", "key"),
    [
        ("gpt-4o", "gpt-4o-mini"),
        ("gpt-4o", "ft:gpt-4o-2024-08-06"),
        ("gpt-5", "gpt-5-chat-latest"),
        ("llama-3-8b", "meta.llama3-1-8b-instruct-v1:0"),
        ("llama-3.1-8b", "cloudflare/@cf/meta/llama-guard-3-8b"),
        ("llama-3.3-70b", "gmi/deepseek-ai/DeepSeek-R1-Distill-Llama-70B"),
        ("mistral-7b-v0.1", "mistral.mistral-7b-instruct-v0:2"),
        ("deepseek-v3", "deepinfra/deepseek-ai/DeepSeek-V3-0324"),
        ("gemini-2.5-flash", "gemini/gemini-2.5-flash-lite"),
        ("claude-sonnet-4", "claude-sonnet-4-5"),
    ],
)
def test_other_models_are_not_linked(
    by_id: dict[str, ModelRecord], litellm_keys: list[str], model_id: str, key: str
) -> None:
    assert key in litellm_keys
    assert key not in by_id[model_id].hosted_model_ids


def test_no_guard_distill_or_vision_model_is_linked_to_an_open_model(models: list[ModelRecord]) -> None:
    for model in models:
        for key in model.hosted_model_ids:
            lowered = key.lower()
            assert not any(word in lowered for word in ("guard", "distill", "vision", "embed", "coder")), key


def test_key_tokens() -> None:
    assert key_tokens("bedrock/us.meta.llama3-1-70b-instruct-v1:0") == [
        "us", "meta", "llama", "3", "1", "70b", "instruct",
    ]  # fmt: skip
    assert key_tokens("fireworks_ai/accounts/fireworks/models/llama-v3p1-8b-instruct") == [
        "llama", "v", "3", "1", "8b", "instruct",
    ]  # fmt: skip
    assert key_tokens("mistral.mistral-7b-instruct-v0:2")[-3:] == ["v", "0", "2"]  # model version kept
    assert key_tokens("anthropic.claude-opus-4-6-v1") == ["anthropic", "claude", "opus", "4", "6"]


def test_a_key_claimed_by_two_models_is_an_error() -> None:
    matcher = HostedMatcher()
    matcher.add("a", "llama 3 8b")
    matcher.add("b", "llama 3", optional="8b")
    with pytest.raises(ValueError, match="several models"):
        matcher.match(["meta-llama/Meta-Llama-3-8B-Instruct"])
