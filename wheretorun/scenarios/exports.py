"""Files of an evaluated scenario: the cash-flow table (CSV, XLSX) and charts (SVG, PNG)."""

from __future__ import annotations

from typing import Literal

from wheretorun import reports
from wheretorun.errors import InvalidInput
from wheretorun.scenarios.service import Analyses

__all__ = ["CHART_NAMES", "MEDIA_TYPES", "TableFormat", "chart_file", "table_file"]

TableFormat = Literal["csv", "xlsx"]
ChartFormatName = Literal["svg", "png"]
CHART_NAMES = ("cost_stack", "break_even", "tornado", "monte_carlo")

MEDIA_TYPES = {
    "csv": "text/csv",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "svg": "image/svg+xml",
    "png": "image/png",
}


def table_file(analyses: Analyses, fmt: TableFormat) -> bytes:
    if fmt == "csv":
        return reports.cashflow_csv(analyses.evaluation)
    return reports.cashflow_xlsx(analyses.evaluation)


def chart_file(analyses: Analyses, chart: str, fmt: ChartFormatName, plan: str | None = None) -> bytes:
    """One chart; the analysis it draws must have been asked for in the request."""
    chart_format = reports.ChartFormat(fmt)
    if chart == "cost_stack":
        return reports.cost_stack_chart(analyses.evaluation, chart_format)
    if chart == "break_even":
        if analyses.break_even is None:
            raise InvalidInput("body.break_even", "the break-even chart needs a `break_even` request")
        return reports.break_even_chart(analyses.break_even, chart_format)
    if chart == "tornado":
        if analyses.sensitivity is None:
            raise InvalidInput("body.sensitivity", "the tornado chart needs a `sensitivity` request")
        name = plan or analyses.evaluation.plans[0].name
        if name not in {tornado.plan for tornado in analyses.sensitivity.plans}:
            raise InvalidInput("query.plan", f"no plan named {name!r}")
        return reports.tornado_chart(analyses.sensitivity, name, chart_format)
    if chart == "monte_carlo":
        if analyses.monte_carlo is None:
            raise InvalidInput("body.monte_carlo", "the Monte Carlo chart needs a `monte_carlo` request")
        return reports.monte_carlo_chart(analyses.monte_carlo, chart_format)
    raise InvalidInput("path.chart", f"unknown chart {chart!r}; choose one of {', '.join(CHART_NAMES)}")
