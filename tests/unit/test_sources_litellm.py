"""LiteLLM reader: exact per-million conversion, no silent zeros, providers, dates, model links.

Expected values are read from the JSON in the test (with the plain `json` module).
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from wheretorun.pricing.records import ApiPriceRecord, ModelRecord
from wheretorun.pricing.sources.litellm import read_litellm_file, read_litellm_prices
from wheretorun.pricing.sources.models import hosted_index, read_models

DATA = Path(__file__).resolve().parents[2] / "wheretorun" / "pricing" / "data"
LITELLM = DATA / "sources" / "litellm" / "model_prices_and_context_window.json"
PRICE_FIELDS = (
    "input_usd_per_million_tokens",
    "cached_input_usd_per_million_tokens",
    "cache_write_usd_per_million_tokens",
    "output_usd_per_million_tokens",
    "batch_input_usd_per_million_tokens",
    "batch_output_usd_per_million_tokens",
)


@pytest.fixture(scope="module")
def table() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(LITELLM.read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="module")
def models() -> list[ModelRecord]:
    return read_models(DATA)


@pytest.fixture(scope="module")
def records(models: list[ModelRecord]) -> dict[str, ApiPriceRecord]:
    return {record.model_id: record for record in read_litellm_file(LITELLM, hosted_index(models))}


def _per_million(value: float | int) -> Decimal:
    return Decimal(str(value)) * 1_000_000


def test_one_record_per_model_entry(table: dict[str, Any], records: dict[str, ApiPriceRecord]) -> None:
    model_keys = {
        key
        for key, entry in table.items()
        if key != "sample_spec" and not ("rules" in entry and "litellm_provider" not in entry)
    }
    assert "sample_spec" not in records
    assert set(records) == model_keys
    assert len(records) == len(table) - 2  # sample_spec and the routing-rules entry


@pytest.mark.parametrize(
    "key",
    ["gpt-4o", "claude-sonnet-4-5", "gemini/gemini-2.5-pro", "deepinfra/meta-llama/Llama-3.3-70B-Instruct"],
)
def test_per_million_conversion_is_exact(
    table: dict[str, Any], records: dict[str, ApiPriceRecord], key: str
) -> None:
    entry, record = table[key], records[key]
    assert record.input_usd_per_million_tokens == _per_million(entry["input_cost_per_token"])
    assert record.output_usd_per_million_tokens == _per_million(entry["output_cost_per_token"])
    if "cache_read_input_token_cost" in entry and entry["cache_read_input_token_cost"] > 0:
        assert record.cached_input_usd_per_million_tokens == _per_million(
            entry["cache_read_input_token_cost"]
        )
    if "input_cost_per_token_batches" in entry:
        assert record.batch_input_usd_per_million_tokens == _per_million(
            entry["input_cost_per_token_batches"]
        )


def test_gpt_4o_is_two_fifty_and_ten_dollars(records: dict[str, ApiPriceRecord]) -> None:
    record = records["gpt-4o"]
    assert (record.input_usd_per_million_tokens, record.output_usd_per_million_tokens) == (
        Decimal("2.5"),
        Decimal(10),
    )
    assert record.context_window_tokens == 128000


def test_integer_prices_in_the_json_are_read(
    table: dict[str, Any], records: dict[str, ApiPriceRecord]
) -> None:
    ints = [
        k
        for k, e in table.items()
        if isinstance(e.get("input_cost_per_token"), int) and e["input_cost_per_token"] > 0
    ]
    for key in ints:
        assert records[key].input_usd_per_million_tokens == _per_million(table[key]["input_cost_per_token"])


def test_no_price_is_ever_zero(records: dict[str, ApiPriceRecord]) -> None:
    for record in records.values():
        for field in PRICE_FIELDS:
            value = getattr(record, field)
            assert value is None or value > 0, (record.model_id, field)


def test_zero_or_missing_prices_are_none_and_explained(
    table: dict[str, Any], records: dict[str, ApiPriceRecord]
) -> None:
    zero = [
        k
        for k, e in table.items()
        if k != "sample_spec" and e.get("mode") == "chat" and e.get("input_cost_per_token") == 0
    ]
    missing = [k for k, e in table.items() if e.get("mode") == "chat" and "input_cost_per_token" not in e]
    assert zero
    assert missing
    for key in zero:
        assert records[key].input_usd_per_million_tokens is None
        assert "0 in the source" in (records[key].suspect_reason or "")
    for key in missing:
        assert records[key].input_usd_per_million_tokens is None
        assert "no input price" in (records[key].suspect_reason or "")


def test_embedding_models_need_no_output_price(
    table: dict[str, Any], records: dict[str, ApiPriceRecord]
) -> None:
    priced = [
        k
        for k, e in table.items()
        if e.get("mode") == "embedding" and (e.get("input_cost_per_token") or 0) > 0
    ]
    assert priced
    assert all(records[key].suspect_reason is None for key in priced)


def test_providers(table: dict[str, Any], records: dict[str, ApiPriceRecord]) -> None:
    for key, entry in table.items():
        if key not in records:
            continue
        if "litellm_provider" in entry:
            assert records[key].provider == entry["litellm_provider"]
        elif "/" in key:
            assert records[key].provider == key.split("/")[0]


def test_aliases_take_their_target_prices(table: dict[str, Any], records: dict[str, ApiPriceRecord]) -> None:
    aliases = [k for k, e in table.items() if set(e) == {"alias_of"} and e["alias_of"] in table]
    assert aliases
    for key in aliases:
        target = table[table[key]["alias_of"]]
        if isinstance(target.get("input_cost_per_token"), int | float) and target["input_cost_per_token"] > 0:
            assert records[key].input_usd_per_million_tokens == _per_million(target["input_cost_per_token"])
        assert records[key].extra["alias_of"] == table[key]["alias_of"]


def test_context_dates_and_sources(table: dict[str, Any], records: dict[str, ApiPriceRecord]) -> None:
    for key, entry in table.items():
        if key not in records or "alias_of" in entry:
            continue
        record = records[key]
        if isinstance(entry.get("max_input_tokens"), int):
            expected = entry["max_input_tokens"] if entry["max_input_tokens"] > 0 else None
            assert record.context_window_tokens == expected
        if isinstance(entry.get("deprecation_date"), str):
            assert record.deprecation_date == dt.date.fromisoformat(entry["deprecation_date"])
        if str(entry.get("source", "")).startswith("http"):
            assert record.source == entry["source"]
        else:
            assert "BerriAI/litellm" in record.source


def test_bad_dates_and_odd_values_are_tolerated() -> None:
    text = json.dumps(
        {
            "sample_spec": {"input_cost_per_token": 0.0},
            "x/free-model": {
                "litellm_provider": "x",
                "mode": "chat",
                "input_cost_per_token": 0,
                "output_cost_per_token": 0,
            },
            "y/odd": {
                "mode": "chat",
                "input_cost_per_token": 1e-06,
                "output_cost_per_token": "n/a",
                "deprecation_date": "soon",
            },
        }
    )
    free, odd = read_litellm_prices(text, "test.json")
    assert free.input_usd_per_million_tokens is None
    assert free.output_usd_per_million_tokens is None
    assert free.suspect_reason
    assert "0 in the source" in free.suspect_reason
    assert (odd.provider, odd.input_usd_per_million_tokens, odd.output_usd_per_million_tokens) == (
        "y",
        Decimal(1),
        None,
    )
    assert odd.deprecation_date is None
    assert odd.source == "test.json"


def test_open_model_prices_are_linked(models: list[ModelRecord], records: dict[str, ApiPriceRecord]) -> None:
    open_ids = {m.id for m in models if m.open_weights}
    linked = [r for r in records.values() if r.catalog_model_id in open_ids]
    assert len(linked) > 100
    index = hosted_index(models)
    for record in records.values():
        assert record.catalog_model_id == index.get(record.model_id)
    assert records["deepinfra/meta-llama/Llama-3.3-70B-Instruct"].catalog_model_id == "llama-3.3-70b"


def test_model_records_may_be_passed_instead_of_an_index(models: list[ModelRecord]) -> None:
    text = LITELLM.read_text(encoding="utf-8")
    by_index = read_litellm_prices(text, "t", hosted_index(models))
    by_models = read_litellm_prices(text, "t", models)
    assert [r.catalog_model_id for r in by_index] == [r.catalog_model_id for r in by_models]
