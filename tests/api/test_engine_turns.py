"""`deps.in_engine_thread`: recommendations take turns, one at a time per app (worker process),
in a worker thread; the requests waiting their turn wait for the app's `engine_turns` limiter on
the event loop, not in threads.

Two CPU-bound recommendations in one process never ran in parallel (the GIL), only interleaved
every 5 ms, at 9-11% more CPU each (one uvicorn worker, wrk, 2026-12-05)."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from sqlalchemy import Engine

from wheretorun.api.app import create_app
from wheretorun.api.routers import recommendations as recommendations_router
from wheretorun.settings import Settings

BODY = yaml.safe_load((Path(__file__).resolve().parents[2] / "examples" / "tiny-prototype.yaml").read_text())


class _TrackedEngine:
    """Stands in for `recommendation_json_for`: holds its thread until released, counting how many
    run at once and on which threads."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.running = 0
        self.most_at_once = 0
        self.threads: set[int] = set()
        self.calls = 0

    def __call__(self, session: Any, body: Any, snapshots: Any) -> tuple[bytes, int]:
        with self.lock:
            self.running += 1
            self.calls += 1
            self.most_at_once = max(self.most_at_once, self.running)
            self.threads.add(threading.get_ident())
        self.release.wait(timeout=10)
        with self.lock:
            self.running -= 1
        return b"{}", 1  # the answer's JSON and the candidates evaluated


@pytest.mark.anyio
async def test_recommendations_take_turns_waiting_on_the_event_loop(
    seeded_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine_stand_in = _TrackedEngine()
    monkeypatch.setattr(recommendations_router.recommendations, "recommendation_json_for", engine_stand_in)
    # four handler slots: the turns, not the slots, are what keeps them apart
    app = create_app(Settings(auto_seed=False, max_concurrent_requests=4), engine=seeded_engine)
    turns = app.state.engine_turns
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        requests = [asyncio.create_task(client.post("/v1/recommendations", json=BODY)) for _ in range(4)]
        deadline = time.monotonic() + 5
        # until one has entered its thread (the limiter is taken before the thread starts) and
        # three wait; on a busy machine the first thread starts after the others queue
        while (turns.statistics().tasks_waiting, engine_stand_in.running) != (3, 1):
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(0.01)
        waiting, running = turns.statistics().tasks_waiting, engine_stand_in.running
        probe = await client.get("/healthz")
        engine_stand_in.release.set()
        answers = await asyncio.gather(*requests)
    assert (waiting, running) == (3, 1)  # one in its thread, three waiting for their turn
    assert [answer.status_code for answer in answers] == [200] * 4
    assert engine_stand_in.calls == 4
    assert engine_stand_in.most_at_once == 1
    assert threading.get_ident() not in engine_stand_in.threads  # never on the event loop's thread
    assert probe.status_code == 200
