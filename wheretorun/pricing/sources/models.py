"""Model records from our curated `data/models.csv`, linked to the LiteLLM keys that serve them.

`models.csv` holds the architecture of widely used open models (from `calibration/models.csv`
plus config.json copies found in public repositories; every row cites its source, and figures
computed from the architecture say `derived` and give the formula) and a row per proprietary
hosted model (no architecture). An empty cell is an unsourced figure and stays None.

`hosted_model_ids` are matched from the LiteLLM price table's keys with the rule in `hosted.py`
(`hosted_match`, `hosted_optional`, `hosted_names` columns).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from wheretorun.pricing.records import ModelRecord
from wheretorun.pricing.sources._text import (
    csv_rows,
    optional_float,
    optional_int,
    read_text,
    split_list,
)
from wheretorun.pricing.sources.hosted import HostedMatcher

__all__ = ["LITELLM_FILE", "MODELS_FILE", "hosted_index", "read_models", "read_model_rows"]

MODELS_FILE = "models.csv"
LITELLM_FILE = Path("sources") / "litellm" / "model_prices_and_context_window.json"
_ATTENTION_KINDS = frozenset({"MHA", "GQA", "MQA", "MLA"})


def read_models(data_dir: Path, litellm_keys: Iterable[str] | None = None) -> list[ModelRecord]:
    """All models of `models.csv`, with the LiteLLM keys of the shipped price table (or `litellm_keys`)."""
    if litellm_keys is None:
        litellm_keys = _litellm_keys(data_dir / LITELLM_FILE)
    rows = list(csv_rows(read_text(data_dir / MODELS_FILE)))
    hosted = _matcher(rows).match(litellm_keys)
    return [_record(row, hosted.get(row["id"], ())) for row in rows]


def read_model_rows(data_dir: Path) -> list[dict[str, str]]:
    """The raw rows of `models.csv` (for tools that re-match against a newer LiteLLM file)."""
    return list(csv_rows(read_text(data_dir / MODELS_FILE)))


def hosted_index(models: Iterable[ModelRecord]) -> dict[str, str]:
    """LiteLLM key -> catalog model id, the `model_index` the LiteLLM reader links prices with."""
    return {key: model.id for model in models for key in model.hosted_model_ids}


def _litellm_keys(path: Path) -> list[str]:
    table = json.loads(path.read_text(encoding="utf-8"))
    return [key for key in table if key != "sample_spec"]


def _matcher(rows: Iterable[Mapping[str, str]]) -> HostedMatcher:
    matcher = HostedMatcher()
    for row in rows:
        matcher.add(
            model_id=row["id"],
            match=row["hosted_match"],
            optional=row["hosted_optional"],
            names=split_list(row["hosted_names"]),
            proprietary=not _bool(row["open_weights"]),
        )
    return matcher


def _bool(text: str) -> bool:
    if text.lower() not in {"true", "false"}:
        raise ValueError(f"open_weights must be true or false, got {text!r}")
    return text.lower() == "true"


def _record(row: Mapping[str, str], hosted_ids: tuple[str, ...]) -> ModelRecord:
    attention = row["attention"] or None
    if attention is not None and attention not in _ATTENTION_KINDS:
        raise ValueError(f"{row['id']}: attention {attention!r} not in {sorted(_ATTENTION_KINDS)}")
    if not row["source"]:
        raise ValueError(f"{row['id']}: every model row needs a source")
    return ModelRecord(
        id=row["id"],
        name=row["name"],
        family=row["family"],
        open_weights=_bool(row["open_weights"]),
        hf_id=row["hf_id"] or None,
        total_params_b=optional_float(row["total_params_b"]),
        active_params_b=optional_float(row["active_params_b"]),
        layers=optional_int(row["layers"]),
        hidden_size=optional_int(row["hidden_size"]),
        intermediate_size=optional_int(row["intermediate_size"]),
        attention_heads=optional_int(row["attention_heads"]),
        kv_heads=optional_int(row["kv_heads"]),
        head_dim=optional_int(row["head_dim"]),
        vocab_size=optional_int(row["vocab_size"]),
        max_context=optional_int(row["max_context"]),
        attention=attention,
        sliding_window=optional_int(row["sliding_window"]),
        sliding_window_layers=optional_int(row["sliding_window_layers"]),
        experts=optional_int(row["experts"]),
        experts_per_token=optional_int(row["experts_per_token"]),
        kv_cache_bytes_per_token_16bit=optional_int(row["kv_cache_bytes_per_token_16bit"]),
        source=row["source"],
        hosted_model_ids=hosted_ids,
    )
