"""A long `schemathesis run` over the served app: every phase, every response check, an admin key.

    .venv/bin/python bench/schemathesis_run.py [--seconds 900] [--seed N] [--workers 1]
                                               [--postgres postgresql+psycopg://...]

Serves the app (uvicorn, loopback, a fresh SQLite file or a scratch PostgreSQL schema) as
`tests/fuzz/served.py` does, runs the schemathesis CLI for `--seconds` with a random seed (printed;
`--seed` repeats a run), and prints what it counted: test cases, failures by code, warnings,
schema errors. Not run in CI; `tests/fuzz/test_schemathesis_cli.py` is the short derandomized
run that is. Exit status 1 when a server error, a contract violation or a validation-mismatch
warning was found.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import text  # noqa: E402

from tests.fuzz.served import run_schemathesis, served_app  # noqa: E402
from wheretorun.db import create_db_engine  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=int, default=900)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--postgres", default=None, help="a PostgreSQL URL; default: a SQLite file")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    with tempfile.TemporaryDirectory() as scratch:
        schema = f"wtr_schemathesis_{uuid.uuid4().hex[:8]}"
        if args.postgres:
            admin = create_db_engine(args.postgres)
            with admin.begin() as connection:
                connection.execute(text(f'CREATE SCHEMA "{schema}"'))
            engine = create_db_engine(args.postgres, connect_args={"options": f"-csearch_path={schema}"})
        else:
            engine = create_db_engine(f"sqlite:///{Path(scratch) / 'catalog.db'}")
        database = "PostgreSQL" if args.postgres else "SQLite"
        print(f"schemathesis run over the served app ({database}), seed {seed}, {args.workers} worker(s)")  # noqa: T201
        try:
            with served_app(engine) as (base, token):
                counts = run_schemathesis(
                    base, token, Path(scratch), seed=seed, max_time_seconds=args.seconds, workers=args.workers
                )
            print(counts.summary(), flush=True)  # noqa: T201
        finally:
            engine.dispose()
            if args.postgres:
                with admin.begin() as connection:
                    connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
                admin.dispose()
    for code, (count, operations) in sorted(counts.failures.items()):
        print(f"  {code}: {count} in {', '.join(operations)}")  # noqa: T201
    failed = bool(counts.defects) or "validation_mismatch" in counts.warnings or bool(counts.errors)
    if failed:
        print(counts.output[-20000:])  # noqa: T201
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
