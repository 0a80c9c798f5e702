"""Machine instructions per recommendation: a measure of the work a request does that, unlike
time, does not move with a shared machine's speed.

    .venv/bin/python bench/instructions.py [--requests 30] [--examples tiny-prototype ...] [--against DIR]

Needs valgrind (`apt-get install valgrind`). Seeds an SQLite catalog in a temporary directory,
then for each example workload starts a child Python under valgrind's callgrind with
instrumentation off, which builds the catalog snapshot and answers the example 10 times (imports,
snapshot and the engine's memos are not counted), then waits; the parent turns instrumentation
on (`callgrind_control -i on`) and the child answers `--requests` more, as the API does
(`recommend_for` and the answer written as JSON bytes), and exits. Instructions counted over
those requests / `--requests` = instructions per request (the child leaves with `os._exit`, so
the interpreter's shutdown is not counted). With `PYTHONHASHSEED=0` two runs of the same code
agree to 0.1% (2026-12-05: 37.13M twice for the 8B prototype, 16.54M twice for the on-prem
example; 16.53M and 16.51M in two earlier runs), where CPU time on this machine drifts by 10%
from one minute to the next; so a change of 1-3%, invisible in `recommend_latency.py` or
`load_test.py`, shows here.

`--against DIR`: the same for the checkout in DIR too (e.g. `git worktree add /tmp/before HEAD~1`),
printed side by side with the change in percent. Both are driven by this script's child, so what
is measured is `recommend_for` and the answer as `recommendation_answers.py` writes it; a change in the
HTTP route itself does not show. Both read the catalog this checkout seeds.

`--app`: each request goes through the whole ASGI app instead (`create_app()`, its lifespan run
first, `POST /v1/recommendations` with the example as a JSON body, called in process without a
server or a socket): middleware, the body's validation, the route, the engine and the JSON, as
a uvicorn worker runs them minus the HTTP parsing and the socket. `--app bare` drives
`load_test.bare_app` (a bare FastAPI endpoint posted the same body, ~1.0M instructions a request)
for the side-by-side of issue 14.

Instructions are not time: a cache miss costs many cycles and no instruction, so work that
touches much memory (numpy's small temporaries, a large answer) weighs more in time than here.
Under valgrind a request runs ~50x slower: each example takes about a minute.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from scratch_databases import seeded_sqlite_url

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
_WARM_UP = 10
_READY_TIMEOUT_S = 600


def _child(database: str, example: Path, requests: int, ready: Path, through: str) -> None:
    """Runs under valgrind: warm up, say so, wait for instrumentation, then answer `requests`."""
    if through != "engine":
        _app_child(database, example, requests, ready, through)
        return
    import yaml
    from recommendation_answers import answering

    from wheretorun.services.recommendation_schemas import RecommendationCreate

    answer = answering(database, settle=True)  # settled, as the API keeps its snapshot
    body = RecommendationCreate.model_validate(yaml.safe_load(example.read_text(encoding="utf-8")))

    def one() -> None:
        answer(body)

    for _ in range(_WARM_UP):
        one()
    ready.write_text("ready", encoding="utf-8")
    while ready.exists():  # the parent removes it once instrumentation is on
        time.sleep(0.05)
    for _ in range(requests):
        one()
    # out at once: the interpreter's shutdown (~40M instructions, about a request's worth,
    # 2026-12-05) would otherwise be counted with the requests
    os._exit(0)


def _app_child(database: str, example: Path, requests: int, ready: Path, through: str) -> None:
    """`_child` through the ASGI app (`through` "app") or the bare endpoint ("bare")."""
    import asyncio
    import json

    import yaml

    if through == "bare":
        from load_test import PATH, bare_app

        app = bare_app
    else:
        from load_test import PATH

        from wheretorun.api.app import create_app

        os.environ["DATABASE_URL"] = database
        app = create_app()
    body = json.dumps(yaml.safe_load(example.read_text(encoding="utf-8"))).encode()
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": PATH,
        "raw_path": PATH.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }

    async def one() -> None:
        messages = [{"type": "http.request", "body": body, "more_body": False}]
        statuses: list[int] = []

        async def receive() -> dict[str, object]:
            if messages:
                return messages.pop()
            await asyncio.Event().wait()  # the client never disconnects
            raise AssertionError("unreachable")

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                statuses.append(int(message["status"]))

        await app(dict(scope, state={}), receive, send)
        if statuses != [200]:
            raise RuntimeError(f"{example.stem}: answered {statuses}")

    async def run() -> None:
        async with app.router.lifespan_context(app):
            for _ in range(_WARM_UP):
                await one()
            ready.write_text("ready", encoding="utf-8")
            while ready.exists():
                await asyncio.sleep(0.05)
            for _ in range(requests):
                await one()
            os._exit(0)  # as in `_child`

    asyncio.run(run())


def _measure(
    checkout: Path, database: str, example: Path, requests: int, workdir: Path, through: str = "engine"
) -> float:
    """Instructions per request of `example` answered by the code in `checkout`."""
    ready, log = workdir / "ready", workdir / f"callgrind-{example.stem}.log"
    ready.unlink(missing_ok=True)
    command = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={workdir / 'callgrind.out'}",
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        database,
        str(example),
        str(requests),
        str(ready),
        through,
    ]
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(checkout)}
    with log.open("w", encoding="utf-8") as output:
        child = subprocess.Popen(command, cwd=checkout, env=env, stdout=output, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + _READY_TIMEOUT_S
        try:
            while not ready.exists():
                if child.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the child under valgrind did not get ready; see {log}")
                time.sleep(0.2)
            subprocess.run(["callgrind_control", "-i", "on", str(child.pid)], check=True, capture_output=True)
            ready.unlink()
            if child.wait(timeout=_READY_TIMEOUT_S) != 0:
                raise RuntimeError(f"the child under valgrind failed; see {log}")
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    counted = re.search(r"I\s+refs:\s+([\d,]+)", log.read_text(encoding="utf-8"))
    if counted is None:
        raise RuntimeError(f"no instruction count in {log}")
    return int(counted.group(1).replace(",", "")) / requests


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        database, example_file, requests, ready, through = sys.argv[2:7]
        _child(database, Path(example_file), int(requests), Path(ready), through)
        return
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=30, help="Requests counted per example.")
    parser.add_argument(
        "--examples", nargs="*", default=None, help="Example names (default: every file in examples/)."
    )
    parser.add_argument("--against", type=Path, default=None, help="Another checkout to measure alike.")
    parser.add_argument(
        "--app",
        nargs="?",
        const="app",
        default="engine",
        choices=["app", "bare"],
        help="Through the whole ASGI app (or, with `bare`, the bare FastAPI endpoint of load_test.py).",
    )
    args = parser.parse_args()
    for tool in ("valgrind", "callgrind_control"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} not found: apt-get install valgrind")
    names = args.examples or sorted(path.stem for path in EXAMPLES.glob("*.yaml"))
    checkouts = [ROOT] + ([args.against.resolve()] if args.against else [])
    with tempfile.TemporaryDirectory() as workdir, seeded_sqlite_url() as database:
        header = f"{'workload':<26} {'M instructions/request':>23}"
        if args.against:
            header += f" {'against':>9} {'change':>8}"
        print(f"{args.requests} requests counted per example, after {_WARM_UP} not counted\n{header}")
        for name in names:
            example = EXAMPLES / f"{name}.yaml"
            figures = [
                _measure(checkout, database, example, args.requests, Path(workdir), args.app)
                for checkout in checkouts
            ]
            line = f"{name:<26} {figures[0] / 1e6:>23.2f}"
            if args.against:
                line += f" {figures[1] / 1e6:>9.2f} {100 * (figures[0] / figures[1] - 1):>+7.1f}%"
            print(line, flush=True)


if __name__ == "__main__":
    main()
