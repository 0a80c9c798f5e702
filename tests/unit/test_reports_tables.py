"""Cash-flow exports: CSV rows and totals match the evaluation; the XLSX opens and explains itself."""

from __future__ import annotations

import csv
import io
from collections import defaultdict

import openpyxl
import pytest

from wheretorun.engine.finance import (
    CapexItem,
    CostCategory,
    Evaluation,
    FinanceAssumptions,
    InstanceLine,
    OpexLine,
    OwnedCapacity,
    Plan,
    Scenario,
    Traffic,
    UnitOpexLine,
    UsageLine,
    evaluate,
)
from wheretorun.reports import CASHFLOW_COLUMNS, assumption_rows, cashflow_csv, cashflow_xlsx

HORIZON = 24
SCENARIO = Scenario(
    name="chat assistant",
    plans=(
        Plan("hosted", usage=(UsageLine("tokens", 1.2),)),
        Plan("cloud", instances=(InstanceLine("8xH100", 30.0, 3e10, utilisation=0.6, minimum_instances=1),)),
        Plan(
            "owned",
            capex=(CapexItem("network", 40_000.0, month=1, depreciation_years=5, residual_fraction=0.1),),
            opex=(OpexLine("staff", 7_000.0, CostCategory.STAFF, annual_escalation=0.03),),
            capacity=OwnedCapacity(
                tokens_per_month_per_unit=3e10,
                capex_usd_per_unit=300_000.0,
                burst_usd_per_million_tokens=1.2,
                lead_time_months=2,
                initial_units=1,
                unit_opex=(UnitOpexLine("power", 900.0, CostCategory.POWER),),
            ),
        ),
    ),
    traffic=Traffic(tokens_per_month=2e10, growth_per_month=0.05),
    assumptions=FinanceAssumptions(horizon_months=HORIZON, discount_rate_annual=0.09),
)


@pytest.fixture(scope="module")
def evaluation() -> Evaluation:
    return evaluate(SCENARIO)


def read_csv(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"))))


def test_csv_has_one_row_per_month_per_plan(evaluation: Evaluation) -> None:
    rows = read_csv(cashflow_csv(evaluation))
    assert len(rows) == HORIZON * 3
    months: dict[str, list[int]] = defaultdict(list)
    for row in rows:
        months[row["plan"]].append(int(row["month"]))
    assert months == {name: list(range(1, HORIZON + 1)) for name in ("hosted", "cloud", "owned")}


def test_csv_totals_equal_the_evaluation(evaluation: Evaluation) -> None:
    rows = read_csv(cashflow_csv(evaluation))
    cent = 0.005 * HORIZON  # each month is rounded to the cent
    for plan in evaluation.plans:
        mine = [row for row in rows if row["plan"] == plan.name]
        assert sum(float(row["total_usd"]) for row in mine) == pytest.approx(plan.total_usd, abs=cent)
        assert float(mine[-1]["cumulative_usd"]) == pytest.approx(plan.total_usd, abs=0.005)
        assert sum(float(row["present_value_usd"]) for row in mine) == pytest.approx(plan.npv_usd, abs=cent)
        for line in plan.lines:
            column = f"line: {line.name}_usd"
            assert sum(float(row[column]) for row in mine) == pytest.approx(line.total_usd, abs=cent)


def test_csv_columns_and_blanks(evaluation: Evaluation) -> None:
    data = cashflow_csv(evaluation)
    header = data.decode("utf-8").splitlines()[0].split(",")
    assert tuple(header[: len(CASHFLOW_COLUMNS)]) == CASHFLOW_COLUMNS
    assert "line: servers_usd" in header
    rows = read_csv(data)
    hosted = rows[0]
    assert hosted["units_in_service"] == ""  # not applicable to a hosted plan
    assert hosted["line: servers_usd"] == ""
    owned_first = next(row for row in rows if row["plan"] == "owned")
    assert owned_first["units_in_service"] == "1"
    assert float(owned_first["capex_usd"]) == pytest.approx(340_000.0)


def test_xlsx_opens_with_its_sheets(evaluation: Evaluation) -> None:
    workbook = openpyxl.load_workbook(io.BytesIO(cashflow_xlsx(evaluation)))
    assert workbook.sheetnames == ["cash flows", "summary", "lines", "assumptions"]
    flows = workbook["cash flows"]
    assert flows.max_row == 1 + HORIZON * 3
    header = [cell.value for cell in flows[1]]
    assert tuple(header[: len(CASHFLOW_COLUMNS)]) == CASHFLOW_COLUMNS


def test_xlsx_summary_matches_the_evaluation(evaluation: Evaluation) -> None:
    workbook = openpyxl.load_workbook(io.BytesIO(cashflow_xlsx(evaluation)))
    summary = {row[0]: row for row in workbook["summary"].iter_rows(min_row=2, values_only=True)}
    for plan in evaluation.plans:
        assert summary[plan.name][1] == pytest.approx(plan.total_usd, abs=0.005)
        assert summary[plan.name][2] == pytest.approx(plan.npv_usd, abs=0.005)


def test_xlsx_assumptions_sheet_holds_the_inputs(evaluation: Evaluation) -> None:
    workbook = openpyxl.load_workbook(io.BytesIO(cashflow_xlsx(evaluation)))
    rows = {
        (section, field): value
        for section, field, value in workbook["assumptions"].iter_rows(min_row=2, values_only=True)
    }
    assert rows[("assumptions", "horizon_months")] == str(HORIZON)
    assert rows[("assumptions", "discount_rate_annual")] == "0.09"
    assert rows[("traffic", "growth_per_month")] == "0.05"
    assert rows[("plans[2].capex[0]", "amount_usd")] == "40000.0"
    assert rows[("plans[2].capacity", "lead_time_months")] == "2"
    assert rows[("plans[2].capacity.unit_opex[0]", "category")] == "power"
    assert rows[("scenario", "name")] == "chat assistant"


def test_assumption_rows_name_every_plan_field() -> None:
    rows = assumption_rows(SCENARIO)
    paths = {(section, field) for section, field, _ in rows}
    assert ("plans[1].instances[0]", "usd_per_instance_hour") in paths
    assert ("plans[0].usage[0]", "usd_per_unit") in paths
    assert ("plans[0]", "capacity") in paths  # shown empty: the hosted plan owns nothing
