"""The committed OpenAPI snapshot, `openapi/openapi.json`: write it, or check it is up to date.

    python -m wheretorun.openapi --check   # exit 1 and print a unified diff when the API changed
    python -m wheretorun.openapi --write   # regenerate it; review `git diff openapi/` and commit

The document is the API contract: a change to it is a change to every client, so it is reviewed
as a diff rather than discovered. It is built from `create_app()` without touching a database.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path
from typing import Any

from wheretorun.api.app import create_app
from wheretorun.db import create_db_engine
from wheretorun.settings import Settings

__all__ = ["SNAPSHOT", "current_document", "diff", "main", "render"]

SNAPSHOT = Path(__file__).resolve().parent.parent / "openapi" / "openapi.json"
REGENERATE = "python -m wheretorun.openapi --write"


def current_document() -> dict[str, Any]:
    """The live OpenAPI document of the app (an unused in-memory SQLite engine: no I/O)."""
    engine = create_db_engine("sqlite://")
    try:
        return create_app(Settings(auto_seed=False), engine=engine).openapi()
    finally:
        engine.dispose()


def render(document: dict[str, Any]) -> str:
    """Stable text: sorted keys, two-space indent, a final newline (diffs stay small)."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def diff(snapshot_text: str, live_text: str) -> str:
    """A unified diff from the committed snapshot to the live document ('' when equal)."""
    return "".join(
        difflib.unified_diff(
            snapshot_text.splitlines(keepends=True),
            live_text.splitlines(keepends=True),
            fromfile="openapi/openapi.json (committed)",
            tofile="openapi/openapi.json (live app)",
        )
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m wheretorun.openapi", description=(__doc__ or "").split("\n")[0]
    )
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="regenerate the snapshot")
    action.add_argument("--check", action="store_true", help="fail when the snapshot is out of date")
    parser.add_argument("--path", type=Path, default=SNAPSHOT, help=f"default: {SNAPSHOT}")
    args = parser.parse_args(argv)

    live = render(current_document())
    if args.write:
        args.path.parent.mkdir(parents=True, exist_ok=True)
        args.path.write_text(live, encoding="utf-8")
        sys.stdout.write(f"wrote {args.path}\n")
        return 0
    committed = args.path.read_text(encoding="utf-8") if args.path.exists() else ""
    changes = diff(committed, live)
    if changes:
        sys.stdout.write(changes)
        sys.stdout.write(f"\nThe OpenAPI document changed. Review the diff, then run `{REGENERATE}`.\n")
        return 1
    sys.stdout.write(f"{args.path} is up to date\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
