"""Same answers on the fast path: every example and a set of generated workloads, asked one after
another so the engine's memos (capacity tables, training sizings, catalog columns; engine/caches.py)
are reused, give exactly the answer each gives when computed afresh (every memo cleared), on the
real seeded catalog and one snapshot of it: the same ranked options with the same totals, the same
rejected groups and counts, the same candidates, the same everything."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy.orm import Session

from wheretorun.engine.caches import clear_caches
from wheretorun.pricing.snapshot import SnapshotCache
from wheretorun.services.recommendation_schemas import RecommendationCreate
from wheretorun.services.recommendations import recommend_for, run_recommendation
from wheretorun.services.snapshot_recommendations import clear_read_memos, recommendation_read

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _examples() -> list[dict[str, Any]]:
    return [yaml.safe_load(path.read_text(encoding="utf-8")) for path in sorted(EXAMPLES.glob("*.yaml"))]


def _generated() -> list[dict[str, Any]]:
    """Workloads that share a model and request shape but differ in volume, targets or options, so
    a cache keyed on too little would hand one of them another's capacities."""
    bodies: list[dict[str, Any]] = []
    for model, daily, (tokens_in, tokens_out), ttft in itertools.product(
        ("llama-3.1-8b", "llama-3.3-70b"), (300, 200_000), ((800, 200), (2000, 600)), (None, 400)
    ):
        workload: dict[str, Any] = {
            "kind": "inference",
            "models": [model],
            "requests_per_day": daily,
            "input_tokens": tokens_in,
            "output_tokens": tokens_out,
        }
        if ttft is not None:
            workload["ttft_ms"] = ttft
        bodies.append({"workload": workload})
    for deadline in (6, 48):
        bodies.append(
            {
                "workload": {
                    "kind": "batch",
                    "models": ["llama-3.1-8b"],
                    "input_tokens_total": 500_000_000,
                    "output_tokens_total": 50_000_000,
                    "deadline_hours": deadline,
                },
                "constraints": {"allowed_options": ["cloud", "hosted_api"]},
            }
        )
    # training runs of one model and method that differ in deadline, runs per year, tokens or
    # sequence length: a sizing remembered under too little would serve another's
    for method, tokens, deadline, runs, sequence in (
        ("lora", 1_500_000_000, 48, 12, 2048),
        ("lora", 1_500_000_000, 12, 12, 2048),
        ("lora", 1_500_000_000, 48, 200, 2048),
        ("lora", 6_000_000_000, 48, 12, 2048),
        ("lora", 1_500_000_000, 48, 12, 8192),
        ("qlora", 1_500_000_000, 48, 12, 2048),
    ):
        bodies.append(
            {
                "workload": {
                    "kind": "training",
                    "model": "llama-3.1-8b",
                    "method": method,
                    "tokens": tokens,
                    "deadline_hours": deadline,
                    "runs_per_year": runs,
                    "sequence_length": sequence,
                }
            }
        )
    return bodies


def _answer(session: Session, body: dict[str, Any], snapshots: SnapshotCache) -> dict[str, Any]:
    result = recommend_for(session, RecommendationCreate.model_validate(body), snapshots)
    return result.model_dump(mode="json")


def _afresh() -> None:
    """Nothing remembered: the engine's memos and the service's assumptions and reads."""
    clear_caches()
    clear_read_memos()


def test_the_fast_path_gives_the_same_answers(session: Session) -> None:
    bodies = _examples() + _generated()
    assert len(bodies) >= 20
    warm = SnapshotCache()
    _afresh()
    fast = [_answer(session, body, warm) for body in bodies + bodies]  # the second round hits
    for index, body in enumerate(bodies):
        _afresh()
        fresh = _answer(session, body, warm)
        assert fresh["options"], f"workload {index} has no option"
        for answer in (fast[index], fast[index + len(bodies)]):
            assert [(o["label"], o["total_usd"]) for o in answer["options"]] == [
                (o["label"], o["total_usd"]) for o in fresh["options"]
            ], f"workload {index}"
            assert answer["rejected"] == fresh["rejected"], f"workload {index}"
            assert answer["candidates_evaluated"] == fresh["candidates_evaluated"]
            assert answer == fresh, f"workload {index}"


@pytest.mark.parametrize("daily", [300, 200_000])
def test_a_cached_capacity_table_serves_another_volume(session: Session, daily: int) -> None:
    """A different volume reuses the table but must still be sized for its own traffic."""
    snapshots = SnapshotCache()
    body = {
        "workload": {
            "kind": "inference",
            "models": ["llama-3.1-8b"],
            "requests_per_day": daily,
            "input_tokens": 800,
            "output_tokens": 200,
        }
    }
    other = {**body, "workload": {**body["workload"], "requests_per_day": daily * 50}}
    _afresh()
    _answer(session, other, snapshots)  # fills the cache with the same request shape
    cached = _answer(session, body, snapshots)
    _afresh()
    assert cached == _answer(session, body, snapshots)


@pytest.mark.parametrize("limit", [1, 2, 5, 10, 100])
def test_writing_up_only_the_shown_options_changes_no_answer(session: Session, limit: int) -> None:
    """The engine writes up only the options an answer shows (and the best of each kind): for
    every example and generated workload, the first `limit` options, the best of each kind and
    the answer are exactly those of the whole shortlist."""
    snapshots = SnapshotCache()
    bodies = _examples() + _generated()
    cut = 0  # workloads whose whole shortlist is longer than the limit: the case under test
    for index, body in enumerate(bodies):
        request = RecommendationCreate.model_validate({**body, "limit": limit})
        whole = run_recommendation(
            session, request.workload, request.constraints, request.assumptions, None, snapshots
        )
        cut += len(whole.options) > limit
        limited = run_recommendation(
            session, request.workload, request.constraints, request.assumptions, None, snapshots, limit=limit
        )
        assert limited.options == whole.options[:limit], f"workload {index}"
        assert limited.best_per_option == whole.best_per_option, f"workload {index}"
        expected = recommendation_read(whole, limit).model_dump(mode="json")
        assert recommend_for(session, request, snapshots).model_dump(mode="json") == expected, (
            f"workload {index}"
        )
    assert cut >= (len(bodies) // 2 if limit <= 10 else 0)
