"""Migration 0006 on a catalog seeded before it (SQLite and PostgreSQL): the GeForce and NVL rows get
the vendor tensor peaks, the FP16-accumulate rate moves to its own column, and a downgrade puts the
old figures back."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command
from sqlalchemy import inspect

from wheretorun.db import alembic_config

BEFORE = "0006-1"  # the schema this revision starts from, wherever it sits in the chain
ACCELERATORS = sa.table(
    "accelerators",
    sa.column("id", sa.String),
    sa.column("name", sa.String),
    sa.column("vendor", sa.String),
    sa.column("kind", sa.String),
    sa.column("spec_source", sa.Text),
    sa.column("bf16_tflops", sa.Float),
    sa.column("fp8_tflops", sa.Float),
    sa.column("int8_tops", sa.Float),
    sa.column("fp32_tflops", sa.Float),
)
OLD_ROWS = [
    # as the seed wrote them before: calibration gpus.csv's FP16-accumulate 330 / 660 for the 4090
    {"id": "rtx-4090", "bf16_tflops": 330.0, "fp8_tflops": 660.0, "int8_tops": 660.0, "fp32_tflops": 82.6},
    # no compute figure at all for the NVL card
    {"id": "h200-nvl", "bf16_tflops": None, "fp8_tflops": None, "int8_tops": None, "fp32_tflops": None},
    # a part the revision does not touch
    {"id": "h100-sxm", "bf16_tflops": 989.0, "fp8_tflops": 1979.0, "int8_tops": 1979.0, "fp32_tflops": 67.0},
]


def _rows(engine: sa.Engine) -> dict[str, dict[str, object]]:
    with engine.connect() as connection:
        result = connection.execute(sa.text("SELECT * FROM accelerators"))
        return {row["id"]: dict(row) for row in result.mappings()}


def test_existing_catalog_gets_vendor_peaks_and_downgrade_restores_them(  # type: ignore[no-untyped-def]
    backend: str, empty_engine_factory
) -> None:
    engine = empty_engine_factory(backend)
    config = alembic_config(engine)
    command.upgrade(config, BEFORE)
    with engine.begin() as connection:
        connection.execute(
            ACCELERATORS.insert(),
            [
                {**row, "name": row["id"], "vendor": "NVIDIA", "kind": "datacenter", "spec_source": "seed"}
                for row in OLD_ROWS
            ],
        )

    command.upgrade(config, "0006")
    upgraded = _rows(engine)
    assert upgraded["rtx-4090"]["bf16_tflops"] == 165.2
    assert upgraded["rtx-4090"]["fp16_accumulate_tflops"] == 330.3
    assert upgraded["rtx-4090"]["fp8_tflops"] == 330.3
    assert upgraded["h200-nvl"]["bf16_tflops"] == 835.5
    assert upgraded["h200-nvl"]["fp32_tflops"] == 60.0
    assert "migration 0006" in str(upgraded["h200-nvl"]["spec_source"])
    assert upgraded["h100-sxm"]["bf16_tflops"] == 989.0
    assert upgraded["h100-sxm"]["spec_source"] == "seed"

    command.downgrade(config, BEFORE)
    assert "fp16_accumulate_tflops" not in {c["name"] for c in inspect(engine).get_columns("accelerators")}
    restored = _rows(engine)
    for row in OLD_ROWS:
        for name in ("bf16_tflops", "fp8_tflops", "int8_tops", "fp32_tflops"):
            assert restored[row["id"]][name] == row[name], (row["id"], name)
        assert restored[row["id"]]["spec_source"] == "seed"
