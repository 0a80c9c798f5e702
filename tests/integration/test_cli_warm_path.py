"""The CLI's warm path: a snapshot found by the SQLite file's stamp answers without the database.

It must give the answer the database path gives, never a stale one (a write changes the stamp), and
it must not import SQLAlchemy (the point of it: ~0.4 s of the CLI's wall time).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import sqlite3
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from wheretorun import cli_recommend
from wheretorun.db import create_db_engine, make_session_factory
from wheretorun.pricing.bootstrap import prepare_database
from wheretorun.pricing.overrides import OverrideSpec, create_override, end_override
from wheretorun.pricing.snapshot_files import SnapshotFiles, sqlite_catalog_stamp
from wheretorun.security import Actor
from wheretorun.services.recommendation_reads import RecommendationRead
from wheretorun.services.recommendation_schemas import RecommendationCreate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def catalog_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A seeded SQLite catalog, and a snapshot cache of this test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = tmp_path / "catalog.db"
    engine = create_db_engine(f"sqlite:///{path}")
    prepare_database(engine)
    engine.dispose()
    return path


def _request(example: str, **changes: object) -> RecommendationCreate:
    body = yaml.safe_load((EXAMPLES / f"{example}.yaml").read_text(encoding="utf-8"))
    return RecommendationCreate.model_validate({**body, **changes})


def _forbid_the_database(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object) -> RecommendationRead:
        raise AssertionError("the warm path went to the database")

    monkeypatch.setattr(cli_recommend, "_answer_from_database", refuse)


@pytest.mark.parametrize("example", sorted(path.stem for path in EXAMPLES.glob("*.yaml")))
def test_the_stamped_snapshot_gives_the_database_paths_answer(
    catalog_file: Path, monkeypatch: pytest.MonkeyPatch, example: str
) -> None:
    url = f"sqlite:///{catalog_file}"
    request = _request(example)
    from_database = cli_recommend._answer(request, url)
    assert SnapshotFiles().load_stamped(sqlite_catalog_stamp(url) or ()) is not None
    _forbid_the_database(monkeypatch)
    from_stamp = cli_recommend._answer(request, url)
    assert from_stamp.options
    assert from_stamp.model_dump() == from_database.model_dump()


def test_a_request_that_needs_the_database_never_takes_the_warm_path(
    catalog_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{catalog_file}"
    cli_recommend._answer(_request("tiny-prototype"), url)  # stamps the snapshot of now
    _forbid_the_database(monkeypatch)
    by_alias = _request("tiny-prototype", constraints={"allowed_accelerators": ["H100"]})
    with pytest.raises(AssertionError, match="went to the database"):
        cli_recommend._answer(by_alias, url)  # an alias: resolved by the database only
    in_the_past = _request("tiny-prototype", as_of="2025-06-01T00:00:00Z")
    with pytest.raises(AssertionError, match="went to the database"):
        cli_recommend._answer(in_the_past, url)


def test_a_write_between_two_calls_is_seen_by_the_second(catalog_file: Path) -> None:
    url = f"sqlite:///{catalog_file}"
    request = _request("tiny-prototype")
    before = cli_recommend._answer(request, url)
    first = before.options[0]
    assert first.option == "hosted_api"
    engine = create_db_engine(url)
    with make_session_factory(engine).begin() as session:  # committed by another process, say
        provider = first.setup.provider or ""
        spec = OverrideSpec(applies_to="api_prices", provider=provider, reason="x", multiplier=Decimal(3))
        create_override(session, spec, Actor("cli:test"), dt.datetime.now(dt.UTC))
    engine.dispose()
    after = cli_recommend._answer(request, url)
    same_option = [option for option in after.options if option.label == first.label]
    assert not same_option or same_option[0].total_usd > first.total_usd
    assert (after.options[0].label, after.options[0].total_usd) != (first.label, first.total_usd)


def test_the_stamp_follows_what_keys_a_snapshot(catalog_file: Path) -> None:
    """Unchanged by a read; changed by a new override, by ending one (even one that ends before
    another override does), by a new catalog version and by a migration."""
    url = f"sqlite:///{catalog_file}"
    engine = create_db_engine(url)
    sessions = make_session_factory(engine)
    stamps = [sqlite_catalog_stamp(url)]
    with sessions() as session:  # a reader through our engine: WAL mode, foreign keys on
        session.connection().exec_driver_sql("SELECT count(*) FROM cloud_offers").one()
    assert sqlite_catalog_stamp(url) == stamps[0] is not None
    now = dt.datetime.now(dt.UTC)
    actor = Actor("cli:test")
    lasting = OverrideSpec(
        applies_to="cloud_offers",
        provider="gcp",
        reason="x",
        multiplier=Decimal(2),
        effective_to=now.replace(year=now.year + 1),
    )
    with sessions.begin() as session:
        create_override(session, lasting, actor, now)
        halved = create_override(
            session,
            OverrideSpec(applies_to="cloud_offers", provider="aws", reason="x", multiplier=Decimal("0.5")),
            actor,
            now,
        )
    stamps.append(sqlite_catalog_stamp(url))
    with sessions.begin() as session:
        end_override(session, halved.id, actor, now)
    stamps.append(sqlite_catalog_stamp(url))
    engine.dispose()
    with contextlib.closing(sqlite3.connect(catalog_file)) as connection, connection:
        connection.execute(
            "INSERT INTO catalog_versions (created_at, kind, description, sources) "
            "SELECT created_at, 'import', 'a newer version', sources FROM catalog_versions WHERE id = 1"
        )
    stamps.append(sqlite_catalog_stamp(url))
    with contextlib.closing(sqlite3.connect(catalog_file)) as connection, connection:
        connection.execute("UPDATE alembic_version SET version_num = 'an_older_one'")
    stamps.append(sqlite_catalog_stamp(url))
    assert len(set(stamps)) == len(stamps)


def test_no_stamp_where_there_is_no_sqlite_file(tmp_path: Path) -> None:
    assert sqlite_catalog_stamp("postgresql+psycopg://127.0.0.1:5432/test") is None
    assert sqlite_catalog_stamp("sqlite:///:memory:") is None
    assert sqlite_catalog_stamp(f"sqlite:///{tmp_path / 'absent.db'}") is None


def test_the_warm_cli_imports_no_sqlalchemy(catalog_file: Path) -> None:
    """In a new process, as a user runs it: the second call answers from the stamp."""
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{catalog_file}",
        "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"],
    }
    program = (
        "import sys\n"
        "from wheretorun.cli import app\n"
        "try:\n"
        f"    app(['recommend', {str(EXAMPLES / 'tiny-prototype.yaml')!r}, '--json'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('sqlalchemy' in sys.modules, file=sys.stderr)\n"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", program], env=env, capture_output=True, text=True, check=True, timeout=120
        )
        for _ in range(2)
    ]
    assert [run.stderr.strip() for run in runs] == ["True", "False"]
    assert json.loads(runs[0].stdout) == json.loads(runs[1].stdout)
