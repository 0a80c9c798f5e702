"""LiteLLM's `model_prices_and_context_window.json` -> one `ApiPriceRecord` per model key.

Prices are USD per token in the source; records carry USD per million tokens, computed exactly as
`Decimal(text of the number) * 1_000_000` (the JSON is parsed with `Decimal` for floats, so
`2.5e-07` becomes exactly `0.25`).

A price of 0 is free tier or unknown in LiteLLM, never a real price: it is stored as None, as is a
missing price, and the record's `suspect_reason` says which prices are missing or 0 (for chat,
completion and responses models the input and output price; for embedding and rerank models the
input price; for other modes that no per-token price exists). Zero secondary prices (cache, batch)
are dropped silently and listed in `extra["dropped_zero_prices"]`.

Skipped: `sample_spec` (field documentation) and entries that describe routing rules rather than
a model (`fallback_generalizations`). Entries with `alias_of` take the target's fields and keep the
target in `extra["alias_of"]`.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from wheretorun.pricing.records import ApiPriceRecord, ModelRecord
from wheretorun.pricing.sources._text import plain_decimal
from wheretorun.pricing.sources.manifest import DATA_DIR, source_labels
from wheretorun.pricing.sources.models import LITELLM_FILE, hosted_index

__all__ = ["read_litellm_file", "read_litellm_prices", "to_usd_per_million"]

_MILLION = 1_000_000
_PER_TOKEN_FIELD = re.compile(r"token_cost|_per_token|_per_[a-z]+_token(?!s)")
_TOKEN_MODES = frozenset({"chat", "completion", "responses"})
_INPUT_ONLY_MODES = frozenset({"embedding", "rerank"})

# Source field -> record field, for the prices the record has columns for.
_PRICE_FIELDS = {
    "input_cost_per_token": "input_usd_per_million_tokens",
    "cache_read_input_token_cost": "cached_input_usd_per_million_tokens",
    "cache_creation_input_token_cost": "cache_write_usd_per_million_tokens",
    "output_cost_per_token": "output_usd_per_million_tokens",
    "input_cost_per_token_batches": "batch_input_usd_per_million_tokens",
    "output_cost_per_token_batches": "batch_output_usd_per_million_tokens",
}


ModelIndex = Mapping[str, str] | Iterable[ModelRecord]


def read_litellm_prices(
    text: str, source: str, model_index: ModelIndex | None = None
) -> list[ApiPriceRecord]:
    """Price records of a LiteLLM price table, linked to catalog models.

    `model_index` maps LiteLLM keys to catalog model ids; the model records themselves may be
    passed instead (their `hosted_model_ids` are used).
    """
    table: dict[str, Any] = json.loads(text, parse_float=Decimal)
    index = _index(model_index)
    records = []
    for key, entry in table.items():
        if key == "sample_spec" or not isinstance(entry, dict) or _is_rules_entry(entry):
            continue
        resolved = _resolve_alias(entry, table)
        records.append(_record(key, resolved, _provider(key, entry, resolved), source, index.get(key)))
    return records


def read_litellm_file(
    path: Path, model_index: ModelIndex | None = None, source: str | None = None
) -> list[ApiPriceRecord]:
    """Records of a price-table file; the shipped file is cited by its manifest origin."""
    if source is None:
        shipped = path.resolve() == (DATA_DIR / LITELLM_FILE).resolve()
        source = source_labels()[path.name] if shipped else f"LiteLLM price table {path.name}"
    return read_litellm_prices(path.read_text(encoding="utf-8"), source, model_index)


def to_usd_per_million(value: object) -> Decimal | None:
    """USD per token (a JSON number) -> USD per million tokens, exact; None when not a number."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        return None
    if not number.is_finite():
        return None
    return plain_decimal(number * _MILLION)


def _index(model_index: ModelIndex | None) -> Mapping[str, str]:
    if model_index is None:
        return {}
    if isinstance(model_index, Mapping):
        return model_index
    return hosted_index(model_index)


def _is_rules_entry(entry: Mapping[str, Any]) -> bool:
    return "rules" in entry and "litellm_provider" not in entry


def _resolve_alias(entry: dict[str, Any], table: Mapping[str, Any]) -> dict[str, Any]:
    target = entry.get("alias_of")
    if not isinstance(target, str):
        return entry
    resolved = dict(table.get(target) or {})
    resolved["alias_of"] = target
    return resolved


