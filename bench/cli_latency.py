"""Wall and CPU time of `wheretorun recommend FILE`, a new process each time (like hyperfine).

    .venv/bin/python bench/cli_latency.py [--repeats 10] [--file examples/tiny-prototype.yaml]

Runs on a scratch SQLite catalog and a scratch snapshot cache directory. The first run migrates and
seeds the database and builds the snapshot ("cold"); the next `--repeats` runs are "warm" (the
database seeded, the snapshot cached on disk, the OS file cache warm). CPU time is the child's
user + system time: on a machine shared with other work it is steadier than wall time.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of `command`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--file", type=Path, default=ROOT / "examples" / "tiny-prototype.yaml")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        env = {
            **os.environ,
            "DATABASE_URL": f"sqlite:///{Path(workdir) / 'catalog.db'}",
            "XDG_CACHE_HOME": str(Path(workdir) / "cache"),
        }
        command = [sys.executable, "-m", "wheretorun.cli", "recommend", str(args.file)]
        wall, cpu = _run(command, env)
        print(f"cold (migrate, seed, build the snapshot): {wall:.2f} s wall, {cpu:.2f} s CPU")
        runs = [_run(command, env) for _ in range(args.repeats)]
        walls, cpus = [r[0] for r in runs], [r[1] for r in runs]
        print(
            f"warm, {args.repeats} runs: wall median {statistics.median(walls):.2f} s "
            f"(min {min(walls):.2f}, max {max(walls):.2f}); "
            f"CPU median {statistics.median(cpus):.2f} s (min {min(cpus):.2f})"
        )
        print(f"load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
