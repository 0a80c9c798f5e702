"""Latency of a recommendation over the full seeded catalog, in-process (no HTTP).

    .venv/bin/python bench/recommend_latency.py [--repeats 20]

For each example workload in examples/: p50 / p99 wall time of `recommend_for` (request parsing,
the cached catalog snapshot, the engine, the response) after one warm-up, the candidates each
evaluates, and candidates per second. Also prints the cost of building the snapshot once.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import yaml

from wheretorun.db import create_db_engine, make_session_factory
from wheretorun.pricing.bootstrap import prepare_database
from wheretorun.pricing.snapshot import SnapshotCache, build_snapshot
from wheretorun.services.recommendation_schemas import RecommendationCreate
from wheretorun.services.recommendations import recommend_for

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(int(share * len(ordered)), len(ordered) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        engine = create_db_engine(f"sqlite:///{Path(workdir) / 'bench.db'}")
        prepare_database(engine)
        cache = SnapshotCache()
        with make_session_factory(engine)() as session:
            start = time.perf_counter()
            snapshot = build_snapshot(session)
            print(
                f"snapshot: {len(snapshot.cloud_offers):,} offers, {len(snapshot.api_prices):,} API prices, "
                f"built in {(time.perf_counter() - start) * 1000:.0f} ms (cached between requests)"
            )
            print(f"{'workload':<28} {'p50 ms':>8} {'p99 ms':>8} {'candidates':>11} {'candidates/s':>13}")
            for example in sorted(EXAMPLES.glob("*.yaml")):
                request = RecommendationCreate.model_validate(
                    yaml.safe_load(example.read_text(encoding="utf-8"))
                )
                result = recommend_for(session, request, cache)  # warm-up (and the snapshot)
                samples = []
                for _ in range(args.repeats):
                    start = time.perf_counter()
                    recommend_for(session, request, cache)
                    samples.append((time.perf_counter() - start) * 1000)
                p50 = statistics.median(samples)
                candidates = result.candidates_evaluated
                print(
                    f"{example.stem:<28} {p50:>8.1f} {_percentile(samples, 0.99):>8.1f} "
                    f"{candidates:>11,} {candidates / (p50 / 1000):>13,.0f}"
                )
        engine.dispose()


if __name__ == "__main__":
    main()
