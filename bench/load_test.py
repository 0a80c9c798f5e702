"""Load test on loopback: `POST /v1/recommendations` and `POST /v1/estimates/inference` under
uvicorn workers, then a bare FastAPI endpoint on the same uvicorn settings, in one run, printing
each endpoint's requests/s as a share of the bare endpoint's (issue 14's side-by-side).

    .venv/bin/python bench/load_test.py [--seconds 60] [--runs 3] [--concurrency 32] [--workers 2] [--vary]

Not run in CI. Seeds an SQLite catalog in a temporary directory (or uses `DATABASE_URL`), starts
`uvicorn --factory wheretorun.api.app:create_app --workers N` and `bare_app` below (the
recommendation's path and body, parsed, a constant answer) under the same settings (default
settings, as the issue ran it), each on 127.0.0.1 on a free port, waits for `/readyz`, and warms
each endpoint up for 5 s. Then `--runs` rounds, each of three runs of `--seconds` in turn: post
`examples/tiny-prototype.yaml` as JSON on `--concurrency` connections, an inference estimate
(llama-3.1-8b on an H100 at concurrency 8), and the bare endpoint. Both servers run throughout
(the idle one used 0.13 CPU-seconds in 20 s, master and 2 workers, 2026-12-05) so that a drift
of this shared machine's speed (runs of one endpoint a few minutes apart differed by up to 11%,
2026-12-05) weighs on every endpoint alike.
With `--vary`, the recommendation (and the bare endpoint, posted the same bodies) asks about one
of 33 volumes in turn (the example's requests per day x 2^(k/4), k = -16..16) instead of one
body over and over: the engine's memos hold only what does not depend on the volume, and this
shows it. Prints each run's requests/s, p50/p99 latency, errors (any non-200 or transport
error), the CPU seconds of each worker and the workers' CPU per request (what the ratios come
down to: the server's CPU is the limit, and a bare request costs ~0.4 ms of it). A run in which
one worker did most of the work (uvicorn's workers share one listening socket; wrk's connections
can all land on one) is shown but not counted. The shares are the best and the median counted
runs against the bare endpoint's, and each round's own share (its run against that round's bare
run) with their median.

The load generator: `wrk` (as the issue measured; `apt-get install wrk`) when it is installed, 2
threads and `--concurrency` connections, else `--generator httpx`, one Python process of asyncio
clients. Either shares the 2 cores with the server; the Python one costs far more CPU per request,
so it caps the bare endpoint's figure long before the server does, and the ratios it prints are
higher than wrk's (2026-12-03: bare 225-268 req/s with httpx, see the README for wrk's).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml
from fastapi import FastAPI

ROOT = Path(__file__).resolve().parent.parent
WORKLOAD = ROOT / "examples" / "tiny-prototype.yaml"
PATH = "/v1/recommendations"
ESTIMATE_PATH = "/v1/estimates/inference"
ESTIMATE = {"model": "llama-3.1-8b", "accelerator": "H100", "concurrency": 8}
_BALANCED = 0.75  # a run counts when every worker used >= 75% of the busiest worker's CPU
_VOLUME_STEPS = range(-16, 17)  # --vary: requests per day x 2^(k/4)


def varied(body: dict[str, Any]) -> list[dict[str, Any]]:
    """`body` at each of the `--vary` volumes."""
    workload = body["workload"]
    return [
        {
            **body,
            "workload": {
                **workload,
                "requests_per_day": float(f"{workload['requests_per_day'] * 2 ** (k / 4):.6g}"),
            },
        }
        for k in _VOLUME_STEPS
    ]


bare_app = FastAPI()


@bare_app.get("/readyz")
def bare_ready() -> dict[str, str]:
    return {"status": "ok"}


@bare_app.post(PATH)
def bare_recommendation(body: dict[str, Any]) -> dict[str, Any]:
    """What every request costs without the engine: routing, JSON in and out, the thread pool."""
    return {"options": [], "workload_kind": body.get("workload", {}).get("kind")}


@dataclass
class Result:
    seconds: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    errors: int = 0
    first_error: str = ""

    @property
    def requests(self) -> int:
        return len(self.latencies_ms) + self.errors

    @property
    def rate(self) -> float:
        return self.requests / self.seconds

    def percentile(self, share: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(int(share * len(ordered)), len(ordered) - 1)] if ordered else float("nan")

    def line(self, name: str) -> str:
        return (
            f"{name:<16} {self.requests:>7} requests in {self.seconds:5.1f} s = "
            f"{self.rate:8.1f} req/s   p50 {self.percentile(0.50):7.1f} ms   "
            f"p99 {self.percentile(0.99):7.1f} ms   errors {self.errors}"
            + (f" (first: {self.first_error})" if self.first_error else "")
        )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def worker_cpu_seconds(server_pid: int) -> dict[int, float]:
    """CPU seconds (user + system) used so far by each child process of `server_pid` (Linux
    /proc): how evenly the uvicorn workers shared the load."""
    clock_ticks = os.sysconf("SC_CLK_TCK")
    seconds: dict[int, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the process ended meanwhile
        if int(fields[1]) == server_pid:  # fields[1]: the parent's pid
            seconds[int(stat.parent.name)] = (int(fields[11]) + int(fields[12])) / clock_ticks
    return seconds


@contextmanager
def uvicorn_server(
    app: str, workers: int, env: dict[str, str], log: Path, factory: bool = False
) -> Iterator[tuple[str, int]]:
    """Start uvicorn on 127.0.0.1:<free port>; yield its base URL and process id once /readyz
    answers; kill it."""
    port = _free_port()
    command = [sys.executable, "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port)]
    command += ["--workers", str(workers), "--app-dir", str(ROOT)] + (["--factory"] if factory else [])
    with log.open("w") as output:
        server = subprocess.Popen(
            command, env=env, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"uvicorn exited with {server.returncode}; see {log}")
            try:
                if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn not ready after 120 s; see {log}")
            time.sleep(0.2)
        yield base, server.pid
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)  # the supervisor and its workers
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait(timeout=20)


async def drive(
    base: str, path: str, bodies: list[dict[str, Any]], seconds: float, concurrency: int, max_requests: int
) -> Result:
    """`concurrency` clients posting `bodies` in turn until `seconds` pass or `max_requests` are sent."""
    result = Result()
    issued = 0
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=60) as client:
        started = time.perf_counter()
        deadline = started + seconds

        async def one_client() -> None:
            nonlocal issued
            while time.perf_counter() < deadline and issued < max_requests:
                body = bodies[issued % len(bodies)]
                issued += 1
                sent = time.perf_counter()
                try:
                    response = await client.post(path, json=body)
                    ok, reason = response.status_code == 200, f"HTTP {response.status_code}"
                except httpx.HTTPError as error:
                    ok, reason = False, type(error).__name__
                if ok:
                    result.latencies_ms.append((time.perf_counter() - sent) * 1000)
                else:
                    result.errors += 1
                    result.first_error = result.first_error or reason

        await asyncio.gather(*(one_client() for _ in range(concurrency)))
        result.seconds = time.perf_counter() - started
    return result


@dataclass
class WrkResult:
    """What `wrk --latency` reports for one run."""

    rate: float
    p50_ms: float
    p99_ms: float
    requests: int
    errors: int

    def line(self, name: str) -> str:
        return (
            f"{name:<16} {self.requests:>7} requests (wrk) = {self.rate:8.1f} req/s   "
            f"p50 {self.p50_ms:7.1f} ms   p99 {self.p99_ms:7.1f} ms   errors {self.errors}"
        )


_WRK_SCRIPT = """wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local bodies = {{{bodies}}}
local sent = 0
request = function()
  sent = sent + 1
  return wrk.format(nil, nil, nil, bodies[(sent % #bodies) + 1])
end
"""


def _milliseconds(text: str) -> float:
    number, unit = re.fullmatch(r"([0-9.]+)(us|ms|s)", text).groups()  # type: ignore[union-attr]
    return float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def drive_wrk(
    base: str, path: str, bodies: list[dict[str, Any]], seconds: float, concurrency: int, workdir: Path
) -> WrkResult:
    """`wrk` posting `bodies` in turn on `concurrency` new connections from 2 threads for `seconds`."""
    report = subprocess.run(
        _wrk_command(base, path, bodies, seconds, concurrency, workdir),
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    percentiles = dict(re.findall(r"^\s+(50|99)(?:\.0+)?%\s+(\S+)\s*$", report, re.MULTILINE))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", report)
    socket_errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", report)
    return WrkResult(
        rate=float(re.search(r"Requests/sec:\s+([0-9.]+)", report).group(1)),  # type: ignore[union-attr]
        p50_ms=_milliseconds(percentiles["50"]),
        p99_ms=_milliseconds(percentiles["99"]),
        requests=int(re.search(r"(\d+) requests in", report).group(1)),  # type: ignore[union-attr]
        errors=(int(errors.group(1)) if errors else 0)
        + (sum(int(n) for n in socket_errors.groups()) if socket_errors else 0),
    )


def _wrk_command(
    base: str, path: str, bodies: list[dict[str, Any]], seconds: float, concurrency: int, workdir: Path
) -> list[str]:
    script = workdir / "post.lua"
    listed = ", ".join(f"[==[{json.dumps(body)}]==]" for body in bodies)
    script.write_text(_WRK_SCRIPT.format(bodies=listed), encoding="utf-8")
    return ["wrk", "-t2", f"-c{concurrency}", f"-d{seconds:g}s", "--latency", "-s", str(script), base + path]


def warm_up(
    base: str, path: str, bodies: list[dict[str, Any]], concurrency: int, workdir: Path, generator: str
) -> None:
    """5 s of load, not counted: every worker builds its catalog snapshot and fills its memos."""
    if generator == "wrk":
        subprocess.run(
            _wrk_command(base, path, bodies, 5, concurrency, workdir), check=True, capture_output=True
        )
    else:
        asyncio.run(drive(base, path, bodies, 5, concurrency, 1_000_000))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=60.0, help="Duration of each run.")
    parser.add_argument("--concurrency", type=int, default=32, help="Requests in flight.")
    parser.add_argument("--runs", type=int, default=3, help="Measured runs per endpoint, after one warm-up.")
    parser.add_argument("--workers", type=int, default=2, help="uvicorn worker processes.")
    parser.add_argument(
        "--max-requests", type=int, default=1_000_000, help="Stop a run after this many (httpx only)."
    )
    parser.add_argument(
        "--generator",
        choices=("wrk", "httpx"),
        default="wrk" if shutil.which("wrk") else "httpx",
        help="The load generator (default: wrk when installed).",
    )
    parser.add_argument(
        "--vary", action="store_true", help="Post the recommendation at 33 volumes in turn (see above)."
    )
    args = parser.parse_args()
    body = yaml.safe_load(WORKLOAD.read_text(encoding="utf-8"))
    bodies = varied(body) if args.vary else [body]

    with tempfile.TemporaryDirectory() as workdir:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        if not env.get("DATABASE_URL"):
            env["DATABASE_URL"] = f"sqlite:///{Path(workdir) / 'catalog.db'}"
        from wheretorun.db import create_db_engine
        from wheretorun.pricing.bootstrap import prepare_database

        database = create_db_engine(env["DATABASE_URL"].replace("postgresql://", "postgresql+psycopg://", 1))
        prepare_database(database)  # before the workers start, so they do not race to seed
        database.dispose()
        print(
            f"{args.workers} uvicorn workers, concurrency {args.concurrency}, {args.seconds:g} s per run, "
            f"{WORKLOAD.name}{f' at {len(bodies)} volumes in turn' if args.vary else ''}, "
            f"database {env['DATABASE_URL'].split('@')[-1]}, load from {args.generator}"
        )
        endpoints = [
            Endpoint("recommendation", "app", PATH, bodies),
            Endpoint("estimate", "app", ESTIMATE_PATH, [ESTIMATE]),
            Endpoint("bare FastAPI", "bare", PATH, bodies),
        ]
        results: dict[str, list[Result | WrkResult | None]] = {endpoint.name: [] for endpoint in endpoints}
        with contextlib.ExitStack() as servers:
            # both servers run the whole time (an idle one costs nothing), so the endpoints take
            # turns round by round and a drift of the machine's speed weighs on all of them alike
            started = {
                "app": servers.enter_context(
                    uvicorn_server(
                        "wheretorun.api.app:create_app",
                        args.workers,
                        env,
                        Path(workdir) / "app.log",
                        factory=True,
                    )
                ),
                "bare": servers.enter_context(
                    uvicorn_server("bench.load_test:bare_app", args.workers, env, Path(workdir) / "bare.log")
                ),
            }
            for endpoint in endpoints:
                base, _ = started[endpoint.server]
                warm_up(base, endpoint.path, endpoint.bodies, args.concurrency, Path(workdir), args.generator)
            for _ in range(args.runs):
                for endpoint in endpoints:
                    base, pid = started[endpoint.server]
                    results[endpoint.name].append(_measured_run(args, endpoint, base, pid, Path(workdir)))
    _print_shares(results)
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


@dataclass(frozen=True)
class Endpoint:
    """What one run posts, and to which of the two servers."""

    name: str
    server: str  # "app" (ours) or "bare"
    path: str
    bodies: list[dict[str, Any]]


def _measured_run(
    args: argparse.Namespace, endpoint: Endpoint, base: str, pid: int, workdir: Path
) -> Result | WrkResult | None:
    """One run against `endpoint`, printed; None when it was unbalanced (not counted)."""
    before = worker_cpu_seconds(pid)
    if args.generator == "wrk":
        result: Result | WrkResult = drive_wrk(
            base, endpoint.path, endpoint.bodies, args.seconds, args.concurrency, workdir
        )
    else:
        result = asyncio.run(
            drive(base, endpoint.path, endpoint.bodies, args.seconds, args.concurrency, args.max_requests)
        )
    after = worker_cpu_seconds(pid)
    used = sorted((after[child] - before.get(child, 0.0) for child in after), reverse=True)
    busy = [seconds for seconds in used if seconds >= 0.05]
    # with httpx the generator, not the server, is the limit: no worker is saturated
    saturating = args.generator == "wrk"
    balanced = not saturating or (len(busy) == args.workers and min(busy) >= _BALANCED * max(busy))
    shares = "/".join(f"{seconds:.1f}" for seconds in busy)
    per_request = sum(used) / result.requests * 1000 if result.requests else math.nan
    flag = "" if balanced else "  (unbalanced: not counted)"
    print(
        f"{result.line(endpoint.name)}   worker CPU s {shares}   CPU/request {per_request:.2f} ms{flag}",
        flush=True,
    )
    return result if balanced else None


def _print_shares(results: dict[str, list[Result | WrkResult | None]]) -> None:
    """Each endpoint's best and median balanced run as a share of the bare endpoint's, and the
    median of the rounds' own shares (a round: one run of each endpoint, in turn).

    A run can land every connection on one worker (uvicorn's workers share one socket), the bare
    endpoint's too, and then measures one worker: only runs in which every worker used at least
    `_BALANCED` of the busiest one's CPU are counted."""
    counted = {name: [run for run in runs if run is not None] for name, runs in results.items()}
    if not all(counted.values()):
        print("no balanced run of " + ", ".join(name for name, runs in counted.items() if not runs))
        return
    rates = {name: sorted(run.rate for run in runs) for name, runs in counted.items()}
    bare = rates["bare FastAPI"]
    for name in ("estimate", "recommendation"):
        best, median = rates[name][-1], statistics.median(rates[name])
        rounds = [
            run.rate / bare_run.rate
            for run, bare_run in zip(results[name], results["bare FastAPI"], strict=True)
            if run is not None and bare_run is not None
        ]
        listed = ", ".join(f"{share:.1%}" for share in rounds)
        by_round = f"; by round {listed} (median {statistics.median(rounds):.1%})" if rounds else ""
        print(
            f"{name}: best {best:.1f} req/s = {best / bare[-1]:.1%} of the bare endpoint's best "
            f"({bare[-1]:.1f}); median {median:.1f} = {median / statistics.median(bare):.1%} of its median"
            f"{by_round}"
        )


if __name__ == "__main__":
    main()
