"""The cash-flow table of an evaluation as CSV or XLSX bytes.

Both hold one row per month per plan (long format: filter or pivot it in a spreadsheet), with
the month's capex, opex, residual value, total, cumulative and present value, depreciation and
book value, the owned units in service, and one column per cost line. Money is rounded to cents
here, at the edge, and nowhere before. The XLSX adds a `summary` sheet (one row per plan) and an
`assumptions` sheet: the money conventions, the traffic and every input of every plan, so the
numbers can be checked and defended from the file alone.
"""

from __future__ import annotations

import csv
import dataclasses
import io
from collections.abc import Callable, Iterator, Sequence
from enum import Enum
from typing import Any

from openpyxl import Workbook
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter

from wheretorun.engine.finance import Evaluation, MonthFlow, PlanResult, Scenario

__all__ = ["CASHFLOW_COLUMNS", "assumption_rows", "cashflow_csv", "cashflow_xlsx"]

Cell = str | int | float | None

_MONEY, _TOKENS, _RATIO, _COUNT = "money", "tokens", "ratio", "count"

# (header, kind, value of a month)
_MONTH_COLUMNS: tuple[tuple[str, str, Callable[[MonthFlow], float | int | None]], ...] = (
    ("month", _COUNT, lambda m: m.month),
    ("tokens", _TOKENS, lambda m: m.tokens),
    ("capex_usd", _MONEY, lambda m: m.capex_usd),
    ("opex_usd", _MONEY, lambda m: m.opex_usd),
    ("residual_value_usd", _MONEY, lambda m: m.residual_value_usd),
    ("total_usd", _MONEY, lambda m: m.total_usd),
    ("cumulative_usd", _MONEY, lambda m: m.cumulative_usd),
    ("discount_factor", _RATIO, lambda m: m.discount_factor),
    ("present_value_usd", _MONEY, lambda m: m.present_value_usd),
    ("depreciation_usd", _MONEY, lambda m: m.depreciation_usd),
    ("book_value_usd", _MONEY, lambda m: m.book_value_usd),
    ("units_in_service", _COUNT, lambda m: m.units_in_service),
    ("burst_tokens", _TOKENS, lambda m: m.burst_tokens),
    ("usd_per_million_tokens", _RATIO, lambda m: m.usd_per_million_tokens),
)
CASHFLOW_COLUMNS: tuple[str, ...] = ("plan", *(header for header, _, _ in _MONTH_COLUMNS))
_LINE_PREFIX = "line: "


def _line_names(plans: Sequence[PlanResult]) -> list[str]:
    names: dict[str, None] = {}
    for plan in plans:
        names.update(dict.fromkeys(line.name for line in plan.lines))
    return list(names)


def _rounded(value: float | int | None, kind: str) -> Cell:
    if value is None:
        return None
    if kind == _MONEY:
        return round(float(value), 2)
    if kind == _TOKENS:
        return round(float(value))
    if kind == _RATIO:
        return round(float(value), 10)
    return value


def _table(evaluation: Evaluation) -> tuple[list[str], Iterator[list[Cell]]]:
    """The header and the rows (one per month per plan), values rounded for output."""
    line_names = _line_names(evaluation.plans)
    header = [*CASHFLOW_COLUMNS, *(f"{_LINE_PREFIX}{name}_usd" for name in line_names)]

    def rows() -> Iterator[list[Cell]]:
        for plan in evaluation.plans:
            lines = {line.name: line.monthly_usd for line in plan.lines}
            for index, month in enumerate(plan.months):
                fixed = [_rounded(value(month), kind) for _, kind, value in _MONTH_COLUMNS]
                per_line = [
                    None if name not in lines else _rounded(lines[name][index], _MONEY) for name in line_names
                ]
                yield [plan.name, *fixed, *per_line]

    return header, rows()


def cashflow_csv(evaluation: Evaluation) -> bytes:
    """UTF-8 CSV: a header, then one row per month per plan. Empty cells: not applicable."""
    header, rows = _table(evaluation)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if cell is None else _csv_text(cell) for cell in row])
    return buffer.getvalue().encode("utf-8")


def _csv_text(cell: str | int | float) -> str:
    if isinstance(cell, float):
        return f"{cell:.10f}".rstrip("0").rstrip(".")
    return str(cell)


# --- XLSX -----------------------------------------------------------------------------------

_NUMBER_FORMATS = {_MONEY: "#,##0.00", _TOKENS: "#,##0", _RATIO: "0.000000", _COUNT: "0"}


