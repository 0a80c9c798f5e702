"""How a recommendation's cost grows with the catalog: the seeded cloud offers, then ten times as many.

    .venv/bin/python bench/offer_scaling.py [--repeats 10] [--factor 10]

Seeds an SQLite catalog in a temporary directory, builds its snapshot, and makes a second snapshot
whose cloud offers are the seeded ones repeated `--factor` times (each copy in its own region,
`<region>-copy<N>`, prices unchanged, so every copy is a distinct, equally priced offer). For each
example workload it times `engine.recommend` on both (median of `--repeats`, after one warm-up,
CPU time beside wall time since this machine is shared) and prints the ratio. The target is a
ratio of at most `--factor`: cost grows no faster than the catalog.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from wheretorun.db import create_db_engine, make_session_factory
from wheretorun.engine.catalog import CatalogSnapshot
from wheretorun.engine.recommend import recommend
from wheretorun.pricing.bootstrap import prepare_database
from wheretorun.pricing.repositories import resolve_accelerator_id
from wheretorun.pricing.snapshot import build_snapshot
from wheretorun.services.recommendation_schemas import RecommendationCreate
from wheretorun.services.snapshot_recommendations import engine_inputs

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _multiplied(snapshot: CatalogSnapshot, factor: int) -> CatalogSnapshot:
    step = max(offer.id for offer in snapshot.cloud_offers) + 1
    copies = tuple(
        dataclasses.replace(offer, id=offer.id + copy * step, region=f"{offer.region}-copy{copy}")
        for copy in range(1, factor)
        for offer in snapshot.cloud_offers
    )
    return dataclasses.replace(snapshot, cloud_offers=snapshot.cloud_offers + copies)


def _median_ms(arguments: tuple[Any, ...], repeats: int) -> tuple[float, float]:
    """(wall, CPU) medians in ms of `recommend(*arguments)` over `repeats` runs after a warm-up."""
    recommend(*arguments)
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        recommend(*arguments)
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--factor", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        engine = create_db_engine(f"sqlite:///{Path(workdir) / 'bench.db'}")
        prepare_database(engine)
        with make_session_factory(engine)() as session:
            snapshot = build_snapshot(session)
            bigger = _multiplied(snapshot, args.factor)
            print(
                f"cloud offers: {len(snapshot.cloud_offers):,} seeded, {len(bigger.cloud_offers):,} "
                f"multiplied (x{args.factor}); medians of {args.repeats}, ms wall (CPU)"
            )
            print(f"{'workload':<26} {'seeded':>16} {'multiplied':>16} {'ratio (CPU)':>12}")
            for example in sorted(EXAMPLES.glob("*.yaml")):
                text = example.read_text(encoding="utf-8")
                body = RecommendationCreate.model_validate(yaml.safe_load(text))
                resolve = partial(resolve_accelerator_id, session)
                inputs = engine_inputs(body.workload, body.constraints, body.assumptions, resolve)
                base = _median_ms((*inputs, snapshot), args.repeats)
                big = _median_ms((*inputs, bigger), args.repeats)
                print(
                    f"{example.stem:<26} {base[0]:>7.1f} ({base[1]:>6.1f}) {big[0]:>7.1f} ({big[1]:>6.1f}) "
                    f"{big[1] / base[1]:>11.1f}x"
                )
        engine.dispose()


if __name__ == "__main__":
    main()
