"""The app served over real HTTP for `schemathesis run`, and the CLI run with its counts.

`served_app` seeds a fresh SQLite file (or a PostgreSQL schema), creates an admin API key, and
serves `create_app` with uvicorn in a background thread on a free loopback port. URL imports go to
a fake price server (no network: an upstream failure would be a 502, which schemathesis rightly
counts as a server error). `run_schemathesis` runs the CLI over it with every phase and every
response check, and returns what it counted, from its JSON report.

Used by `tests/fuzz/test_schemathesis_cli.py` (a short derandomized run in the normal test run)
and `bench/schemathesis_run.py` (a long seeded run).
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from sqlalchemy import Engine

from tests.live_server import free_port
from wheretorun.api.app import create_app
from wheretorun.api.deps import get_fetcher
from wheretorun.db import make_session_factory
from wheretorun.pricing.bootstrap import prepare_database
from wheretorun.pricing.imports import HttpFetcher, UrlPolicy
from wheretorun.security import Actor, Scope, create_api_key
from wheretorun.settings import Settings

__all__ = ["CHECKS", "PHASES", "RunCounts", "run_schemathesis", "served_app"]

PHASES = ("examples", "coverage", "fuzzing", "stateful")
CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "response_headers_conformance",
    "negative_data_rejection",
    "positive_data_acceptance",
)
SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")


def _fake_price_server(request: httpx.Request) -> httpx.Response:
    return httpx.Response(404, text="no such price file")


@contextmanager
def served_app(engine: Engine) -> Iterator[tuple[str, str]]:
    """(base URL, admin token) of the app served over `engine`, migrated and seeded here."""
    prepare_database(engine)
    app = create_app(Settings(auto_seed=False, log_level="ERROR"), engine=engine)
    policy = UrlPolicy(("prices.example.com",), resolver=lambda _host: ["93.184.216.34"])
    app.dependency_overrides[get_fetcher] = lambda: HttpFetcher(
        policy, transport=httpx.MockTransport(_fake_price_server), sleep=lambda _s: None
    )
    actor = Actor(label="schemathesis", key_id=None, scope=Scope.ADMIN)
    with make_session_factory(engine).begin() as session:
        _key, token = create_api_key(session, "schemathesis", Scope.ADMIN, actor, dt.datetime.now(dt.UTC))
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(base)
        yield base, token
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def _wait_ready(base: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the app at {base} did not become ready")


DATA_CHECKS = frozenset({"ST201", "ST202"})
"""Failure codes of `negative_data_rejection` (ST201: invalid data accepted) and
`positive_data_acceptance` (ST202: valid data refused). Every other code (ST101 server error,
ST103 undocumented status, ST104 content type, ST108 response schema, ...) is a defect."""


@dataclass
class RunCounts:
    """What one `schemathesis run` counted (from its JSON report)."""

    exit_code: int
    seconds: float
    cases: int = 0
    stop_reason: str = ""
    failures: dict[str, tuple[int, list[str]]] = field(default_factory=dict)  # code -> (count, operations)
    warnings: dict[str, list[str]] = field(default_factory=dict)  # kind -> operations
    errors: list[str] = field(default_factory=list)
    phases_run: list[str] = field(default_factory=list)
    output: str = ""

    @property
    def defects(self) -> dict[str, tuple[int, list[str]]]:
        """Failures other than `DATA_CHECKS`: server errors and broken response contracts."""
        return {code: found for code, found in self.failures.items() if code not in DATA_CHECKS}

    def summary(self) -> str:
        failures = ", ".join(f"{code} x{count}" for code, (count, _ops) in sorted(self.failures.items()))
        return (
            f"{self.cases} cases in {self.seconds:.0f} s (stopped: {self.stop_reason}; phases "
            f"{', '.join(self.phases_run)}); "
            f"failures: {failures or 'none'}; warnings: {self.warnings or 'none'}; "
            f"errors: {len(self.errors)}"
        )


def run_schemathesis(
    base: str,
    token: str,
    report_dir: Path,
    *,
    seed: int | None,
    max_time_seconds: int,
    max_examples: int | None = None,
    deterministic: bool = False,
    workers: int = 1,
    extra: tuple[str, ...] = (),
) -> RunCounts:
    """`schemathesis run` over `base` with every phase and `CHECKS`; counts from its JSON report."""
    report = report_dir / "schemathesis.json"
    command = [
        str(SCHEMATHESIS),
        "run",
        f"{base}/openapi.json",
        "--header",
        f"Authorization: Bearer {token}",
        "--phases",
        ",".join(PHASES),
        "--checks",
        ",".join(CHECKS),
        "--max-time",
        str(max_time_seconds),
        "--workers",
        str(workers),
        "--report",
        "json",
        "--report-json-path",
        str(report),
        "--no-color",
        "--suppress-health-check",
        "all",
    ]
    if seed is not None:
        command += ["--seed", str(seed)]
    if max_examples is not None:
        command += ["--max-examples", str(max_examples)]
    # A deterministic run keeps no example database; a random one must not read an old one.
    command += ["--generation-deterministic"] if deterministic else ["--generation-database", "none"]
    command += extra
    started = time.monotonic()
    finished = subprocess.run(command, capture_output=True, text=True, check=False, cwd=report_dir)
    counts = RunCounts(
        exit_code=finished.returncode,
        seconds=time.monotonic() - started,
        output=finished.stdout + finished.stderr,
    )
    if report.exists():
        _read_report(json.loads(report.read_text(encoding="utf-8")), counts)
    return counts


def _read_report(data: dict[str, Any], counts: RunCounts) -> None:
    """Fill `counts` from schemathesis' JSON run report."""
    counts.cases = int(data.get("test_cases", {}).get("generated", 0))
    counts.stop_reason = str(data.get("stop_reason", ""))
    for failure in data.get("failures") or []:
        counts.failures[str(failure["code"])] = (int(failure["count"]), list(failure.get("operations", [])))
    counts.warnings = {str(kind): list(ops) for kind, ops in (data.get("warnings") or {}).items() if ops}
    counts.errors = [json.dumps(error)[:500] for error in data.get("errors") or []]
    counts.phases_run = [
        name
        for name, phase in (data.get("phases") or {}).items()
        if phase.get("status") not in (None, "skip") and not phase.get("skip_reason")
    ]