def cashflow_xlsx(evaluation: Evaluation) -> bytes:
    """An XLSX workbook: `cash flows`, `summary`, `lines` and `assumptions` sheets."""
    workbook = Workbook()
    flows = workbook.active
    flows.title = "cash flows"
    header, rows = _table(evaluation)
    kinds = [
        "text",
        *(kind for _, kind, _ in _MONTH_COLUMNS),
        *([_MONEY] * (len(header) - len(CASHFLOW_COLUMNS))),
    ]
    _write_sheet(flows, header, rows, kinds)
    _write_sheet(workbook.create_sheet("summary"), *_summary(evaluation))
    _write_sheet(workbook.create_sheet("lines"), *_lines(evaluation))
    assumptions = assumption_rows(evaluation.scenario)
    _write_sheet(
        workbook.create_sheet("assumptions"),
        ["section", "field", "value"],
        iter([list(row) for row in assumptions]),
        ["text", "text", "text"],
    )
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def _write_sheet(sheet: Any, header: list[str], rows: Iterator[list[Cell]], kinds: list[str]) -> None:
    sheet.append(header)
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    for row in rows:
        sheet.append(row)
    for column, kind in enumerate(kinds, start=1):
        letter = get_column_letter(column)
        if kind in _NUMBER_FORMATS:
            for (cell,) in sheet.iter_rows(min_row=2, min_col=column, max_col=column):
                cell.number_format = _NUMBER_FORMATS[kind]
        width = max(len(str(header[column - 1])), 12 if kind != "text" else 10)
        sheet.column_dimensions[letter].width = min(width + 2, 48)
    sheet.freeze_panes = "A2"


def _summary(evaluation: Evaluation) -> tuple[list[str], Iterator[list[Cell]], list[str]]:
    header = [
        "plan",
        "total_usd",
        "npv_usd",
        "capex_usd",
        "opex_usd",
        "residual_value_usd",
        "tokens",
        "usd_per_million_tokens",
    ]
    rows = (
        [
            plan.name,
            _rounded(plan.total_usd, _MONEY),
            _rounded(plan.npv_usd, _MONEY),
            _rounded(plan.capex_usd, _MONEY),
            _rounded(plan.opex_usd, _MONEY),
            _rounded(plan.residual_value_usd, _MONEY),
            _rounded(plan.tokens, _TOKENS),
            _rounded(plan.usd_per_million_tokens, _RATIO),
        ]
        for plan in evaluation.plans
    )
    kinds = ["text", _MONEY, _MONEY, _MONEY, _MONEY, _MONEY, _TOKENS, _RATIO]
    return header, rows, kinds


def _lines(evaluation: Evaluation) -> tuple[list[str], Iterator[list[Cell]], list[str]]:
    header = ["plan", "line", "category", "kind", "total_usd"]
    rows = (
        [plan.name, line.name, line.category.value, line.kind.value, _rounded(line.total_usd, _MONEY)]
        for plan in evaluation.plans
        for line in plan.lines
    )
    return header, rows, ["text", "text", "text", "text", _MONEY]


def assumption_rows(scenario: Scenario) -> list[tuple[str, str, str]]:
    """(section, field, value) for the conventions, the money assumptions, the traffic and every
    field of every plan (`plans[1].capex[0]`, `amount_usd`, `250000`)."""
    rows = [
        ("conventions", "discounting", "month m discounted by (1 + i)^(m - 1), i = (1 + annual)^(1/12) - 1"),
        ("conventions", "residual value", "assets held at the end sold at book value in the last month"),
        ("conventions", "depreciation", "straight line from entry into service to the residual fraction"),
        ("conventions", "money", "USD, costs positive"),
        ("scenario", "name", scenario.name),
    ]
    rows += [("assumptions", name, _text(value)) for name, value in _fields(scenario.assumptions)]
    rows += [("traffic", name, _text(value)) for name, value in _fields(scenario.traffic)]
    for index, plan in enumerate(scenario.plans):
        rows += _object_rows(plan, f"plans[{index}]")
    return rows


def _object_rows(value: object, path: str) -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = []
    for name, item in _fields(value):
        if dataclasses.is_dataclass(item):
            rows += _object_rows(item, f"{path}.{name}")
        elif isinstance(item, tuple) and item and dataclasses.is_dataclass(item[0]):
            for index, element in enumerate(item):
                rows += _object_rows(element, f"{path}.{name}[{index}]")
        else:
            rows.append((path, name, _text(item)))
    return rows


def _fields(value: object) -> list[tuple[str, object]]:
    assert dataclasses.is_dataclass(value)
    assert not isinstance(value, type)
    return [(field.name, getattr(value, field.name)) for field in dataclasses.fields(value)]


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, tuple):
        return ", ".join(_text(item) for item in value)
    return str(value)
