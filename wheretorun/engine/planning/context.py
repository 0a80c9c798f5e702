"""What one recommendation reads while it plans, and the book its rejections go to.

The rules that reject candidates live in engine/rules/, one module per rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.catalog import CatalogSnapshot
from wheretorun.engine.efficiency import EfficiencyTable
from wheretorun.engine.planning.rejections import RejectionBook
from wheretorun.engine.precision import Precision
from wheretorun.engine.workload import Constraints

__all__ = ["SERVING_PRECISIONS", "Context"]

# Weight precisions tried for self-hosted serving: 16-bit, the two 8-bit formats, 4-bit AWQ.
SERVING_PRECISIONS = (Precision.BF16, Precision.FP8, Precision.INT8, Precision.AWQ_INT4)


@dataclass(slots=True)
class Context:
    """Everything one recommendation reads, and the book its rejections go to."""

    constraints: Constraints
    assumptions: Assumptions
    snapshot: CatalogSnapshot
    efficiency: EfficiencyTable
    book: RejectionBook = field(default_factory=RejectionBook)
    notes: list[str] = field(default_factory=list)
