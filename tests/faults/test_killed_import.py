"""A price import killed with SIGKILL in the middle of writing: the catalog is exactly as before (the
import is one transaction) and the same import then runs to completion.

The import runs in a child process (`DRIVER`): the import service with an `on_progress` callback
that reports the first batch of rows written and then waits, so the test kills it mid-transaction
every time, with more than a thousand rows already written and thousands to go. The file is every
RunPod offer 10% dearer (~1,600 changed prices: 3,280 rows ended or inserted, in batches of 1,000).
On PostgreSQL this uses a private cluster, never the shared server.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from tests.faults.conftest import PrivateCluster
from tests.import_support import edit_rows, fingerprint, scaled, shipped_text
from wheretorun.db import create_db_engine, make_session_factory
from wheretorun.pricing.bootstrap import prepare_database
from wheretorun.pricing.models import CatalogVersion

pytestmark = pytest.mark.faults

DRIVER = """
import os, sys, time
from pathlib import Path
from wheretorun.pricing import imports
from wheretorun.db import create_db_engine, make_session_factory
from wheretorun.security import cli_actor

def report_then_wait(done, total):
    print(f"wrote {done} of {total}", flush=True)
    time.sleep(3600)  # the test kills this process here, in the middle of the transaction

engine = create_db_engine(os.environ["DATABASE_URL"])
spec = imports.ImportSpec("skypilot", "runpod", force=True)
with make_session_factory(engine).begin() as session:
    content = Path(sys.argv[1]).read_bytes()
    imports.import_content(
        session, spec, content, "runpod_vms.csv", cli_actor(), on_progress=report_then_wait
    )
"""
WAIT_S = 180


def _catalog(engine: Engine) -> tuple[dict[str, tuple[int, str]], int]:
    with make_session_factory(engine)() as session:
        return fingerprint(session), session.scalar(select(func.count()).select_from(CatalogVersion)) or 0


def _kill_mid_write(price_file: Path, env: dict[str, str]) -> str:
    """Start the import, wait for its first batch of rows, SIGKILL it; the progress line it printed."""
    command = [sys.executable, "-c", DRIVER, str(price_file)]
    with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True) as child:
        try:
            with ThreadPoolExecutor(max_workers=1) as reader:
                line = reader.submit(child.stdout.readline).result(timeout=WAIT_S)  # type: ignore[union-attr]
            assert line.startswith("wrote "), f"the import ended before writing: {line!r}"
            assert child.poll() is None, "the import finished before it could be killed"
            child.send_signal(signal.SIGKILL)
            assert child.wait(timeout=WAIT_S) == -signal.SIGKILL
            return line.strip()
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=WAIT_S)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_an_import_killed_mid_write_changes_nothing_and_can_be_rerun(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if backend == "postgresql":
        cluster: PrivateCluster = request.getfixturevalue("private_postgres")
        url = cluster.url
    else:
        url = f"sqlite:///{tmp_path / 'catalog.db'}"
    engine = create_db_engine(url)
    try:
        prepare_database(engine)
        price_file = tmp_path / "runpod_vms.csv"
        dearer = edit_rows(shipped_text("runpod"), scaled("Price", "1.1"))
        price_file.write_text(edit_rows(dearer, scaled("SpotPrice", "1.1")), encoding="utf-8")
        before, versions_before = _catalog(engine)
        env = {**os.environ, "DATABASE_URL": url}

        progress = _kill_mid_write(price_file, env)
        done, total = (int(word) for word in progress.split()[1::2])
        assert 0 < done < total, progress
        assert total > 3000, progress
        assert _catalog(engine) == (before, versions_before)

        rerun = subprocess.run(
            [str(Path(sys.executable).with_name("wheretorun")), "prices", "import", "--format", "skypilot"]
            + ["--provider", "runpod", "--file", str(price_file), "--force"],
            env=env,
            capture_output=True,
            text=True,
            timeout=WAIT_S,
        )
        assert rerun.returncode == 0, rerun.stdout + rerun.stderr
        after, versions_after = _catalog(engine)
        assert versions_after == versions_before + 1
        assert after["cloud_offers"] != before["cloud_offers"]
    finally:
        engine.dispose()
