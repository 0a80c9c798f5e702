"""Latency of the catalog list endpoints over the full seeded catalog.

    .venv/bin/python bench/list_latency.py                      # a fresh SQLite file
    .venv/bin/python bench/list_latency.py --postgres postgresql+psycopg://postgres@127.0.0.1:5432/test

Requests go through the ASGI app in-process (no network), so the figures are the app's own time:
routing, validation, the queries and serialisation. Prints p50 / p95 / mean in ms per request.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from sqlalchemy import Engine, text

from wheretorun.api.app import create_app
from wheretorun.api.inprocess import InProcessClient
from wheretorun.db import create_db_engine
from wheretorun.pricing.bootstrap import prepare_database
from wheretorun.settings import Settings

QUERIES: list[tuple[str, dict[str, object]]] = [
    ("/v1/accelerators", {"limit": 50}),
    ("/v1/accelerators", {"min_memory_gb": 40, "sort": "-memory_bandwidth_gb_s", "limit": 500}),
    ("/v1/models", {"limit": 50}),
    ("/v1/cloud-offers", {"limit": 50}),
    (
        "/v1/cloud-offers",
        {"accelerator": "H100", "pricing_mode": "spot", "sort": "spot_usd_per_accelerator_hour"},
    ),
    ("/v1/cloud-offers", {"min_memory_gb": 80, "max_usd_per_hour": 40, "limit": 500}),
    ("/v1/api-prices", {"limit": 50}),
    ("/v1/api-prices", {"mode": "chat", "sort": "input_usd_per_million_tokens", "limit": 500}),
    ("/v1/catalog", {}),
]


def _engine(postgres_url: str | None, workdir: Path) -> tuple[Engine, str | None]:
    if postgres_url is None:
        return create_db_engine(f"sqlite:///{workdir / 'bench.db'}"), None
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    admin = create_db_engine(postgres_url)
    with admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    admin.dispose()
    return create_db_engine(postgres_url, connect_args={"options": f"-csearch_path={schema}"}), schema


def _time(client: InProcessClient, path: str, params: dict[str, object], repeats: int) -> list[float]:
    client.get(path, params=params).raise_for_status()  # warm-up
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        client.get(path, params=params).raise_for_status()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--postgres", metavar="URL", help="benchmark on this PostgreSQL (a scratch schema)")
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as workdir:
        engine, schema = _engine(args.postgres, Path(workdir))
        start = time.perf_counter()
        report = prepare_database(engine)
        print(
            f"database: {engine.dialect.name}; migrate + seed {time.perf_counter() - start:.1f} s: {report}"
        )
        app = create_app(Settings(auto_seed=False), engine=engine)
        with InProcessClient(app) as client:
            print(f"{'endpoint':<95} {'rows':>6} {'p50 ms':>8} {'p95 ms':>8} {'mean ms':>8}")
            for path, params in QUERIES:
                body = client.get(path, params=params).json()
                rows = len(body.get("items", [])) if isinstance(body, dict) else 0
                samples = sorted(_time(client, path, params, args.repeats))
                p95 = samples[int(0.95 * (len(samples) - 1))]
                label = path + ("?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else "")
                print(
                    f"{label:<95} {rows:>6} {statistics.median(samples):>8.1f} {p95:>8.1f} "
                    f"{statistics.fmean(samples):>8.1f}"
                )
        engine.dispose()
        if schema is not None:
            admin = create_db_engine(args.postgres)
            with admin.begin() as connection:
                connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
            admin.dispose()


if __name__ == "__main__":
    main()
