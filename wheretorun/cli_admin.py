"""`wheretorun prices import ...` and `wheretorun keys create|list|revoke` (registered in `cli.py`).

Each command runs in one transaction (`session_factory.begin()`, in `_transaction`): an error
leaves the database as it was. Exit codes: 0 done, 1 failed (conflict, unreachable URL), 2 invalid
input or a malformed file, 3 the import was held for review (repeat with --force to apply it).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from wheretorun.errors import InvalidInput, MalformedFile, WheretorunError
from wheretorun.scopes import Scope
from wheretorun.settings import get_settings

if TYPE_CHECKING:  # the database modules load when a command runs (`recommend` may not need them)
    from sqlalchemy.orm import Session

    from wheretorun.pricing.models import ImportRun

__all__ = ["keys_app", "prices_app"]

prices_app = typer.Typer(help="Import prices into the catalog.", no_args_is_help=True)
keys_app = typer.Typer(help="API keys for the write API.", no_args_is_help=True)
console = Console()
_SHOW_PROGRESS_FROM = 2000  # rows to write before a progress bar is worth showing


class FileFormat(StrEnum):
    skypilot = "skypilot"
    litellm = "litellm"
    canonical = "canonical"


@contextmanager
def _transaction() -> Iterator[Session]:
    """One transaction on the configured database (migrated, and seeded if empty, first)."""
    from wheretorun.db import create_db_engine, make_session_factory
    from wheretorun.pricing.bootstrap import prepare_database

    engine = create_db_engine(get_settings().resolved_database_url())
    try:
        prepare_database(engine)
        with make_session_factory(engine).begin() as session:
            yield session
    finally:
        engine.dispose()


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


# --- prices import -------------------------------------------------------------------------------


@prices_app.command("import")
def prices_import(
    format: Annotated[FileFormat, typer.Option("--format", help="The file's format.")],
    file: Annotated[Path | None, typer.Option(help="A local file.", exists=True, dir_okay=False)] = None,
    url: Annotated[
        str | None, typer.Option(help="An http(s) URL on WHERETORUN_IMPORT_ALLOWED_HOSTS.")
    ] = None,
    provider: Annotated[
        str | None, typer.Option(help="The cloud of a SkyPilot file (aws, gcp, ...).")
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the diff; write nothing.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Apply even if held for review.")] = False,
) -> None:
    """Import a SkyPilot vms.csv, LiteLLM's price JSON or a canonical hardware/energy price file."""
    from wheretorun.pricing import imports
    from wheretorun.security import cli_actor

    if (file is None) == (url is None):
        _fail(InvalidInput("--file/--url", "give exactly one of --file and --url"))
    settings = get_settings()
    spec = imports.ImportSpec(format.value, provider, dry_run=dry_run, force=force)
    try:
        with _transaction() as session, _WriteProgress() as progress:
            options: dict[str, Any] = {
                "lock_timeout_s": settings.import_lock_timeout_seconds,
                "on_progress": progress.update,
            }
            if url is not None:
                run = imports.import_url(
                    session, spec, url, cli_actor(), imports.fetcher_from_settings(settings), **options
                )
            else:
                assert file is not None
                content = file.read_bytes()
                run = imports.import_content(session, spec, content, file.name, cli_actor(), **options)
    except WheretorunError as error:
        _fail(error)
    _print_run(run)
    if run.status == "held":
        raise typer.Exit(3)


