"""The public surface of the finance core and the reports: every exported name exists, and the
names a caller needs are exported."""

from __future__ import annotations

import pytest

import wheretorun.engine.finance as finance
import wheretorun.reports as reports


@pytest.mark.parametrize("module", [finance, reports])
def test_every_exported_name_exists_once(module: object) -> None:
    exported = module.__all__  # type: ignore[attr-defined]
    assert len(exported) == len(set(exported))
    missing = [name for name in exported if not hasattr(module, name)]
    assert missing == []


def test_the_entry_points_are_exported() -> None:
    entry_points = {"Scenario", "Plan", "evaluate", "buy_versus_rent", "break_even", "sensitivity"}
    entry_points |= {"monte_carlo", "compare", "npv", "irr", "payback_month"}
    assert entry_points <= set(finance.__all__)
    charts = {"break_even_chart", "cost_stack_chart", "tornado_chart", "monte_carlo_chart"}
    assert {"cashflow_csv", "cashflow_xlsx", *charts} <= set(reports.__all__)


def test_internal_helpers_stay_private() -> None:
    assert "evaluate_batch" not in finance.__all__
    assert "build_knobs" not in finance.__all__
