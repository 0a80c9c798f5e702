"""Read the calibration CSVs shipped in `wheretorun/pricing/data/calibration/`.

They are copies of `../shared/calibration/` (see its README for sources and caveats). This module
is the only place in the calibration package that touches files.
"""

from __future__ import annotations

import csv
from pathlib import Path

__all__ = ["Row", "calibration_dir", "read_rows"]

Row = dict[str, str]


def calibration_dir() -> Path:
    """The shipped CSV folder, found next to this package (importing `wheretorun.pricing` would
    pull in the database layer, which calibration does not need)."""
    return Path(__file__).resolve().parents[1] / "pricing" / "data" / "calibration"


def read_rows(name: str, directory: Path | None = None) -> list[Row]:
    """All rows of `name` (e.g. "gpus.csv") as dicts of stripped strings."""
    path = (directory or calibration_dir()) / name
    with path.open(newline="", encoding="utf-8") as handle:
        return [{key: (value or "").strip() for key, value in row.items()} for row in csv.DictReader(handle)]
