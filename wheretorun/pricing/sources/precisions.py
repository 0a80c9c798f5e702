"""Which precisions each chip family runs: `data/precision_support.csv` (ours, every row sourced).

One row per chip family (`family` of `accelerator_architecture.csv`): `native` lists the arithmetic
the chip has units for (training and W8A8 serving compute in it), `served` the weight precisions
the serving engines run on it (vLLM's supported-hardware table), weight-only formats included.
Group names stand for their formats (`gptq`: every GPTQ variant, `gguf`: every GGUF mixture).
The table is a fact of the architecture shipped with the code, like the alias rules: the snapshot
attaches it to each accelerator's spec by family. A family without a row has no stated support, and
nothing is checked for it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path

from wheretorun.engine import InvalidSpec, Precision, PrecisionSupport, parse_precision_list
from wheretorun.pricing.sources._text import csv_rows, read_text
from wheretorun.pricing.sources.manifest import DATA_DIR

__all__ = ["PRECISION_FILE", "precision_support_table", "read_precision_support"]

PRECISION_FILE = "precision_support.csv"
# Served formats that multiply in their own arithmetic (W16A16, W8A8, W4A4), so the chip must have it.
_COMPUTED_AS_STORED = frozenset(
    {Precision.FP32, Precision.FP16, Precision.BF16, Precision.INT8, Precision.FP4}
)


def read_precision_support(path: Path) -> dict[str, PrecisionSupport]:
    """Every family's support; a malformed row (unknown precision, no source, served formats that
    need arithmetic the chip lacks) raises ValueError naming its line."""
    table: dict[str, PrecisionSupport] = {}
    for number, row in enumerate(csv_rows(read_text(path)), start=2):
        where = f"{path.name} line {number}"
        family = row["family"]
        if not family or family in table:
            raise ValueError(f"{where}: family {family!r} is empty or repeated")
        if not row["source"]:
            raise ValueError(f"{where}: a row needs its source")
        try:
            native = parse_precision_list(row["native"], "native")
            served = parse_precision_list(row["served"], "served")
        except InvalidSpec as error:
            raise ValueError(f"{where}: {error.field}: {error.reason}") from error
        lacking = (served & _COMPUTED_AS_STORED) - native
        if lacking:
            raise ValueError(f"{where}: serves {sorted(p.value for p in lacking)} without native arithmetic")
        table[family] = PrecisionSupport(family=family, native=native, served=served, source=row["source"])
    return table


@functools.cache
def precision_support_table(data_dir: Path = DATA_DIR) -> Mapping[str, PrecisionSupport]:
    """The shipped table, read once per process."""
    return read_precision_support(data_dir / PRECISION_FILE)