def _record(
    key: str, entry: Mapping[str, Any], provider: str, source: str, catalog_model_id: str | None
) -> ApiPriceRecord:
    prices: dict[str, Decimal | None] = {}
    zero: list[str] = []
    for field, name in _PRICE_FIELDS.items():
        value = to_usd_per_million(entry.get(field))
        if value is not None and value <= 0:
            zero.append(field)
            value = None
        prices[name] = value
    mode = entry.get("mode") if isinstance(entry.get("mode"), str) else None
    extra = _extra(entry, zero)
    entry_source = entry.get("source")
    if isinstance(entry_source, str) and not entry_source.startswith("http"):
        extra["source_note"] = entry_source
    return ApiPriceRecord(
        provider=provider,
        model_id=key,
        mode=mode,
        input_usd_per_million_tokens=prices["input_usd_per_million_tokens"],
        cached_input_usd_per_million_tokens=prices["cached_input_usd_per_million_tokens"],
        cache_write_usd_per_million_tokens=prices["cache_write_usd_per_million_tokens"],
        output_usd_per_million_tokens=prices["output_usd_per_million_tokens"],
        batch_input_usd_per_million_tokens=prices["batch_input_usd_per_million_tokens"],
        batch_output_usd_per_million_tokens=prices["batch_output_usd_per_million_tokens"],
        context_window_tokens=_positive_int(entry.get("max_input_tokens")),
        max_output_tokens=_positive_int(entry.get("max_output_tokens")),
        deprecation_date=_date(entry.get("deprecation_date")),
        source=entry_source if isinstance(entry_source, str) and entry_source.startswith("http") else source,
        suspect_reason=_suspect_reason(entry, mode),
        catalog_model_id=catalog_model_id,
        extra=extra,
    )


def _provider(key: str, entry: Mapping[str, Any], resolved: Mapping[str, Any]) -> str:
    """The entry's `litellm_provider`, else the key's prefix, else (aliases) the target's provider."""
    provider = entry.get("litellm_provider")
    if isinstance(provider, str) and provider:
        return provider
    if "/" in key:
        return key.split("/", 1)[0]
    target = resolved.get("litellm_provider")
    return target if isinstance(target, str) and target else "unknown"


def _suspect_reason(entry: Mapping[str, Any], mode: str | None) -> str | None:
    if mode in _INPUT_ONLY_MODES:
        required = ["input_cost_per_token"]
    elif mode in _TOKEN_MODES or mode is None:
        required = ["input_cost_per_token", "output_cost_per_token"]
    else:
        required = []
    reasons = []
    for field in required:
        label = field.removesuffix("_cost_per_token")
        value = to_usd_per_million(entry.get(field))
        if value is None:
            reasons.append(f"no {label} price in the source")
        elif value <= 0:
            reasons.append(f"{label} price is 0 in the source (free tier or unknown; not served as 0)")
    if not required:
        input_price = to_usd_per_million(entry.get("input_cost_per_token"))
        if input_price is None:
            reasons.append(
                f"no per-token price (mode {mode}: priced per image, second, page or query, if at all)"
            )
        elif input_price <= 0:
            reasons.append("input price is 0 in the source (free tier or unknown; not served as 0)")
    if "alias_of" in entry and len(entry) == 1:
        reasons.append(f"alias of {entry['alias_of']!r}, which is not in the table")
    return "; ".join(reasons) or None


def _extra(entry: Mapping[str, Any], zero: list[str]) -> dict[str, str]:
    """Other prices (tiers, priority/flex, non-token units) as strings; per-token ones per million."""
    extra: dict[str, str] = {}
    for field, value in entry.items():
        if field in _PRICE_FIELDS or "cost" not in field:
            continue
        if isinstance(value, dict):
            extra[field] = json.dumps(value, default=str, sort_keys=True)
            continue
        number = to_usd_per_million(value) if _per_token(field) else _number(value)
        if number is not None and number > 0:
            extra[f"{field}_per_million" if _per_token(field) else field] = str(number)
    if zero:
        extra["dropped_zero_prices"] = ", ".join(zero)
    if "alias_of" in entry:
        extra["alias_of"] = str(entry["alias_of"])
    return extra


def _per_token(field: str) -> bool:
    """`input_cost_per_token_priority`, `cache_read_input_token_cost`, `input_cost_per_audio_token`:
    priced per token. `..._per_1k_tokens`, `..._per_second`, `..._per_image`: other units, kept as is."""
    return _PER_TOKEN_FIELD.search(field) is not None


def _number(value: object) -> Decimal | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return plain_decimal(Decimal(str(value)))
    except InvalidOperation:
        return None


def _positive_int(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        return None
    return int(value) if value > 0 and value == int(value) else None


def _date(value: object) -> dt.date | None:
    if not isinstance(value, str):
        return None
    try:
        return dt.date.fromisoformat(value.strip())
    except ValueError:
        return None
