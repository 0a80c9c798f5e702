"""Estimates by catalog names, answered from memory once their specs are remembered for the
catalog's current state (`estimate_*_from_memory`: no SQL, no worker thread), give the answer the
database path gives, also after an override, an import or a new catalog version was committed.

The app is the server's: its sessions bound to an engine over an SQLite file of the test's own
(the shared test client binds sessions to one connection, where the in-memory path is never taken).
A cold app over the same file (a fresh `SnapshotCache`) is the oracle for "the answer is right".
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import Engine, event, text
from sqlalchemy.orm import Session

from tests.import_support import TEST_ACTOR, edit_rows, scaled, shipped_text
from wheretorun.api import deps
from wheretorun.api.app import create_app
from wheretorun.api.inprocess import InProcessClient
from wheretorun.pricing.imports import ImportSpec, import_content
from wheretorun.pricing.models import CatalogVersion
from wheretorun.pricing.overrides import OverrideSpec, create_override
from wheretorun.services.estimate_schemas import InferenceEstimateCreate
from wheretorun.services.estimates import estimate_inference_from_memory
from wheretorun.settings import Settings

INFERENCE = {"model": "llama-3.1-8b", "accelerator": "H100", "concurrency": 8}
TRAINING = {"model": "llama-3.1-8b", "accelerator": "A100-80GB", "accelerator_count": 8, "tokens": 1e10}


@dataclass
class Traced:
    """What the requests sent since `clear()` did: SQL statements run, worker-thread hops taken."""

    statements: list[str] = field(default_factory=list)
    hops: list[str] = field(default_factory=list)

    def clear(self) -> None:
        self.statements.clear()
        self.hops.clear()

    @property
    def from_memory(self) -> bool:
        return not self.statements and not self.hops


@dataclass
class Served:
    app: FastAPI
    client: InProcessClient
    engine: Engine
    traced: Traced

    def estimate(self, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        self.traced.clear()
        response = self.client.post(f"/v1/estimates/{kind}", json=body)
        assert response.status_code == 200, response.text
        answer: dict[str, Any] = response.json()
        return answer


def _counting(name: str, hops: list[str], real: Callable[..., Any]) -> Callable[..., Any]:
    async def hop(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        hops.append(f"{name}: {function.__qualname__}")
        return await real(function, *args, **kwargs)

    return hop


@pytest.fixture
def served(sqlite_file_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[Served]:
    app = create_app(sqlite_file_settings)
    engine: Engine = app.state.engine
    traced = Traced()

    def record(*args: Any) -> None:
        traced.statements.append(args[2])

    event.listen(engine, "before_cursor_execute", record)
    # the database path's and the session's worker-thread hops (`deps.memory_or_database`)
    monkeypatch.setattr(
        deps, "run_in_threadpool", _counting(deps.__name__, traced.hops, deps.run_in_threadpool)
    )
    try:
        with InProcessClient(app) as client:
            yield Served(app=app, client=client, engine=engine, traced=traced)
    finally:
        engine.dispose()


def cold_answer(settings: Settings, kind: str, body: dict[str, Any]) -> dict[str, Any]:
    """The answer of a new app over the same database: nothing remembered, all read."""
    app = create_app(settings)
    try:
        with InProcessClient(app) as client:
            response = client.post(f"/v1/estimates/{kind}", json=body)
    finally:
        app.state.engine.dispose()
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def answerable(served: Served, body: dict[str, Any]) -> bool:
    with served.app.state.session_factory() as session:
        answer = estimate_inference_from_memory(
            session, InferenceEstimateCreate(**body), served.app.state.snapshots
        )
        return answer is not None


@pytest.mark.parametrize(("kind", "body"), [("inference", INFERENCE), ("training", TRAINING)])
def test_a_repeated_estimate_is_answered_from_memory_with_the_same_body(
    served: Served, kind: str, body: dict[str, Any]
) -> None:
    first = served.estimate(kind, body)
    assert served.traced.statements  # the catalog read
    # the database path (the route's own function) in a worker thread
    assert any(f"{kind}.<locals>" in hop for hop in served.traced.hops), served.traced.hops
    repeated = served.estimate(kind, body)
    assert served.traced.from_memory, served.traced
    assert repeated == first
    assert served.estimate(kind, body) == first


def test_only_a_request_whose_names_are_all_remembered_is_answerable(served: Served) -> None:
    assert not answerable(served, INFERENCE)
    served.estimate("inference", INFERENCE)
    assert answerable(served, INFERENCE)
    assert not answerable(served, {**INFERENCE, "accelerator": "NVIDIA H100 SXM5 80GB"})  # another spelling
    drafted = {**INFERENCE, "speculative": {"draft_model": "llama-3.2-1b", "acceptance_rate": 0.7}}
    assert not answerable(served, drafted)  # the draft model is not remembered yet
    with_draft = served.estimate("inference", drafted)
    assert not served.traced.from_memory
    assert served.estimate("inference", drafted) == with_draft
    assert served.traced.from_memory
    inline = {**INFERENCE, "accelerator": {"name": "mine", **_inline_h100(served)}}
    assert answerable(served, inline)  # a spec sent inline needs no lookup


def _inline_h100(served: Served) -> dict[str, Any]:
    catalog = served.client.get("/v1/accelerators/H100").json()
    keys = ("memory_gb", "memory_bandwidth_gb_s", "family", "memory_kind", "bf16_tflops")
    return {key: catalog[key] for key in keys}


def test_an_alias_is_answered_like_the_id(served: Served) -> None:
    by_alias_body = {**INFERENCE, "accelerator": "NVIDIA H100 SXM5 80GB"}
    by_id = served.estimate("inference", {**INFERENCE, "accelerator": "h100-sxm"})
    by_alias = served.estimate("inference", by_alias_body)
    assert not served.traced.from_memory  # a new spelling is looked up
    assert served.estimate("inference", by_alias_body) == by_alias == by_id
    assert served.traced.from_memory


def test_an_unknown_name_is_a_422_every_time(served: Served) -> None:
    body = {**INFERENCE, "accelerator": "Quantum-9000"}
    for _ in range(2):
        served.traced.clear()
        response = served.client.post("/v1/estimates/inference", json=body)
        assert response.status_code == 422, response.text
        assert response.json()["errors"][0]["field"] == "body.accelerator"
        assert served.traced.statements  # looked up again


def commit_an_override(served: Served) -> None:
    with Session(served.engine) as session, session.begin():
        spec = OverrideSpec(applies_to="cloud_offers", provider="aws", reason="test", multiplier=Decimal("2"))
        create_override(session, spec, TEST_ACTOR, dt.datetime.now(dt.UTC))


def commit_an_import(served: Served) -> None:
    prices = edit_rows(shipped_text("nebius"), scaled("Price", "1.01")).encode()
    with Session(served.engine) as session, session.begin():
        run = import_content(session, ImportSpec("skypilot", "nebius"), prices, "nebius.csv", TEST_ACTOR)
        assert run.status == "applied"


@pytest.mark.parametrize("commit", [commit_an_override, commit_an_import])
def test_after_a_committed_catalog_change_the_answer_is_still_right(
    served: Served, sqlite_file_settings: Settings, commit: Callable[[Served], None]
) -> None:
    first = served.estimate("inference", INFERENCE)
    served.estimate("inference", INFERENCE)
    assert served.traced.from_memory
    commit(served)
    assert not answerable(served, INFERENCE)
    after = served.estimate("inference", INFERENCE)
    assert not served.traced.from_memory  # the catalog state was asked again
    assert after == first == cold_answer(sqlite_file_settings, "inference", INFERENCE)
    assert served.estimate("inference", INFERENCE) == first
    assert served.traced.from_memory


def test_a_changed_spec_in_a_new_catalog_version_is_answered_with(
    served: Served, sqlite_file_settings: Settings
) -> None:
    """The remembered spec is forgotten with the catalog state: a new version whose H100 has
    another memory size gives the new answer, not the remembered one."""
    first = served.estimate("inference", INFERENCE)
    served.estimate("inference", INFERENCE)
    assert served.traced.from_memory
    with Session(served.engine) as session, session.begin():
        session.execute(text("UPDATE accelerators SET memory_gb = 94 WHERE id = 'h100-sxm'"))
        session.add(
            CatalogVersion(created_at=dt.datetime.now(dt.UTC), kind="import", description="test", sources=[])
        )
    after = served.estimate("inference", INFERENCE)
    assert after["memory"]["available_gb"] != first["memory"]["available_gb"]
    assert after == cold_answer(sqlite_file_settings, "inference", INFERENCE)
    assert served.estimate("inference", INFERENCE) == after
    assert served.traced.from_memory