class _WriteProgress:
    """A rich progress bar over the rows written, shown once an import is big enough to wait for."""

    def __init__(self) -> None:
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> _WriteProgress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def update(self, done: int, total: int) -> None:
        if self._progress is None:
            if total < _SHOW_PROGRESS_FROM:
                return
            self._progress = Progress(
                TextColumn("writing prices"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
            )
            self._progress.start()
            self._task = self._progress.add_task("write", total=total)
        assert self._task is not None
        self._progress.update(self._task, completed=done)


def _print_run(run: ImportRun) -> None:
    diff = run.diff
    source = run.source_url or run.filename
    what = f"{run.format} ({run.provider})" if run.provider else run.format
    title = f"import {run.id or '(dry run)'} of {what} from {source}: {run.status}"
    counts = Table(title=title)
    for name in ("table", "added", "changed", "removed", "unchanged"):
        counts.add_column(name, justify="left" if name == "table" else "right")
    for table, numbers in diff.get("by_table", {}).items():
        counts.add_row(
            table, *(f"{numbers[name]:,}" for name in ("added", "changed", "removed", "unchanged"))
        )
    console.print(counts)
    changed = diff.get("examples", {}).get("changed", [])
    if changed:
        moves = Table(title=f"largest changes (of {diff['changed']:,})")
        for name in ("item", "price", "old", "new", "change"):
            moves.add_column(name, justify="left" if name in ("item", "price") else "right")
        for example in changed:
            for price in example["prices"]:
                pct = price["change_pct"]
                shown = f"{pct:+.2f}%" if pct is not None else ""
                moves.add_row(
                    example["item"], price["field"], price["old"] or "-", price["new"] or "-", shown
                )
        console.print(moves)
    for kind in ("added", "removed"):
        examples = diff.get("examples", {}).get(kind, [])
        if examples:
            items = ", ".join(example["item"] for example in examples)
            console.print(f"{kind} ({diff[kind]:,}): {items}{' ...' if diff[kind] > len(examples) else ''}")
    if run.hold_reasons:
        reasons = Table(title="held for review" if run.status == "held" else "would be held for review")
        for name in ("kind", "item", "detail"):
            reasons.add_column(name)
        for reason in run.hold_reasons:
            reasons.add_row(reason["kind"], reason["item"], reason["detail"])
        console.print(reasons)
        if run.status == "held":
            console.print("nothing was applied; repeat with --force to apply it anyway")
    if run.catalog_version_id:
        console.print(f"catalog version {run.catalog_version_id} created")


def _fail(error: WheretorunError) -> NoReturn:
    console.print(f"[bold red]{error.title}[/]: {error.detail}")
    if isinstance(error, MalformedFile):
        problems = Table(title="problems")
        for name in ("row", "column", "reason"):
            problems.add_column(name)
        for problem in error.problems:
            problems.add_row(str(problem.row or ""), problem.column or "", problem.reason)
        console.print(problems)
    raise typer.Exit(2 if isinstance(error, MalformedFile | InvalidInput) else 1)


# --- keys ----------------------------------------------------------------------------------------


@keys_app.command("create")
def keys_create(
    scope: Annotated[Scope, typer.Option(help="read < write < admin.")] = Scope.WRITE,
    name: Annotated[str, typer.Option(help="Who or what uses the key.")] = "unnamed",
) -> None:
    """Create a key and print its token: it is shown once and stored only as a hash."""
    from wheretorun.security import cli_actor, create_api_key

    try:
        with _transaction() as session:
            key, token = create_api_key(session, name, scope, cli_actor(), _now())
            key_id = key.id
    except WheretorunError as error:
        _fail(error)
    console.print(f"key {key_id} ({name}, scope {scope.value}). The token, shown only now:")
    print(token)  # noqa: T201 - plain stdout, so it can be captured by a script


@keys_app.command("list")
def keys_list() -> None:
    """Every key: id, name, scope, the first characters of its token, created and revoked dates."""
    from wheretorun.security import list_api_keys

    with _transaction() as session:
        table = Table(title="API keys")
        for name in ("id", "name", "scope", "token starts", "created", "revoked"):
            table.add_column(name)
        for key in list_api_keys(session):
            revoked = f"{key.revoked_at:%Y-%m-%d %H:%M}" if key.revoked_at else ""
            table.add_row(
                str(key.id), key.name, key.scope, key.prefix, f"{key.created_at:%Y-%m-%d %H:%M}", revoked
            )
    console.print(table)


@keys_app.command("revoke")
def keys_revoke(key_id: Annotated[int, typer.Argument(help="The key's id (see `keys list`).")]) -> None:
    """Revoke a key: it stops working at once and stays listed (the audit log names it)."""
    from wheretorun.security import cli_actor, revoke_api_key

    try:
        with _transaction() as session:
            key = revoke_api_key(session, key_id, cli_actor(), _now())
            name = key.name
    except WheretorunError as error:
        _fail(error)
    console.print(f"key {key_id} ({name}) revoked")
