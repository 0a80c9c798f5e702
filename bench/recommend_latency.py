"""Latency of a recommendation over the full seeded catalog, in-process (no HTTP).

    .venv/bin/python bench/recommend_latency.py [--repeats 20]

For each example workload in examples/: p50 / p99 wall time of `recommend_for` (request parsing,
the cached catalog snapshot, the engine, the response) after one warm-up, the examples taking
turns (one request of each, `--repeats` times over), the CPU time p50 / p99
(steadier than wall time on a shared machine), the p50 when the engine's memos (capacity tables,
training sizings, catalog columns; engine/caches.py) are computed afresh each time
(`clear_caches()` before each call: the first request of its shape; a repeat or a change of volume
or prices reuses them), the candidates each
evaluates, and candidates per second. Also prints the cost of building the snapshot once, and
the machine's speed at the start and the end of the run: the CPU time of a fixed pure-Python loop
(`_reference_loop_ms`), since a shared machine's speed drifts by a factor of two from one
minute to the next and the figures above are only comparable at comparable speeds.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import tempfile
import time
from pathlib import Path

import yaml

from wheretorun.db import create_db_engine, make_session_factory
from wheretorun.engine.caches import clear_caches
from wheretorun.pricing.bootstrap import prepare_database
from wheretorun.pricing.snapshot import SnapshotCache, build_snapshot
from wheretorun.services.recommendation_schemas import RecommendationCreate
from wheretorun.services.recommendations import recommend_for

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _reference_loop_ms() -> float:
    """CPU ms of summing 3,000,000 integers in a Python loop, best of three (~200 ms when this
    machine ran at its fastest; the bench figures scale roughly with it)."""
    best = math.inf
    for _ in range(3):
        start = time.process_time()
        total = 0
        for value in range(3_000_000):
            total += value
        best = min(best, (time.process_time() - start) * 1000)
    return best


def _percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(int(share * len(ordered)), len(ordered) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    print(f"machine reference at the start: {_reference_loop_ms():.0f} ms (a 3M-step Python loop)")
    with tempfile.TemporaryDirectory() as workdir:
        engine = create_db_engine(f"sqlite:///{Path(workdir) / 'bench.db'}")
        prepare_database(engine)
        cache = SnapshotCache(settle=True)  # as the API keeps it
        with make_session_factory(engine)() as session:
            start = time.perf_counter()
            snapshot = build_snapshot(session)
            print(
                f"snapshot: {len(snapshot.cloud_offers):,} offers, {len(snapshot.api_prices):,} API prices, "
                f"built in {(time.perf_counter() - start) * 1000:.0f} ms (cached between requests)"
            )
            print(
                f"{'workload':<26} {'p50 ms':>7} {'p99 ms':>7} {'CPU p50':>8} {'CPU p99':>8} "
                f"{'fresh p50':>10} {'candidates':>11} {'candidates/s':>13}"
            )
            examples = sorted(EXAMPLES.glob("*.yaml"))
            requests = [
                RecommendationCreate.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
                for path in examples
            ]
            results = [recommend_for(session, request, cache) for request in requests]  # warm-up
            samples: list[list[float]] = [[] for _ in examples]
            cpu: list[list[float]] = [[] for _ in examples]
            for _ in range(args.repeats):  # the examples take turns: a drift in speed hits all alike
                for index, request in enumerate(requests):
                    start, start_cpu = time.perf_counter(), time.process_time()
                    recommend_for(session, request, cache)
                    samples[index].append((time.perf_counter() - start) * 1000)
                    cpu[index].append((time.process_time() - start_cpu) * 1000)
            for index, (example, request) in enumerate(zip(examples, requests, strict=True)):
                fresh = []
                for _ in range(max(args.repeats // 4, 3)):
                    clear_caches()
                    start = time.perf_counter()
                    recommend_for(session, request, cache)
                    fresh.append((time.perf_counter() - start) * 1000)
                p50 = statistics.median(samples[index])
                candidates = results[index].candidates_evaluated
                print(
                    f"{example.stem:<26} {p50:>7.1f} {_percentile(samples[index], 0.99):>7.1f} "
                    f"{statistics.median(cpu[index]):>8.1f} {_percentile(cpu[index], 0.99):>8.1f} "
                    f"{statistics.median(fresh):>10.1f} {candidates:>11,} {candidates / (p50 / 1000):>13,.0f}"
                )
            print(f"load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        engine.dispose()
    print(f"machine reference at the end: {_reference_loop_ms():.0f} ms")


if __name__ == "__main__":
    main()
