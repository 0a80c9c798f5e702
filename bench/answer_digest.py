"""The same answers before and after a change: every answer of a set of workloads, compared to the
byte with another checkout's (issue 14's "same answers", for changes meant to change only speed).

    .venv/bin/python bench/answer_digest.py --against DIR

`DIR` is another checkout (e.g. `git worktree add /tmp/before HEAD~1`). Seeds an SQLite catalog
in a temporary directory; then this checkout and the one in DIR (a child Python with
`PYTHONPATH=DIR`) each answer every workload on it: the example workloads, the generated
workloads of `tests/integration/test_same_answers.py`, and each inference example given in
requests per day at 6 other volumes (x 2^(k/2), k = -9, -5, -2, 3, 7, 11), with 8% monthly growth
and with a peak of 2.5x the average. An answer is the JSON the API sends (`as_of`, the moment of
the request, set aside). Prints how many are the same and names each that differs; exits 1 if
any does. Without `--against`, prints each workload's SHA-256 digest.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from scratch_databases import seeded_sqlite_url

ROOT = Path(__file__).resolve().parent.parent

_VOLUME_STEPS = (-9, -5, -2, 3, 7, 11)
_AS_OF = re.compile(rb'"as_of":"[^"]*"')


def workloads() -> list[tuple[str, dict[str, Any]]]:
    """(name, request body) of every workload compared (this checkout's, for both)."""
    if str(ROOT) not in sys.path:
        sys.path.append(str(ROOT))  # `tests`, for its generated workloads
    from tests.integration.test_same_answers import _examples, _generated

    named = [(f"example {index}", body) for index, body in enumerate(_examples())]
    named += [(f"generated {index}", body) for index, body in enumerate(_generated())]
    for index, body in enumerate(_examples()):
        workload = body["workload"]
        if workload["kind"] != "inference" or "requests_per_day" not in workload:
            continue
        for step in _VOLUME_STEPS:
            volume = workload["requests_per_day"] * 2 ** (step / 2)
            named.append(
                (
                    f"example {index} x 2^({step}/2)",
                    {**body, "workload": {**workload, "requests_per_day": volume}},
                )
            )
        named.append(
            (f"example {index}, 8% growth", {**body, "workload": {**workload, "growth_per_month": 0.08}})
        )
        named.append(
            (f"example {index}, peak 2.5x", {**body, "workload": {**workload, "peak_to_average": 2.5}})
        )
    return named


def digests(database: str, bodies: list[dict[str, Any]]) -> list[str]:
    """The SHA-256 of each body's answer, by the code on sys.path."""
    from recommendation_answers import answering

    from wheretorun.services.recommendation_schemas import RecommendationCreate

    answer = answering(database)
    written = (answer(RecommendationCreate.model_validate(body)) for body in bodies)
    return [hashlib.sha256(_AS_OF.sub(b'"as_of":"-"', answer_json)).hexdigest() for answer_json in written]


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":  # database, file of bodies
        bodies = json.loads(Path(sys.argv[3]).read_text(encoding="utf-8"))
        print(json.dumps(digests(sys.argv[2], bodies)))
        return
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--against", type=Path, default=None, help="Another checkout to compare with.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir, seeded_sqlite_url() as database:
        named = workloads()
        names, bodies = [name for name, _ in named], [body for _, body in named]
        ours = digests(database, bodies)
        if args.against is None:
            for name, digest in zip(names, ours, strict=True):
                print(f"{digest}  {name}")
            return
        env = {**os.environ, "PYTHONPATH": str(args.against.resolve())}
        bodies_file = Path(workdir) / "bodies.json"
        bodies_file.write_text(json.dumps(bodies), encoding="utf-8")
        child = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--child", database, str(bodies_file)],
            cwd=args.against,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        theirs = json.loads(child.stdout.strip().splitlines()[-1])
    differing = [name for name, a, b in zip(names, ours, theirs, strict=True) if a != b]
    print(f"{len(names) - len(differing)} of {len(names)} answers the same to the byte as {args.against}'s")
    for name in differing:
        print(f"differs: {name}")
    sys.exit(1 if differing else 0)


if __name__ == "__main__":
    main()
