"""Concurrent conditional writes against a real server (its thread pool, one database session per
request), on SQLite and on PostgreSQL: of N writers sending the same `If-Match`, exactly one wins and
every other one gets 412 (or 404 once a DELETE has won), never a 500 or a 503.
"""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from tests.api.test_scenarios_api import BODY
from tests.live_server import LiveServer, ServedDatabase, live_server, served_database
from wheretorun.scenarios.models import ScenarioVersion

pytestmark = pytest.mark.faults
WRITERS = 8
ROUNDS = 3


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ServedDatabase, LiveServer]]:
    directory = tmp_path_factory.mktemp("conditional")
    with (
        served_database(request.param, directory) as database,
        live_server(database.url, directory / "server.log") as server,
    ):
        yield database, server


def _create(http: httpx.Client, database: ServedDatabase) -> int:
    body = {**BODY, "name": f"contested {uuid.uuid4().hex[:10]}"}
    response = http.post("/v1/scenarios", json=body, headers=database.auth)
    assert response.status_code == 201, response.text
    scenario_id: int = response.json()["id"]
    return scenario_id


def _at_once(server: LiveServer, requests: list[tuple[str, str, dict[str, Any]]]) -> list[httpx.Response]:
    """Send every request from its own thread, released together by a barrier."""
    barrier = threading.Barrier(len(requests))

    def send(method: str, path: str, options: dict[str, Any]) -> httpx.Response:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            http.get("/healthz")  # connect first, so the barrier releases requests, not handshakes
            barrier.wait()
            return http.request(method, path, **options)

    with ThreadPoolExecutor(max_workers=len(requests)) as pool:
        return list(pool.map(lambda request: send(*request), requests))


def _statuses(responses: list[httpx.Response]) -> Counter[int]:
    for response in responses:
        if response.status_code >= 400:
            assert response.headers["content-type"].startswith("application/problem+json"), response.text
    return Counter(response.status_code for response in responses)


def test_of_concurrent_updates_with_the_same_if_match_exactly_one_wins(
    served: tuple[ServedDatabase, LiveServer],
) -> None:
    database, server = served
    with httpx.Client(base_url=server.url, timeout=60) as http:
        for _ in range(ROUNDS):
            scenario_id = _create(http, database)
            options = {"json": BODY, "headers": {**database.auth, "If-Match": '"v1"'}}
            responses = _at_once(server, [("PUT", f"/v1/scenarios/{scenario_id}", options)] * WRITERS)
            assert _statuses(responses) == {200: 1, 412: WRITERS - 1}, [r.text for r in responses]
            assert http.get(f"/v1/scenarios/{scenario_id}").json()["version"] == 2
            with Session(database.engine) as session:
                count = select(func.count()).where(ScenarioVersion.scenario_id == scenario_id)
                assert session.scalar(count) == 2, "one new version, not one per writer"


def test_of_concurrent_updates_and_deletes_with_the_same_if_match_exactly_one_wins(
    served: tuple[ServedDatabase, LiveServer],
) -> None:
    database, server = served
    with httpx.Client(base_url=server.url, timeout=60) as http:
        for _ in range(ROUNDS):
            scenario_id = _create(http, database)
            path = f"/v1/scenarios/{scenario_id}"
            headers = {**database.auth, "If-Match": '"v1"'}
            requests = [("PUT", path, {"json": BODY, "headers": headers})] * (WRITERS // 2)
            requests += [("DELETE", path, {"headers": headers})] * (WRITERS // 2)
            responses = _at_once(server, requests)
            statuses = _statuses(responses)
            winners = [r for r in responses if r.status_code < 300]
            assert len(winners) == 1, statuses
            deleted = winners[0].request.method == "DELETE"
            # After a DELETE won, a later writer finds no scenario (404, RFC 9110 13.2.1); otherwise 412.
            assert set(statuses) - {winners[0].status_code} <= ({412, 404} if deleted else {412}), statuses
            final = http.get(path)
            assert final.status_code == (404 if deleted else 200)
            if not deleted:
                assert final.json()["version"] == 2


def test_concurrent_creates_all_succeed_without_busy_errors(
    served: tuple[ServedDatabase, LiveServer],
) -> None:
    """Writers queue for SQLite's write lock instead of failing ("database is locked" is not a 503)."""
    database, server = served
    requests = [
        ("POST", "/v1/scenarios", {"json": {**BODY, "name": f"burst {n}"}, "headers": database.auth})
        for n in range(WRITERS * 2)
    ]
    responses = _at_once(server, requests)
    assert _statuses(responses) == {201: WRITERS * 2}, [r.text for r in responses if r.status_code != 201]
