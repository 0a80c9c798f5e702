"""Predicted vs measured on every calibration row the engine can express, and the error summary.

    .venv/bin/python bench/accuracy.py            # per-row table + summary
    .venv/bin/python bench/accuracy.py --summary  # summary only
    .venv/bin/python bench/accuracy.py --markdown # summary as a markdown table (for the README)

In-sample: factors fitted on all rows (the shipped `efficiency_data.py`). Held out: refit without
one accelerator's rows (serving) or one model's / one accelerator family's rows (training) and
predict them, to show how the same formulas do on hardware and models they were not fitted on.
Whole runs (published accelerator-hours of Llama 2/3 pre-training, one model each): the
whole-run efficiency is refitted without each run and predicts it (the held-out model column).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from wheretorun.calibration import Case, Metric, Prediction, build_cases, fit, held_out, in_sample, summarise  # noqa: E402
from wheretorun.calibration.fit import whole_run_held_out  # noqa: E402
from wheretorun.calibration.report import TARGETS  # noqa: E402

SERVING = (Metric.DECODE_BATCH1, Metric.HIGH_BATCH, Metric.TTFT)


def _by_gpu(case: Case) -> str:
    return case.gpu


def _by_model(case: Case) -> str:
    return case.model


def _by_family(case: Case) -> str:
    return case.group.split("/")[1]


def _rows(predictions: Sequence[Prediction]) -> None:
    columns = ("row", "metric", "model", "accelerator", "measured", "predicted", "error")
    print("{:7} {:31} {:16} {:24} {:>12} {:>12} {:>7}".format(*columns))
    for p in predictions:
        c = p.case
        flag = "" if c.fitted else "  [evaluation only]"
        error = f"{p.error_pct:+.0f}%" if math.isfinite(p.error_pct) else "n/a"
        print(
            f"{c.row_id:7} {c.metric.value:31} {c.model[:16]:16} {c.gpu[:24]:24} "
            f"{c.measured:12.4g} {p.predicted:12.4g} {error:>7}{flag}"
        )
        for assumption in c.assumptions:
            print(f"{'':8}- {assumption}")


def _medians(predictions: Sequence[Prediction]) -> dict[Metric, tuple[int, float]]:
    return {s.metric: (s.rows, s.median_abs_pct) for s in summarise(predictions)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--summary", action="store_true")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()

    cases, skipped = build_cases()
    table = fit(cases).table
    predictions = in_sample(cases, table)
    serving = [c for c in cases if c.metric in SERVING]
    training = [c for c in cases if c.metric == Metric.TRAINING_HOURS]
    runs = [c for c in cases if c.metric == Metric.WHOLE_RUN_HOURS]
    run_predictions = whole_run_held_out(runs, table)
    held_runs = [Prediction(case, run_predictions[case.row_id]) for case in runs]
    held = {
        "gpu": _medians(held_out(serving, _by_gpu)),
        "model": _medians(held_out(serving, _by_model) + held_out(training, _by_model) + held_runs),
        "family": _medians(held_out(training, _by_family)),
    }
    in_sample_medians = _medians(predictions)

    if not args.summary and not args.markdown:
        _rows(predictions)
        print(f"\nrows not expressed ({len(skipped)}):")
        for skip in skipped:
            print(f"  {skip.row_id}: {skip.reason}")

    def cell(kind: str, metric: Metric) -> str:
        if metric == Metric.WEIGHTS_GB:
            return f"{in_sample_medians[metric][1]:.1f}% (no fit)"
        value = held[kind].get(metric)
        return f"{value[1]:.1f}%" if value else "-"

    header = ("metric", "rows", "in-sample", "held-out GPU", "held-out model", "held-out family", "target")
    lines = []
    for metric in Metric:
        rows, median = in_sample_medians[metric]
        lines.append(
            (
                metric.value,
                str(rows),
                f"{median:.1f}%",
                cell("gpu", metric),
                cell("model", metric),
                cell("family", metric),
                f"<= {TARGETS[metric]:.0f}%",
            )
        )
    evaluation = [p for p in predictions if not p.case.fitted]
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for line in lines:
            print("| " + " | ".join(line) + " |")
    else:
        print("\nmedian absolute % error")
        layout = "{:31} {:>5} {:>10} {:>16} {:>16} {:>16} {:>8}"
        print(layout.format(*header))
        for line in lines:
            print(layout.format(*line))
    print(
        "\nwhole runs, each held out of the whole-run fit: "
        + ", ".join(f"{p.case.row_id} {p.case.model} {p.error_pct:+.0f}%" for p in held_runs)
    )
    if table.whole_run is not None:
        run = table.whole_run
        print(f"whole-run efficiency at scale: {run.efficiency_at_full_scale:.3f} ({run.provenance})")
    if evaluation:
        errors = sorted(abs(p.error_pct) for p in evaluation)
        median = (
            errors[len(errors) // 2]
            if len(errors) % 2
            else sum(errors[len(errors) // 2 - 1 : len(errors) // 2 + 1]) / 2
        )
        print(
            f"\nevaluation only (published whole-run GPU-hours incl. failures, count unknown): "
            f"{len(evaluation)} rows, median abs error {median:.0f}% "
            f"({', '.join(f'{p.case.row_id} {p.error_pct:+.0f}%' for p in evaluation)})"
        )
    print(f"efficiency version: {table.version}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
