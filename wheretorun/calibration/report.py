"""Accuracy of the engine on the calibration cases: in-sample and held out.

In-sample numbers use the factors fitted on all rows. Held-out numbers refit without a group of
rows and predict that group: every accelerator in turn for serving metrics (do the formulas hold
on a GPU whose rows were not fitted?), every model size and every accelerator family in turn for
training. Weights memory has no fitted factor, so its held-out error equals its in-sample error.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from wheretorun.calibration.cases import Case, Metric
from wheretorun.calibration.fit import fit, percent_error
from wheretorun.engine import EfficiencyTable

__all__ = ["MetricSummary", "Prediction", "TARGETS", "held_out", "in_sample", "summarise"]

# Median absolute % error targets from issue 3.
TARGETS = {
    Metric.WEIGHTS_GB: 5.0,
    Metric.DECODE_BATCH1: 15.0,
    Metric.HIGH_BATCH: 25.0,
    Metric.TTFT: 30.0,
    Metric.TRAINING_HOURS: 25.0,
    Metric.WHOLE_RUN_HOURS: 25.0,  # issue 13, on runs held out of the fit
}


@dataclass(frozen=True)
class Prediction:
    case: Case
    predicted: float

    @property
    def error_pct(self) -> float:
        return percent_error(self.predicted, self.case.measured)


@dataclass(frozen=True)
class MetricSummary:
    metric: Metric
    rows: int
    median_abs_pct: float


def in_sample(cases: Sequence[Case], table: EfficiencyTable) -> list[Prediction]:
    return [Prediction(case, case.predict(table)) for case in cases]


def held_out(cases: Sequence[Case], key: Callable[[Case], str], fitted_only: bool = True) -> list[Prediction]:
    """Refit without each key's rows and predict them. Cases that are evaluation-only are left out
    when `fitted_only` (they were never in the fit)."""
    pool = [case for case in cases if case.fitted or not fitted_only]
    out: list[Prediction] = []
    for value in sorted({key(case) for case in pool}):
        train = [case for case in cases if case.fitted and key(case) != value]
        table = fit(train).table
        out += [Prediction(case, case.predict(table)) for case in pool if key(case) == value]
    return out


def summarise(predictions: Sequence[Prediction], fitted_only: bool = True) -> list[MetricSummary]:
    by_metric: dict[Metric, list[float]] = {}
    for prediction in predictions:
        if fitted_only and not prediction.case.fitted:
            continue
        error = abs(prediction.error_pct)
        by_metric.setdefault(prediction.case.metric, []).append(error if math.isfinite(error) else math.inf)
    return [
        MetricSummary(metric, len(by_metric[metric]), statistics.median(by_metric[metric]))
        for metric in Metric
        if metric in by_metric
    ]
