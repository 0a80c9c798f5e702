"""Calibration: measured rows -> engine cases -> fitted efficiency factors and accuracy reports.

Unlike `wheretorun.engine` this package reads files (the CSVs shipped in
`wheretorun/pricing/data/calibration/`). `python -m wheretorun.calibration.generate` rewrites
`wheretorun/engine/efficiency_data.py`; `bench/accuracy.py` prints the accuracy table.
"""

from wheretorun.calibration.cases import Case, Metric, Skipped, build_cases
from wheretorun.calibration.fit import FitResult, fit
from wheretorun.calibration.report import MetricSummary, Prediction, held_out, in_sample, summarise

__all__ = [
    "Case",
    "FitResult",
    "Metric",
    "MetricSummary",
    "Prediction",
    "Skipped",
    "build_cases",
    "fit",
    "held_out",
    "in_sample",
    "summarise",
]
