"""Browser tests of the planning page: a real uvicorn server on a free loopback port over a freshly
migrated and seeded database, and Debian's Chromium driven by Playwright for Python.

Chromium comes from Debian (`scripts/ensure-chromium` installs it when missing, as root; without it
the tests fail, they never skip). Playwright's own browser download is never used.

Screenshots of every view at 1280 and 390 px go to `$WHERETORUN_SCREENSHOT_DIR`, by default
`tests/browser/screenshots/` (ignored by git).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.live_server import live_server, served_database

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


def _serve(kind: str, workdir: Path) -> Iterator[Server]:
    """A fresh seeded database of `kind` with a write key, served by uvicorn, with the API's example
    scenario saved in two versions (tests/live_server.py does the database and the process)."""
    with (
        served_database(kind, workdir) as database,
        live_server(database.url, workdir / "uvicorn.log") as live,
    ):
        scenario = _save_example_scenario(live.url, database.write_token)
        yield Server(live.url, database.write_token, kind, scenario["id"])


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
    """`wheretorun`'s app under uvicorn over a migrated and seeded SQLite file."""
    yield from _serve("sqlite", tmp_path_factory.mktemp("page-sqlite"))


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The same over a fresh schema of the PostgreSQL server, dropped afterwards."""
    yield from _serve("postgresql", tmp_path_factory.mktemp("page-postgres"))


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
