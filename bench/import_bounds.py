"""Bounded work in price imports (issue 10): the worst-case files, and how long an import keeps
other writes waiting.

    .venv/bin/python bench/import_bounds.py              # SQLite file and the local PostgreSQL
    .venv/bin/python bench/import_bounds.py --no-postgres

1. Worst cases, each refused with a 422: a SkyPilot header of 200,000 columns (1.5 MB; the old
   duplicate-column check was quadratic in it: 25+ CPU minutes), JSON nested 200,000 levels deep,
   an integer of 5,000 digits, more priced rows than one import takes. Prints the seconds each
   import takes to be refused.
2. Imports of growing size up to the largest accepted (SkyPilot rows made from the shipped RunPod
   file, each copy in regions renamed `bench-<n>-<region>`: a load shape for timing only, never a
   catalog), with short writes (as a scenario create makes) one after another while it runs: prints
   the import's seconds and rows per second, and the longest any other write waited. On SQLite the
   import holds the database's write lock from its lock (after reading the file) to its commit; on
   PostgreSQL it holds only the import lock, so other writes do not wait for it.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import threading
import time

from scratch_databases import run_on_sqlite_and_postgres
from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError

from wheretorun.db import begin_write, make_session_factory
from wheretorun.errors import MalformedFile
from wheretorun.pricing.bootstrap import prepare_database
from wheretorun.pricing.imports import ImportSpec, import_content
from wheretorun.pricing.imports.checks import MAX_PRICE_ROWS
from wheretorun.pricing.sources import DATA_DIR
from wheretorun.security import Actor, record_audit

RUNPOD = DATA_DIR / "sources" / "skypilot-catalog" / "runpod_vms.csv"
ACTOR = Actor(label="bench")
SIZES = (5_000, 10_000, MAX_PRICE_ROWS)


def worst_cases() -> list[tuple[str, ImportSpec, bytes]]:
    wide = (",".join(f"c{n}" for n in range(200_000)) + "\n").encode()
    nested = b"[" * 200_000 + b"]" * 200_000
    digits = b'{"m": {"input_cost_per_token": ' + b"9" * 5000 + b"}}"
    return [
        ("200,000 columns (1.5 MB)", ImportSpec("skypilot", "aws"), wide),
        ("JSON nested 200,000 deep", ImportSpec("litellm"), nested),
        ("canonical JSON nested 200,000 deep", ImportSpec("canonical"), b'{"prices": ' + nested + b"}"),
        ("an integer of 5,000 digits", ImportSpec("litellm"), digits),
        (
            f"{MAX_PRICE_ROWS + 5_000:,} priced rows",
            ImportSpec("skypilot", "runpod"),
            grown_runpod(MAX_PRICE_ROWS + 5_000),
        ),
    ]


def grown_runpod(rows: int) -> bytes:
    """`rows` SkyPilot rows: copies of the RunPod file's rows, each copy in renamed regions."""
    reader = csv.DictReader(io.StringIO(RUNPOD.read_text(encoding="utf-8")))
    original = list(reader)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(reader.fieldnames or []), lineterminator="\n")
    writer.writeheader()
    for written in range(rows):
        copy, row = divmod(written, len(original))
        writer.writerow({**original[row], "Region": f"bench-{copy}-{original[row]['Region']}"})
    return out.getvalue().encode()


def other_writes(engine: Engine, importing: threading.Event, waits: list[tuple[float, str]]) -> None:
    """Short writes (one audit entry, as a scenario create writes), one after another for as long as
    the import runs: each one's wait for the write lock is recorded."""
    importing.wait()
    factory = make_session_factory(engine)
    while importing.is_set():
        begin = time.perf_counter()
        try:
            with factory() as session:
                begin_write(session)
                record_audit(session, ACTOR, "bench.write", "bench", {}, dt.datetime.now(dt.UTC))
                session.commit()
            waits.append((time.perf_counter() - begin, "written"))
        except OperationalError as error:  # SQLite's busy timeout ran out
            waits.append((time.perf_counter() - begin, f"refused ({error.orig})"))
        time.sleep(0.02)


def bench(engine: Engine, label: str) -> None:
    prepare_database(engine)
    factory = make_session_factory(engine)
    print(f"{label}")
    for name, spec, content in worst_cases():
        begin = time.perf_counter()
        try:
            with factory.begin() as session:
                import_content(session, spec, content, "bench", ACTOR)
            outcome = "accepted (!)"
        except MalformedFile as error:
            outcome = f"refused: {error.problems[0].reason[:60]}"
        print(f"  {name:<36} {time.perf_counter() - begin:6.3f} s  {outcome}")
    for rows in SIZES:
        content = grown_runpod(rows)
        importing, waits = threading.Event(), list[tuple[float, str]]()
        other = threading.Thread(target=other_writes, args=(engine, importing, waits))
        other.start()
        begin = time.perf_counter()
        importing.set()
        with factory.begin() as session:
            run = import_content(
                session, ImportSpec("skypilot", f"bench{rows}", force=True), content, "b", ACTOR
            )
        seconds = time.perf_counter() - begin
        importing.clear()
        other.join()
        refused = sum(1 for _, outcome in waits if outcome != "written")
        print(
            f"  import of {rows:>7,} rows ({len(content) / 1e6:5.1f} MB): {seconds:6.2f} s, "
            f"{run.diff['added'] / seconds:5,.0f} offers/s; {len(waits)} other writes meanwhile: "
            f"longest wait {max(wait for wait, _ in waits):5.2f} s, {refused} refused"
        )


def main() -> None:
    run_on_sqlite_and_postgres(bench, __doc__)


if __name__ == "__main__":
    main()
