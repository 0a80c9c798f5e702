"""Plans side by side, like a cost diff: each figure of each plan and its delta from a baseline.

Plans may come from one evaluation or from several (two versions of a scenario): give `labels`
when their names repeat. Lines are matched by name across plans. A line a plan does not have is
`None` in `usd` and counts as 0 in `delta_usd`; `changes` says, for each plan, whether the line
is the `same` as the baseline's, `changed`, `added` (the baseline has no such line) or
`removed` (only the baseline has it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from wheretorun.engine.errors import InvalidSpec
from wheretorun.engine.finance.cashflow import CostKind, PlanResult
from wheretorun.engine.finance.plan import CostCategory

__all__ = ["Change", "Comparison", "ComparisonRow", "compare"]

_PATH = "compare"


class Change(StrEnum):
    SAME = "same"
    CHANGED = "changed"
    ADDED = "added"
    REMOVED = "removed"


@dataclass(frozen=True, slots=True)
class ComparisonRow:
    key: str  # a summary figure (`total_usd`), a category (`power`) or a line name
    usd: tuple[float | None, ...]  # one per plan; None: the plan has no such line
    delta_usd: tuple[float, ...]  # usd − the baseline's usd (missing = 0)
    changes: tuple[Change, ...]
    category: CostCategory | None = None  # for line rows
    kind: CostKind | None = None  # for line rows


@dataclass(frozen=True, slots=True)
class Comparison:
    labels: tuple[str, ...]
    baseline: str
    summary: tuple[ComparisonRow, ...]  # total_usd, npv_usd, capex_usd, opex_usd, residual_value_usd
    categories: tuple[ComparisonRow, ...]
    lines: tuple[ComparisonRow, ...]


_SUMMARY: tuple[tuple[str, Callable[[PlanResult], float]], ...] = (
    ("total_usd", lambda plan: plan.total_usd),
    ("npv_usd", lambda plan: plan.npv_usd),
    ("capex_usd", lambda plan: plan.capex_usd),
    ("opex_usd", lambda plan: plan.opex_usd),
    ("residual_value_usd", lambda plan: plan.residual_value_usd),
)


def compare(
    plans: Sequence[PlanResult], labels: Sequence[str] | None = None, baseline: int = 0
) -> Comparison:
    """`plans` side by side, with deltas from `plans[baseline]`."""
    if len(plans) < 2:
        raise InvalidSpec(f"{_PATH}.plans", "compare at least two plans")
    names = tuple(labels) if labels is not None else tuple(plan.name for plan in plans)
    if len(names) != len(plans):
        raise InvalidSpec(f"{_PATH}.labels", f"needs one label per plan ({len(plans)}), got {len(names)}")
    if len(set(names)) != len(names):
        raise InvalidSpec(f"{_PATH}.labels", f"labels must be unique, got {list(names)}")
    if not 0 <= baseline < len(plans):
        raise InvalidSpec(f"{_PATH}.baseline", f"must index one of the {len(plans)} plans, got {baseline}")
    summary = tuple(_row(key, [figure(plan) for plan in plans], baseline) for key, figure in _SUMMARY)
    return Comparison(
        labels=names,
        baseline=names[baseline],
        summary=summary,
        categories=_category_rows(plans, baseline),
        lines=_line_rows(plans, baseline),
    )


def _row(
    key: str,
    amounts: Sequence[float | None],
    baseline: int,
    category: CostCategory | None = None,
    kind: CostKind | None = None,
) -> ComparisonRow:
    reference = amounts[baseline]
    return ComparisonRow(
        key=key,
        usd=tuple(amounts),
        delta_usd=tuple((amount or 0.0) - (reference or 0.0) for amount in amounts),
        changes=tuple(_change(reference, amount) for amount in amounts),
        category=category,
        kind=kind,
    )


def _change(reference: float | None, amount: float | None) -> Change:
    if reference is None and amount is None:
        return Change.SAME
    if reference is None:
        return Change.ADDED
    if amount is None:
        return Change.REMOVED
    same = math.isclose(reference, amount, rel_tol=1e-9, abs_tol=1e-9)
    return Change.SAME if same else Change.CHANGED


def _line_rows(plans: Sequence[PlanResult], baseline: int) -> tuple[ComparisonRow, ...]:
    first_seen: dict[str, tuple[CostCategory, CostKind]] = {}
    for plan in plans:
        for line in plan.lines:
            first_seen.setdefault(line.name, (line.category, line.kind))
    by_plan = [{line.name: line.total_usd for line in plan.lines} for plan in plans]
    return tuple(
        _row(name, [totals.get(name) for totals in by_plan], baseline, category, kind)
        for name, (category, kind) in first_seen.items()
    )


def _category_rows(plans: Sequence[PlanResult], baseline: int) -> tuple[ComparisonRow, ...]:
    by_plan: list[dict[CostCategory, float]] = []
    for plan in plans:
        totals: dict[CostCategory, float] = {}
        for line in plan.lines:
            totals[line.category] = totals.get(line.category, 0.0) + line.total_usd
        by_plan.append(totals)
    present = [category for category in CostCategory if any(category in totals for totals in by_plan)]
    return tuple(
        _row(category.value, [totals.get(category) for totals in by_plan], baseline, category)
        for category in present
    )
