"""Time to import the full seeded catalog again: the 16 SkyPilot files and LiteLLM's price table.

    .venv/bin/python bench/import_speed.py                    # SQLite file and the local PostgreSQL
    .venv/bin/python bench/import_speed.py --postgres URL     # another PostgreSQL (a scratch schema)
    .venv/bin/python bench/import_speed.py --no-postgres      # SQLite only

On a freshly seeded database, two passes, each one import per file (17 imports, each in its own
transaction, as the API and the CLI run them):

* unchanged: the shipped files as they are: checked, read, diffed; nothing to write.
* all changed: every price 1% higher: each file becomes a new catalog version that ends every
  current row it covers and inserts its successor (the worst case for writes).

Prints seconds per pass, the rows compared and written, and rows per second.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from scratch_databases import run_on_sqlite_and_postgres
from sqlalchemy import Engine

from wheretorun.db import make_session_factory
from wheretorun.pricing.bootstrap import prepare_database
from wheretorun.pricing.imports import ImportSpec, import_content
from wheretorun.pricing.imports.checks import LITELLM_PRICE_FIELDS
from wheretorun.pricing.sources import DATA_DIR
from wheretorun.security import Actor

SKYPILOT_DIR = DATA_DIR / "sources" / "skypilot-catalog"
LITELLM_FILE = DATA_DIR / "sources" / "litellm" / "model_prices_and_context_window.json"
ACTOR = Actor(label="bench")
FACTOR = Decimal("1.01")

File = tuple[ImportSpec, str, bytes]  # spec, name, content


def shipped_files() -> list[File]:
    files: list[File] = [
        (ImportSpec("skypilot", path.name.removesuffix("_vms.csv"), force=True), path.name, path.read_bytes())
        for path in sorted(SKYPILOT_DIR.glob("*_vms.csv"))
    ]
    files.append((ImportSpec("litellm", force=True), LITELLM_FILE.name, LITELLM_FILE.read_bytes()))
    return files


def scaled(files: list[File]) -> list[File]:
    """The same files with every price 1% higher."""
    return [
        (spec, name, _scale_litellm(data) if spec.format == "litellm" else _scale_csv(data))
        for spec, name, data in files
    ]


def _scale_csv(data: bytes) -> bytes:
    reader = csv.DictReader(io.StringIO(data.decode("utf-8")))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(reader.fieldnames or []), lineterminator="\n")
    writer.writeheader()
    for row in reader:
        for column in ("Price", "SpotPrice"):
            if row[column]:
                row[column] = str(Decimal(row[column]) * FACTOR)
        writer.writerow(row)
    return out.getvalue().encode()


def _scale_litellm(data: bytes) -> bytes:
    table = json.loads(data, parse_float=Decimal)
    for entry in table.values():
        for field in LITELLM_PRICE_FIELDS:
            if isinstance(entry, dict) and isinstance(entry.get(field), int | Decimal):
                entry[field] = entry[field] * FACTOR
    return json.dumps(table, default=lambda number: float(number)).encode()


def run_pass(engine: Engine, files: list[File], clock: Callable[[], dt.datetime]) -> dict[str, Any]:
    factory = make_session_factory(engine)
    totals = {"compared": 0, "written": 0, "versions": 0}
    start = time.perf_counter()
    for spec, name, data in files:
        with factory.begin() as session:
            run = import_content(session, spec, data, name, ACTOR, clock=clock)
        diff = run.diff
        totals["compared"] += diff["added"] + diff["changed"] + diff["removed"] + diff["unchanged"]
        totals["written"] += diff["added"] + 2 * diff["changed"] + diff["removed"]
        totals["versions"] += run.catalog_version_id is not None
    return {"seconds": time.perf_counter() - start, **totals}


def bench(engine: Engine, label: str) -> None:
    start = time.perf_counter()
    prepare_database(engine)
    print(f"{label}: migrate + seed {time.perf_counter() - start:.1f} s")
    files = shipped_files()
    changed = scaled(files)
    tick = iter(range(1, 10_000))
    clock = lambda: dt.datetime.now(dt.UTC) + dt.timedelta(seconds=next(tick))  # noqa: E731 - strictly increasing
    for name, batch in (("unchanged", files), ("all changed (+1%)", changed)):
        result = run_pass(engine, batch, clock)
        rate = result["compared"] / result["seconds"]
        print(
            f"  {name:<18} {result['seconds']:6.2f} s  {len(batch)} files, "
            f"{result['compared']:,} rows compared ({rate:,.0f}/s), {result['written']:,} rows written, "
            f"{result['versions']} new catalog versions"
        )


def main() -> None:
    run_on_sqlite_and_postgres(bench, __doc__)


if __name__ == "__main__":
    main()
