"""Which models a workload accepts, and how each can be run.

A workload names catalog model ids (open or proprietary) or hosted model ids as the price table
spells them (LiteLLM keys). A catalog model with an architecture can be self-hosted; any of them
can be served by a hosted API row whose `catalog_model_id` or own `model_id` is named.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from wheretorun.engine.catalog import ApiPriceOffer, CatalogSnapshot, ModelEntry
from wheretorun.engine.errors import InvalidSpec
from wheretorun.engine.memo import RecentResults
from wheretorun.engine.specs import ModelArchitecture

__all__ = [
    "AcceptableModels",
    "SelfHosted",
    "acceptable_models",
    "clear_price_index",
    "rows_of_catalog_models",
]


@dataclass(frozen=True, slots=True)
class SelfHosted:
    model_id: str
    architecture: ModelArchitecture


@dataclass(frozen=True, slots=True)
class AcceptableModels:
    self_hosted: tuple[SelfHosted, ...]
    hosted_rows: tuple[tuple[ApiPriceOffer, str], ...]  # (price row, the model id it serves)
    notes: tuple[str, ...]


def acceptable_models(
    names: Sequence[str], snapshot: CatalogSnapshot, field: str = "workload.model"
) -> AcceptableModels:
    """Resolve `names`; unknown names are noted, and no known name at all is an InvalidSpec."""
    wanted = set(names)
    rows = _rows_named(snapshot.api_prices, _served_names, wanted)
    hosted_rows = tuple(
        (row, row.catalog_model_id if row.catalog_model_id in wanted else row.model_id) for row in rows
    )
    hosted_names = {model_id for _, model_id in hosted_rows}
    unknown = [name for name in names if name not in snapshot.models and name not in hosted_names]
    if len(unknown) == len(names):
        raise InvalidSpec(field, f"no catalog model or hosted model id among {list(names)}")
    entries = [snapshot.models[name] for name in names if name in snapshot.models]
    notes = [f"{name}: not in the catalog, ignored" for name in unknown]
    notes += [_why_not_self_hosted(entry) for entry in entries if entry.architecture is None]
    return AcceptableModels(
        self_hosted=tuple(
            SelfHosted(entry.id, entry.architecture) for entry in entries if entry.architecture is not None
        ),
        hosted_rows=hosted_rows,
        notes=tuple(notes),
    )


_INDEXES: RecentResults[dict[str, tuple[int, ...]]] = RecentResults(kept=8)


def _served_names(row: ApiPriceOffer) -> set[str | None]:
    """The names a request may give a row by: its catalog model id or its hosted model id."""
    return {row.catalog_model_id, row.model_id}


def _catalog_model(row: ApiPriceOffer) -> set[str | None]:
    """The catalog model a row serves, if the catalog knows it."""
    return {row.catalog_model_id}


def rows_of_catalog_models(prices: tuple[ApiPriceOffer, ...], models: set[str]) -> list[ApiPriceOffer]:
    """The rows of `prices` whose `catalog_model_id` is one of `models`, in table order (the
    suspect prices, ~1,400 rows, are read for one or two models per request)."""
    return _rows_named(prices, _catalog_model, models)


def _rows_named(
    prices: tuple[ApiPriceOffer, ...], names_of: Callable[[ApiPriceOffer], set[str | None]], wanted: set[str]
) -> list[ApiPriceOffer]:
    """The rows of `prices` that `names_of` names one of `wanted`, in table order. The positions
    of each name's rows are remembered per price table and naming: a request asks for one or two
    names of thousands of rows."""

    def index() -> dict[str, tuple[int, ...]]:
        found: dict[str, list[int]] = {}
        for position, row in enumerate(prices):
            for name in names_of(row):
                if name is not None:
                    found.setdefault(name, []).append(position)
        return {name: tuple(positions) for name, positions in found.items()}

    by_name = _INDEXES.get((prices,), names_of, index)
    return [prices[position] for position in sorted({p for name in wanted for p in by_name.get(name, ())})]


def clear_price_index() -> None:
    """Forget the remembered indexes of price rows by model name."""
    _INDEXES.clear()


def _why_not_self_hosted(entry: ModelEntry) -> str:
    if not entry.open_weights:
        return f"{entry.id}: proprietary, only its hosted APIs are candidates"
    return f"{entry.id}: the catalog lacks its architecture, so it cannot be sized for self-hosting"
