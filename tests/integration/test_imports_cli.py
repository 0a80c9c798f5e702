"""The command line: `wheretorun prices import` and `wheretorun keys create|list|revoke`, run
in-process against a database of their own (SQLite file or PostgreSQL schema)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from tests.conftest import POSTGRES_URL, drop_postgres_schema, make_postgres_engine
from tests.import_support import edit_rows, scaled, shipped_text
from wheretorun.cli import app
from wheretorun.db import create_db_engine, make_session_factory
from wheretorun.security import ApiKey, AuditEntry, authenticate
from wheretorun.settings import get_settings

runner = CliRunner()


@pytest.fixture(scope="module")
def database_url(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('cli') / 'catalog.db'}"
        return
    schema = f"cli_{uuid.uuid4().hex[:8]}"
    make_postgres_engine(schema).dispose()
    yield f"{POSTGRES_URL}?options=-csearch_path%3D{schema}"
    drop_postgres_schema(schema)


@pytest.fixture
def cli(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[CliRunner]:
    monkeypatch.setenv("DATABASE_URL", database_url)
    get_settings.cache_clear()
    yield runner
    get_settings.cache_clear()


def invoke(cli: CliRunner, *args: str) -> tuple[int, str]:
    result = cli.invoke(app, list(args))
    return result.exit_code, result.output


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_keys_are_created_listed_and_revoked(cli: CliRunner, database_url: str) -> None:
    code, output = invoke(cli, "keys", "create", "--scope", "write", "--name", "ci-importer")
    assert code == 0, output
    token = output.strip().splitlines()[-1]
    assert token.startswith("wtr_")
    engine = create_db_engine(get_settings().resolved_database_url())
    with make_session_factory(engine)() as session:
        key = session.scalars(select(ApiKey).where(ApiKey.name == "ci-importer")).one()
        assert token not in {key.token_sha256, key.prefix}
        assert authenticate(session, token).key_id == key.id
    code, output = invoke(cli, "keys", "list")
    assert code == 0
    assert "ci-importer" in output
    assert token not in output
    assert token[:12] in output
    assert invoke(cli, "keys", "revoke", str(key.id))[0] == 0
    with make_session_factory(engine)() as session:
        assert session.get(ApiKey, key.id).revoked_at is not None  # type: ignore[union-attr]
        actions = session.scalars(select(AuditEntry.action).where(AuditEntry.target == f"key:{key.id}")).all()
        assert sorted(actions) == ["key.create", "key.revoke"]
    engine.dispose()
    assert invoke(cli, "keys", "revoke", "999999")[0] == 1


def test_prices_import_shows_the_diff_and_applies(cli: CliRunner, tmp_path: Path) -> None:
    path = write(tmp_path, "nebius_vms.csv", edit_rows(shipped_text("nebius"), scaled("Price", "1.07")))
    code, output = invoke(
        cli, "prices", "import", "--format", "skypilot", "--provider", "nebius", "--file", path, "--dry-run"
    )
    assert code == 0, output
    assert "dry_run" in output
    assert "+7.00%" in output
    code, output = invoke(
        cli, "prices", "import", "--format", "skypilot", "--provider", "nebius", "--file", path
    )
    assert code == 0, output
    assert "applied" in output
    assert "catalog version" in output
    code, output = invoke(
        cli, "prices", "import", "--format", "skypilot", "--provider", "nebius", "--file", path
    )
    assert (code, "unchanged" in output) == (0, True)


def test_a_held_import_exits_3_and_a_malformed_file_exits_2(cli: CliRunner, tmp_path: Path) -> None:
    crash = write(tmp_path, "crash.csv", edit_rows(shipped_text("lambda"), scaled("Price", "0.01")))
    code, output = invoke(
        cli, "prices", "import", "--format", "skypilot", "--provider", "lambda", "--file", crash
    )
    assert code == 3, output
    assert "held for review" in output
    assert "price_drop" in output
    broken = write(tmp_path, "broken.csv", shipped_text("lambda").replace("4.4", "-4.4", 1))
    code, output = invoke(
        cli, "prices", "import", "--format", "skypilot", "--provider", "lambda", "--file", broken
    )
    assert code == 2, output
    assert "negative value -4.4" in output
    code, output = invoke(cli, "prices", "import", "--format", "litellm")
    assert code == 2
    assert "exactly one of --file and --url" in output
