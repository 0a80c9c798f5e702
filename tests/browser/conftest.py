"""Browser tests of the planning page: a real uvicorn server on a free loopback port over a freshly
migrated and seeded database, and Debian's Chromium driven by Playwright for Python.

Chromium comes from Debian (`scripts/ensure-chromium` installs it when missing, as root; without it
the tests fail, they never skip). Playwright's own browser download is never used.

Screenshots of every view at 1280 and 390 px go to `$WHERETORUN_SCREENSHOT_DIR`, by default
`tests/browser/screenshots/` (ignored by git).
"""

from __future__ import annotations

import datetime as dt
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import POSTGRES_URL, _worker_tag, drop_postgres_schema, make_postgres_engine
from wheretorun.db import create_db_engine, make_session_factory
from wheretorun.security import Actor, Scope, create_api_key

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("WHERETORUN_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(os.environ.get("WHERETORUN_SCREENSHOT_DIR", ROOT / "tests" / "browser" / "screenshots"))
WIDE = {"width": 1280, "height": 900}
NARROW = {"width": 390, "height": 844}


@dataclass(frozen=True)
class Server:
    base_url: str
    api_key: str
    database: str
    scenario_id: int  # the API's example scenario, saved in two versions


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_ready(base_url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"uvicorn exited with {server.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{base_url}/readyz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"uvicorn not ready after 120 s:\n{log.read_text()[-3000:]}")


def _write_key(database_url: str) -> str:
    """An API key with write scope in the served database (as `wheretorun keys create` makes one)."""
    engine = create_db_engine(database_url)
    try:
        with make_session_factory(engine).begin() as session:
            actor = Actor(label="browser tests", key_id=None, scope=Scope.ADMIN)
            _key, token = create_api_key(session, "browser", Scope.WRITE, actor, dt.datetime.now(dt.UTC))
    finally:
        engine.dispose()
    return token


def _serve(database_url: str, workdir: Path) -> Iterator[Server]:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "WHERETORUN_LOG_LEVEL": "WARNING",
        "WHERETORUN_RATE_LIMIT_PER_MINUTE": "0",
    }
    port = _free_port()
    base_url = f"http://127.0.0.1:{port}"
    log = workdir / "uvicorn.log"
    command = [sys.executable, "-m", "uvicorn", "--factory", "wheretorun.api.app:create_app"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--no-access-log"]
    with log.open("wb") as output:
        server = subprocess.Popen(command, env=env, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT)
        try:
            _wait_ready(base_url, server, log)
            key = _write_key(database_url)
            scenario = _save_example_scenario(base_url, key)
            yield Server(base_url, key, database_url.split(":")[0], scenario["id"])
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def _save_example_scenario(base_url: str, key: str) -> dict[str, Any]:
    """The API's own example scenario (hosted API against owned servers), saved twice: two versions."""
    schema = httpx.get(f"{base_url}/openapi.json", timeout=30).json()["components"]["schemas"]
    example = schema["ScenarioCreate"]["examples"][0]
    headers = {"Authorization": f"Bearer {key}"}
    created = httpx.post(f"{base_url}/v1/scenarios", json=example, headers=headers, timeout=60)
    assert created.status_code == 201, created.text
    saved = created.json()
    faster = {**example, "traffic": {**example["traffic"], "growth_per_month": 0.08}, "note": "faster growth"}
    updated = httpx.put(
        f"{base_url}/v1/scenarios/{saved['id']}",
        json=faster,
        headers={**headers, "If-Match": f'"v{saved["version"]}"'},
        timeout=60,
    )
    assert updated.status_code == 200, updated.text
    result: dict[str, Any] = updated.json()
    return result


@pytest.fixture(scope="session")
def chromium_executable() -> str:
    """Debian's Chromium, installed by scripts/ensure-chromium when missing (never skipped)."""
    subprocess.run([str(ROOT / "scripts" / "ensure-chromium")], check=True, timeout=900)
    assert os.access(CHROMIUM, os.X_OK), f"{CHROMIUM} is not executable after scripts/ensure-chromium"
    return CHROMIUM


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """`wheretorun`'s app under uvicorn over a SQLite file migrated and seeded on its first start."""
    workdir = tmp_path_factory.mktemp("page-sqlite")
    yield from _serve(f"sqlite:///{workdir / 'catalog.db'}", workdir)


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The same over a fresh schema of the PostgreSQL server (migrated and seeded on start)."""
    schema = f"wtr_page_{_worker_tag()}"
    make_postgres_engine(schema).dispose()
    url = POSTGRES_URL.replace("postgresql+psycopg://", "postgresql://")
    url += ("&" if "?" in url else "?") + f"options=-csearch_path%3D{schema}"
    try:
        yield from _serve(url, tmp_path_factory.mktemp("page-postgres"))
    finally:
        drop_postgres_schema(schema)


@pytest.fixture(scope="module")
def browser(chromium_executable: str) -> Iterator[Any]:
    """Chromium for one test module. Playwright's sync API keeps an asyncio loop running on this
    thread while it is started, so it is stopped after each module: other tests in the same worker
    (the async client's) need to run their own loops."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium_executable, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def _note_blocked(text: str, errors: list[str]) -> None:
    if "Content Security Policy" in text:
        errors.append(text)


@pytest.fixture
def page(browser: Any, server: Server) -> Iterator[Any]:
    context = browser.new_context(viewport=WIDE, base_url=server.base_url, accept_downloads=True)
    context.set_default_timeout(30_000)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    # A blocked style or script is a bug of the page even when nothing else shows it.
    opened.on("console", lambda message: _note_blocked(message.text, errors))
    yield opened
    context.close()
    assert not errors, f"uncaught errors in the page: {errors}"


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


def shoot(page: Any, folder: Path, name: str) -> None:
    """Full-page screenshots at 1280 and 390 px wide, then back to 1280."""
    for size in (WIDE, NARROW):
        page.set_viewport_size(size)
        page.wait_for_timeout(150)
        page.screenshot(path=str(folder / f"{name}-{size['width']}.png"), full_page=True)
    page.set_viewport_size(WIDE)
