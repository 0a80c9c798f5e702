"""The replica layout of each (accelerator, accelerators per instance or server, precision), or
why none serves, chosen once per capacity table.

A capacity table is remembered between requests and never changed
(capacity.serving_capacities), and a layout depends on nothing but the table and its key, so the
layouts chosen from the last few tables are remembered by the table's identity: a repeated
request, or one that differs only in volume, prices or constraints, looks them up. The memo
changes timing, never answers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from wheretorun.engine.capacity import CapacityTable, ReplicaCapacity
from wheretorun.engine.costs.cloud import Layout, choose_layout
from wheretorun.engine.costs.owned import choose_server_layout
from wheretorun.engine.memo import RecentResults
from wheretorun.engine.planning.offers import sizing_failure
from wheretorun.engine.precision import Precision
from wheretorun.engine.rules import hardware_spec
from wheretorun.engine.rules.rejection import Rejection

__all__ = ["clear_layout_memo", "instance_layouts", "server_layouts", "unsized"]

# (instance or server, accelerator id, accelerators per instance or server, precision)
_Key = tuple[str, str, int, Precision]
_Chooser = Callable[[CapacityTable, str, int, Precision], tuple[Layout | None, list[ReplicaCapacity]]]

_MEMO: RecentResults[dict[_Key, Layout | Rejection]] = RecentResults(kept=16)


def instance_layouts(
    capacities: CapacityTable, keys: Sequence[tuple[str, int, Precision]]
) -> list[Layout | Rejection]:
    """Cloud instances' layouts, one per (accelerator id, accelerators per instance, precision)
    key: the replica size that serves most per instance (costs/cloud.choose_layout), or why no
    size does."""
    return _layouts(capacities, "instance", keys)


def server_layouts(
    capacities: CapacityTable, keys: Sequence[tuple[str, int, Precision]]
) -> list[Layout | Rejection]:
    """Owned servers' layouts, one per (accelerator id, accelerators per server, precision) key:
    the replica size that divides the server and serves most (costs/owned.choose_server_layout),
    or why no size does."""
    return _layouts(capacities, "server", keys)


def unsized(considered: list[ReplicaCapacity], accelerator_id: str) -> Rejection:
    """Why no replica size was kept: the sizes tried (offers.sizing_failure), or no spec to try."""
    return sizing_failure(considered) if considered else hardware_spec.no_spec_to_size(accelerator_id)


def clear_layout_memo() -> None:
    """Forget the remembered layouts (the next request chooses them afresh)."""
    _MEMO.clear()


_CHOOSERS: dict[str, _Chooser] = {"instance": choose_layout, "server": choose_server_layout}


def _layouts(
    capacities: CapacityTable, kind: str, keys: Sequence[tuple[str, int, Precision]]
) -> list[Layout | Rejection]:
    """The layouts of `keys` from the ones chosen so far from `capacities`, choosing the others."""
    known = _MEMO.get((capacities,), None, dict)
    chooser = _CHOOSERS[kind]
    chosen: list[Layout | Rejection] = []
    for accelerator_id, accelerators, precision in keys:
        layout = known.get((kind, accelerator_id, accelerators, precision))
        if layout is None:
            found, considered = chooser(capacities, accelerator_id, accelerators, precision)
            layout = found if found is not None else unsized(considered, accelerator_id)
            known[(kind, accelerator_id, accelerators, precision)] = layout
        chosen.append(layout)
    return chosen
