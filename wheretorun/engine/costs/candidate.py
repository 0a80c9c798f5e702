"""A costed candidate as the cost models build it: float dollars and its breakdown lines.

`total_usd` is the sum of the lines, so a breakdown always adds up to its total. `reprice`
re-sizes and re-prices the same configuration at another volume (used by the break-even
search); it is None where that makes no sense. `repriced_total_usd`, where a cost model gives
it, is the same total computed from the same cost lines without the plan around them.

A `PricedCandidate` is a serving candidate known by its total, label and setup only: what the
budgets, the ranking, the de-duplication and the folding read. Its `CostedCandidate` (the plan:
lines with notes, risks, facts, the price's source) is written by `written()` for the few that the
answer shows; `CostedCandidate.written()` is the plan itself, so the recommender ranks both alike.

These three classes are read-only by convention, not `frozen`: a frozen dataclass's `__init__`
sets each field through `object.__setattr__`, ~1.25K instructions a field against ~0.1K for a
plain one (callgrind, 2026-12-05), and the 8B prototype builds 80 priced candidates, 61 lines
and 14 plans a request (~1,150 fields). Each object belongs to one recommendation (no memo keeps
one between answers); nothing assigns a field after `__init__` but `PricedCandidate.written`,
which remembers its plan. Equality still compares the fields; they are not hashable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from wheretorun.engine.recommendation import Setup
from wheretorun.engine.workload import OptionKind

__all__ = ["FIXED_STAFF_LINES", "CostedCandidate", "Line", "PricedCandidate", "added", "lines_total"]

# Lines paid whatever the volume: the per-deployment staff minimum (costs/staff.py) and a local
# card's upkeep. A marginal cost leaves them out.
FIXED_STAFF_LINES = ("operations staff", "upkeep")


@dataclass(slots=True)
class Line:
    name: str
    usd: float
    note: str = ""


def added(amounts: Iterable[float]) -> float:
    """`amounts` added one after another, in their order: what `sum` gives on CPython 3.11, and
    what array code adding the same columns in the same order gives on any version (`sum`
    compensates its rounding from 3.12 on; costs/owned.OwnedFleet must match a sizing's total
    to the last bit)."""
    total = 0.0
    for amount in amounts:
        total += amount
    return total


def lines_total(lines: Iterable[Line]) -> float:
    """What cost lines add up to, in their order: a plan's total, and the totals the break-even
    search and the lead-time bridge compute from the same lines without the plan. `added`'s loop
    over the lines themselves: a generator for it costs ~1K instructions more a plan (2026-12-05)."""
    total = 0.0
    for line in lines:
        total += line.usd
    return total


@dataclass(slots=True)
class CostedCandidate:
    option: OptionKind
    label: str
    setup: Setup
    lines: tuple[Line, ...]
    months: float | None  # the horizon; None for a one-off batch job
    capex_usd: float = 0.0
    opex_usd_per_month: float = 0.0
    tokens: float | None = None  # tokens served over the horizon or the job
    runs: float | None = None  # training runs over the horizon
    utilisation: float | None = None
    ttft_ms: float | None = None
    tpot_ms: float | None = None
    headroom: float | None = None
    risks: tuple[str, ...] = ()
    facts: tuple[str, ...] = ()  # short statements the rationale is written from
    accelerator_hours_per_run: float | None = None  # training: one whole run
    wall_clock_hours_per_run: float | None = None
    setting: str | None = None  # training: the parallelism/memory setting chosen
    uncertainty: str | None = None  # how far off the estimate behind the cost may be
    # Cloud: the price paid per accelerator-hour in the plan's mode; owned/local: the all-in cost
    # per accelerator-hour of the horizon. With the source of the price behind it.
    usd_per_accelerator_hour: float | None = None
    price_source: str | None = None
    reprice: Callable[[float], CostedCandidate | None] | None = field(default=None, compare=False, repr=False)
    # `reprice(multiplier).total_usd` without building the plan (None: cannot serve that volume);
    # the break-even search asks for many volumes and reads only the totals
    repriced_total_usd: Callable[[float], float | None] | None = field(
        default=None, compare=False, repr=False
    )
    # the sum of the lines, added once: ranking and folding read it many times per candidate
    _total_usd: float = field(init=False, default=0.0, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._total_usd = lines_total(self.lines)

    @property
    def total_usd(self) -> float:
        return self._total_usd

    @property
    def usd_per_month(self) -> float | None:
        return None if self.months is None else self.total_usd / self.months

    @property
    def usd_per_million_tokens(self) -> float | None:
        if not self.tokens:
            return None
        return self.total_usd / self.tokens * 1e6

    @property
    def usd_per_run(self) -> float | None:
        if not self.runs:
            return None
        return self.total_usd / self.runs

    @property
    def marginal_usd(self) -> float:
        """The total without the fixed staff minimum: what more volume costs.

        The same additions as `total - sum(line_usd(name) for name in FIXED_STAFF_LINES)`, the
        lines read once rather than once a name."""
        fixed = dict.fromkeys(FIXED_STAFF_LINES, 0.0)
        for line in self.lines:
            if line.name in fixed:
                fixed[line.name] += line.usd
        return self._total_usd - sum(fixed.values())

    @property
    def marginal_usd_per_million_tokens(self) -> float | None:
        if not self.tokens:
            return None
        return self.marginal_usd / self.tokens * 1e6

    @property
    def marginal_usd_per_run(self) -> float | None:
        if not self.runs:
            return None
        return self.marginal_usd / self.runs

    def line_usd(self, name: str) -> float:
        return sum(line.usd for line in self.lines if line.name == name)

    def written(self) -> CostedCandidate:
        """The plan itself (a `PricedCandidate` writes its plan when asked)."""
        return self


@dataclass(slots=True)
class PricedCandidate:
    """A serving candidate priced to its total, its plan written only when the answer shows it.

    Hosted prices, cloud offers, owned servers and local cards are costed by the dozen per request
    and few of them reach the answer. Budgets, ranking, de-duplication and folding read only the
    fields here, so the cost lines with their notes, the risks and the facts (`CostedCandidate`)
    are written by `write` for the options shown, the best of each kind (the break-even re-prices
    them) and the hybrid's bases and bursts. `written()` writes the plan once (the same object
    thereafter, as the ranking compares by identity) and checks it is the candidate ranked."""

    option: OptionKind
    label: str
    setup: Setup
    total_usd: float
    months: float | None
    capex_usd: float
    write: Callable[[], CostedCandidate] = field(compare=False, repr=False)
    _plan: CostedCandidate | None = field(init=False, default=None, compare=False, repr=False)

    @property
    def usd_per_month(self) -> float | None:
        return None if self.months is None else self.total_usd / self.months

    def written(self) -> CostedCandidate:
        plan = self._plan
        if plan is None:
            plan = self.write()
            assert _ranked_fields(plan) == _ranked_fields(self), f"{self.label}: written unlike ranked"
            self._plan = plan
        return plan


def _ranked_fields(candidate: CostedCandidate | PricedCandidate) -> tuple[object, ...]:
    """What budgets, ranking, de-duplication and folding read of a candidate."""
    c = candidate
    return (c.option, c.label, c.setup, c.total_usd, c.months, c.capex_usd)
