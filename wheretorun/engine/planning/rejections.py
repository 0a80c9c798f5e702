"""The rejected candidates, grouped by the rule that rejected them.

Candidates are counted, not kept: a full catalog rejects tens of thousands of (offer, precision,
pricing mode) rows, so each group keeps its count and its first few examples, in the
deterministic order the candidates were enumerated.
"""

from __future__ import annotations

from collections.abc import Callable

from wheretorun.engine.recommendation import RejectedGroup, RejectReason
from wheretorun.engine.rules.rejection import Rejection

__all__ = ["RejectionBook", "described"]

EXAMPLES_PER_GROUP = 3
# `RejectReason`'s members in their order, listed once: iterating an Enum class runs Python code
# for every member
_REASONS = tuple(RejectReason)


def described(rejection: Rejection, subject: str) -> str:
    """A rejection's example as the book keeps it: `subject: detail`."""
    return f"{subject}: {rejection.detail}"


class RejectionBook:
    """Collects rejections while one recommendation is computed (local to that call)."""

    def __init__(self) -> None:
        self._counts: dict[RejectReason, int] = {}
        self._examples: dict[RejectReason, list[str]] = {}

    def reject(self, reason: RejectReason, example: str, count: int = 1) -> None:
        """Count `count` candidates rejected by `reason`, keeping `example` if the group still
        wants examples (build costly text only when `wants_example`)."""
        if count <= 0:
            return
        self._counts[reason] = self._counts.get(reason, 0) + count
        examples = self._examples.setdefault(reason, [])
        if len(examples) < EXAMPLES_PER_GROUP:
            examples.append(example)

    def record(self, rejection: Rejection, subject: str, count: int = 1) -> None:
        """Count `count` candidates rejected by `rejection`, described as `subject: detail`."""
        self.reject(rejection.reason, described(rejection, subject), count)

    def add_count(self, reason: RejectReason, count: int) -> None:
        """Count `count` more candidates without an example."""
        if count > 0:
            self._counts[reason] = self._counts.get(reason, 0) + count
            self._examples.setdefault(reason, [])

    def reject_rows(self, reason: RejectReason, rows: int, example: Callable[[int], str]) -> None:
        """Count `rows` candidates; `example(i)` describes the i-th when an example is wanted."""
        taken = 0
        while taken < rows and self.wants_example(reason):
            self.reject(reason, example(taken))
            taken += 1
        self.add_count(reason, rows - taken)

    def merge(self, other: RejectionBook) -> None:
        """Count `other`'s rejections here, keeping its examples while a group still wants them:
        the same book as if they had been recorded here, in their order (a remembered step
        replays its rejections this way)."""
        for reason, count in other._counts.items():
            self._counts[reason] = self._counts.get(reason, 0) + count
            examples = self._examples.setdefault(reason, [])
            examples += other._examples[reason][: EXAMPLES_PER_GROUP - len(examples)]

    def wants_example(self, reason: RejectReason) -> bool:
        return len(self._examples.get(reason, ())) < EXAMPLES_PER_GROUP

    def count(self, reason: RejectReason) -> int:
        return self._counts.get(reason, 0)

    @property
    def total(self) -> int:
        return sum(self._counts.values())

    def groups(self) -> tuple[RejectedGroup, ...]:
        """Groups in the order of `RejectReason` (the order the rules apply in)."""
        return tuple(
            RejectedGroup(reason, self._counts[reason], tuple(self._examples[reason]))
            for reason in _REASONS
            if reason in self._counts
        )
