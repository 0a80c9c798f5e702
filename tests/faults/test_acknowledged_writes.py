"""An acknowledged write is committed, on SQLite and on PostgreSQL.

* A server killed with SIGKILL right after answering 201 still has the scenario after a restart
  (the session commits before the response is sent, not after).
* A GET sent right after the 201 finds the scenario.
* A commit the database refuses (a constraint checked only at COMMIT) is answered with a 500
  problem, no id, and leaves no row and no audit entry.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, select, text
from sqlalchemy.orm import Session

from tests.api.test_scenarios_api import BODY
from tests.import_support import assert_problem
from tests.live_server import LiveServer, ServedDatabase, live_server, served_database
from wheretorun.api.app import create_app
from wheretorun.api.inprocess import InProcessClient
from wheretorun.scenarios.models import ScenarioRecord
from wheretorun.security import AuditEntry
from wheretorun.settings import Settings

pytestmark = pytest.mark.faults
KILLS = 2  # servers killed, each right after one acknowledged create
READ_AFTER_WRITE = 40


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServedDatabase]:
    with served_database(request.param, tmp_path) as served:
        yield served


def _named(label: str) -> dict[str, Any]:
    return {**BODY, "name": f"{label} {uuid.uuid4().hex[:12]}"}


def _names(engine: Engine, prefix: str) -> list[str]:
    with Session(engine) as session:
        query = select(ScenarioRecord.name).where(ScenarioRecord.name.startswith(prefix))
        return list(session.scalars(query))


def test_a_scenario_acknowledged_before_kill_9_is_there_after_a_restart(
    database: ServedDatabase, tmp_path: Path
) -> None:
    acknowledged: dict[int, str] = {}
    for round_number in range(KILLS):
        server = LiveServer(database.url, tmp_path / f"server-{round_number}.log").start()
        try:
            body = _named("killed")
            response = httpx.post(f"{server.url}/v1/scenarios", json=body, headers=database.auth, timeout=30)
            assert response.status_code == 201, response.text
        finally:
            server.kill()  # at once after the 201: no graceful shutdown
        acknowledged[response.json()["id"]] = body["name"]
    with live_server(database.url, tmp_path / "restarted.log") as server:
        for scenario_id, name in acknowledged.items():
            found = httpx.get(f"{server.url}/v1/scenarios/{scenario_id}", timeout=30)
            assert found.status_code == 200, f"scenario {scenario_id} was acknowledged and then lost"
            assert found.json()["name"] == name
    assert len(acknowledged) == KILLS, "every create got its own id (none was reused)"


def test_a_read_right_after_an_acknowledged_create_finds_it(database: ServedDatabase, tmp_path: Path) -> None:
    with live_server(database.url, tmp_path / "server.log") as server, httpx.Client(timeout=30) as http:
        missing = []
        for _ in range(READ_AFTER_WRITE):
            created = http.post(
                f"{server.url}/v1/scenarios", json=_named("read-after"), headers=database.auth
            )
            assert created.status_code == 201, created.text
            if http.get(f"{server.url}{created.headers['location']}").status_code != 200:
                missing.append(created.json()["id"])
    assert missing == []


# --- a commit the database refuses ------------------------------------------------------------------

REFUSED = "commit-refused"
_REFUSE_AT_COMMIT = {
    # A constraint trigger that is deferred runs at COMMIT, and raises there.
    "postgresql": [
        """CREATE FUNCTION refuse_commit() RETURNS trigger LANGUAGE plpgsql AS $$
           BEGIN RAISE EXCEPTION 'refused at commit' USING ERRCODE = 'integrity_constraint_violation';
           END $$""",
        f"""CREATE CONSTRAINT TRIGGER refuse_scenarios AFTER INSERT ON scenarios
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
            WHEN (NEW.name LIKE '{REFUSED}%') EXECUTE FUNCTION refuse_commit()""",
    ],
    # A deferred foreign key is checked at COMMIT; the trigger inserts a row that breaks it.
    "sqlite": [
        "CREATE TABLE refusal_parents (id INTEGER PRIMARY KEY)",
        """CREATE TABLE commit_refusals (
               parent_id INTEGER REFERENCES refusal_parents (id) DEFERRABLE INITIALLY DEFERRED)""",
        f"""CREATE TRIGGER refuse_scenarios AFTER INSERT ON scenarios
            WHEN NEW.name LIKE '{REFUSED}%'
            BEGIN INSERT INTO commit_refusals (parent_id) VALUES (-1); END""",
    ],
}


@pytest.fixture
def refusing_database(database: ServedDatabase) -> ServedDatabase:
    with database.engine.begin() as connection:
        for statement in _REFUSE_AT_COMMIT[database.engine.dialect.name]:
            connection.execute(text(statement))
    return database


def test_a_commit_the_database_refuses_is_a_500_with_no_id_and_no_row(
    refusing_database: ServedDatabase,
) -> None:
    app = create_app(Settings(auto_seed=False), engine=refusing_database.engine)
    body = _named(REFUSED)
    with InProcessClient(app, headers=refusing_database.auth) as client:
        response = client.post("/v1/scenarios", json=body)
        problem = assert_problem(response, 500)
        assert "nothing was saved" in problem["detail"]
        assert "id" not in problem
        assert "location" not in response.headers
        assert client.get("/v1/scenarios", params={"q": REFUSED}).json()["total"] == 0
        # The same request without the refusing name goes through: the refusal was the commit's.
        assert client.post("/v1/scenarios", json=_named("accepted")).status_code == 201
    assert _names(refusing_database.engine, REFUSED) == []
    with Session(refusing_database.engine) as session:
        audited = session.scalars(select(AuditEntry.detail).where(AuditEntry.action == "scenario.create"))
        assert all(not detail["name"].startswith(REFUSED) for detail in audited)
