"""accelerator tensor peaks: FP16-accumulate rate column; vendor figures for GeForce and NVL parts

Adds `accelerators.fp16_accumulate_tflops` and brings the figures of an existing catalog to the
vendor figures of `pricing/data/accelerator_tensor_peaks.csv` (a new database is seeded from that
file directly, and these updates then find no rows). The figures are written out here, not read
from the file, so this revision does the same thing whatever later files say:

* GeForce RTX 4090 / 3090 / 3070 / 5090: the 16-bit (and FP8) tensor peaks with FP32 accumulation
  (NVIDIA Ada, Ampere GA102 and RTX Blackwell whitepapers); the FP16-accumulate rates they held move
  to the new column;
* H100 NVL, H200 NVL: dense peaks from NVIDIA's H100 / H200 product pages (sparse / 2).

Downgrade restores the previous figures and drops the column.

Revision ID: 0006
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0004"
branch_labels = None
depends_on = None

_FIGURES = ("bf16_tflops", "fp16_accumulate_tflops", "fp8_tflops", "int8_tops", "fp32_tflops")
_NOTE = (
    "tensor peaks corrected by migration 0006 "
    "(accelerator_tensor_peaks.csv: vendor whitepapers and product pages)"
)

# id -> (figures after, figures before); None = unknown
_CHANGES: dict[str, tuple[dict[str, float | None], dict[str, float | None]]] = {
    "rtx-4090": (
        {"bf16_tflops": 165.2, "fp16_accumulate_tflops": 330.3, "fp8_tflops": 330.3, "int8_tops": 660.6},
        {"bf16_tflops": 330.0, "fp16_accumulate_tflops": None, "fp8_tflops": 660.0, "int8_tops": 660.0},
    ),
    "rtx-3090": (
        {"bf16_tflops": 71.0, "fp16_accumulate_tflops": 142.0},
        {"bf16_tflops": 142.0, "fp16_accumulate_tflops": None},
    ),
    "rtx-3070": (
        {"bf16_tflops": 40.6, "fp16_accumulate_tflops": 81.3},
        {"bf16_tflops": 81.3, "fp16_accumulate_tflops": None},
    ),
    "rtx-5090": (
        {"bf16_tflops": 209.5, "fp16_accumulate_tflops": 419.0, "fp8_tflops": 419.0},
        {"bf16_tflops": 419.0, "fp16_accumulate_tflops": None, "fp8_tflops": 838.0},
    ),
    "h100-nvl": (
        {"bf16_tflops": 835.5, "fp8_tflops": 1670.5, "int8_tops": 1670.5, "fp32_tflops": 60.0},
        {"bf16_tflops": None, "fp8_tflops": None, "int8_tops": None, "fp32_tflops": None},
    ),
    "h200-nvl": (
        {"bf16_tflops": 835.5, "fp8_tflops": 1670.5, "int8_tops": 1670.5, "fp32_tflops": 60.0},
        {"bf16_tflops": None, "fp8_tflops": None, "int8_tops": None, "fp32_tflops": None},
    ),
}


def _accelerators() -> sa.TableClause:
    columns = [sa.column(name, sa.Float) for name in _FIGURES]
    return sa.table("accelerators", sa.column("id", sa.String), sa.column("spec_source", sa.Text), *columns)


def upgrade() -> None:
    with op.batch_alter_table("accelerators", schema=None) as batch_op:
        batch_op.add_column(sa.Column("fp16_accumulate_tflops", sa.Float(), nullable=True))
    table = _accelerators()
    for accelerator_id, (after, _) in _CHANGES.items():
        op.execute(
            table.update()
            .where(table.c.id == accelerator_id)
            .values(**after, spec_source=sa.func.coalesce(table.c.spec_source, "") + f" | {_NOTE}")
        )


def downgrade() -> None:
    table = _accelerators()
    for accelerator_id, (_, before) in _CHANGES.items():
        values = {name: value for name, value in before.items() if name != "fp16_accumulate_tflops"}
        op.execute(
            table.update()
            .where(table.c.id == accelerator_id)
            .values(**values, spec_source=sa.func.replace(table.c.spec_source, f" | {_NOTE}", ""))
        )
    with op.batch_alter_table("accelerators", schema=None) as batch_op:
        batch_op.drop_column("fp16_accumulate_tflops")
