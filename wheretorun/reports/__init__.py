"""Reports of finance results as bytes: the cash-flow table (CSV, XLSX) and charts (SVG, PNG).

Nothing here knows about HTTP: the API layer picks a format and sets the media type.

    cashflow_csv(evaluation) -> bytes                      text/csv
    cashflow_xlsx(evaluation) -> bytes                     application/vnd.openxmlformats-
                                                           officedocument.spreadsheetml.sheet
    break_even_chart(result, ChartFormat.SVG) -> bytes     image/svg+xml (ChartFormat.PNG: image/png)
    cost_stack_chart(evaluation, fmt) -> bytes
    tornado_chart(sensitivity, plan, fmt) -> bytes
    monte_carlo_chart(result, fmt) -> bytes
"""

from wheretorun.reports.charts import (
    ChartFormat,
    break_even_chart,
    cost_stack_chart,
    monte_carlo_chart,
    tornado_chart,
)
from wheretorun.reports.tables import CASHFLOW_COLUMNS, assumption_rows, cashflow_csv, cashflow_xlsx

__all__ = [
    "CASHFLOW_COLUMNS",
    "ChartFormat",
    "assumption_rows",
    "break_even_chart",
    "cashflow_csv",
    "cashflow_xlsx",
    "cost_stack_chart",
    "monte_carlo_chart",
    "tornado_chart",
]
