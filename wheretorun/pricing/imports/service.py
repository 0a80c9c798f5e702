"""Importing a price file: check it, diff it against the catalog, guard, and apply it as a new
catalog version. The caller owns the transaction (the API's request session, or the CLI's
`session_factory.begin()`); nothing here commits, so a failure anywhere leaves the catalog as it was.

    read and check the file (no database: the slow part, so no lock is held meanwhile)
      -> lock (not for dry runs) -> check it against the catalog -> diff each table it covers -> guards
      dry run         -> return the diff; nothing is written, not even a record of the run
      guard tripped   -> record the run as `held` with its reasons (no price written), unless `force`
      nothing changed -> record the run as `unchanged`; no new catalog version (idempotent re-runs)
      otherwise       -> new catalog version: changed and removed rows get `effective_to` = now,
                         changed and added rows are inserted with `effective_from` = now
    every recorded run is written to the audit log

Prices are never updated in place or deleted: a past catalog version stays readable `as_of` its
time. A URL whose server says 304 Not Modified (to the validators of its last import) is recorded
as `not_modified` and not read at all.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from sqlalchemy import func, insert, or_, select, update
from sqlalchemy.orm import Session

from wheretorun.errors import Conflict, InvalidInput, NotFound
from wheretorun.pricing import repositories as repo
from wheretorun.pricing.imports.checks import decode_text
from wheretorun.pricing.imports.diff import (
    Current,
    HoldReason,
    TableDiff,
    diff_table,
    hold_reasons,
    summarise,
)
from wheretorun.pricing.imports.fetch import Fetcher, Validators
from wheretorun.pricing.imports.lock import lock_catalog_for_import
from wheretorun.pricing.imports.parse import (
    Coverage,
    Format,
    IncomingPrices,
    incoming_prices,
    read_price_file,
)
from wheretorun.pricing.imports.tables import Key, Row
from wheretorun.pricing.models import CatalogVersion, ImportRun
from wheretorun.security import Actor, record_audit

__all__ = [
    "ImportSpec",
    "Progress",
    "SourceFile",
    "import_content",
    "import_url",
    "list_import_runs",
    "get_import_run",
    "run_import",
]

Progress = Callable[[int, int], None]  # (rows written so far, rows to write)
_BATCH = 1000
_PROVIDER = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
T = TypeVar("T")


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass(frozen=True)
class ImportSpec:
    """What to import and how. `provider` is the cloud of a SkyPilot file (and only of one)."""

    format: Format
    provider: str | None = None
    dry_run: bool = False
    force: bool = False  # apply even if held for review; refetch a URL even if unchanged

    def checked(self) -> ImportSpec:
        if self.format == "skypilot":
            provider = (self.provider or "").strip().lower()
            if not _PROVIDER.fullmatch(provider):
                raise InvalidInput(
                    "body.provider", "a SkyPilot file needs its cloud, e.g. aws (a-z, 0-9, -, _)"
                )
            return dataclasses.replace(self, provider=provider)
        if self.provider:
            raise InvalidInput(
                "body.provider", f"only SkyPilot files take a provider, not {self.format} files"
            )
        return self


@dataclass(frozen=True)
class SourceFile:
    """The bytes of a price file and where they came from."""

    content: bytes
    kind: Literal["upload", "url"]
    fetched_at: dt.datetime
    filename: str | None = None
    url: str | None = None
    etag: str | None = None
    last_modified: str | None = None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.content).hexdigest()

    @property
    def label(self) -> str:
        """What the imported rows cite as their source."""
        if self.url:
            return self.url
        return f"uploaded file {self.filename or '(content)'} (sha256 {self.sha256[:12]})"


# --- entry points --------------------------------------------------------------------------------


def import_content(
    session: Session,
    spec: ImportSpec,
    content: bytes,
    filename: str | None,
    actor: Actor,
    *,
    lock_timeout_s: float = 30.0,
    clock: Callable[[], dt.datetime] = _utcnow,
    on_progress: Progress | None = None,
) -> ImportRun:
    """Import an uploaded file."""
    source = SourceFile(content=content, kind="upload", fetched_at=clock(), filename=filename)
    return run_import(
        session, spec, source, actor, lock_timeout_s=lock_timeout_s, clock=clock, on_progress=on_progress
    )


def import_url(
    session: Session,
    spec: ImportSpec,
    url: str,
    actor: Actor,
    fetcher: Fetcher,
    *,
    lock_timeout_s: float = 30.0,
    clock: Callable[[], dt.datetime] = _utcnow,
    on_progress: Progress | None = None,
) -> ImportRun:
    """Fetch `url` (conditionally, unless a dry run or forced) and import it."""
    spec = spec.checked()
    validators = None if spec.dry_run or spec.force else _last_validators(session, url)
    fetched = fetcher.fetch(url, validators)
    if fetched.content is None:
        return _record_not_modified(session, spec, url, fetched.fetched_at, validators, actor, clock)
    source = SourceFile(
        content=fetched.content,
        kind="url",
        fetched_at=fetched.fetched_at,
        url=url,  # as asked for (not where a redirect led), so its validators are found next time
        etag=fetched.etag,
        last_modified=fetched.last_modified,
    )
    return run_import(
        session, spec, source, actor, lock_timeout_s=lock_timeout_s, clock=clock, on_progress=on_progress
    )


def run_import(
    session: Session,
    spec: ImportSpec,
    source: SourceFile,
    actor: Actor,
    *,
    lock_timeout_s: float = 30.0,
    clock: Callable[[], dt.datetime] = _utcnow,
    on_progress: Progress | None = None,
) -> ImportRun:
    """Diff `source` against the catalog and apply it (see the module docstring).

    Returns the run: persisted for applied, unchanged and held imports; a transient object (no id)
    for dry runs. `on_progress` is called after each batch of rows written.
    """
    spec = spec.checked()
    # Reading and checking the file is the slow part: done before the lock, without the database.
    read = read_price_file(spec.format, spec.provider, decode_text(source.content), source.label)
    if not spec.dry_run:
        lock_catalog_for_import(session, lock_timeout_s)  # before any read, so the diff sees the latest
    incoming = incoming_prices(session, read)
    based_on = repo.latest_catalog_version(session)
    diffs = [
        diff_table(coverage.table, _current_rows(session, coverage, rows), rows)
        for coverage, rows in incoming.parts
    ]
    reasons = hold_reasons(diffs, _priced_elsewhere(session, incoming, diffs))
    now = clock()
    run = _new_run(spec, source, actor, now, based_on, summarise(diffs), reasons)
    if spec.dry_run:
        run.status = "dry_run"
        return run
    if based_on is not None and now <= based_on.created_at:
        raise Conflict(f"the clock ({now.isoformat()}) is not after the newest catalog version's time")
    if reasons and not spec.force:
        run.status = "held"
    elif not any(diff.has_changes for diff in diffs):
        run.status = "unchanged"
    else:
        version = _new_version(session, spec, source, run.diff, now)
        _write(session, diffs, version.id, now, source.fetched_at, on_progress)
        run.status = "applied"
        run.catalog_version_id = version.id
    session.add(run)
    session.flush()
    record_audit(session, actor, f"import.{run.status}", f"import:{run.id}", _audit_detail(run), now)
    return run


# --- reads ---------------------------------------------------------------------------------------


def list_import_runs(
    session: Session, limit: int, offset: int, status: str | None = None
) -> tuple[list[ImportRun], int]:
    """Newest first, with the total count."""
    query = select(ImportRun)
    if status:
        query = query.where(ImportRun.status == status)
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    runs = session.scalars(query.order_by(ImportRun.id.desc()).limit(limit).offset(offset))
    return list(runs), total


def get_import_run(session: Session, run_id: int) -> ImportRun:
    run = session.get(ImportRun, run_id)
    if run is None:
        raise NotFound("import", run_id)
    return run


# --- the steps -----------------------------------------------------------------------------------


def _current_rows(session: Session, coverage: Coverage, incoming: dict[Key, Row]) -> dict[Key, Current]:
    """The current rows in the file's scope (only those it lists, when it is not a complete list)."""
    table = coverage.table
    model = table.model
    query = select(model.id, *(getattr(model, name) for name in table.compared)).where(
        model.effective_to.is_(None), *(getattr(model, name) == value for name, value in coverage.where)
    )
    rows: dict[Key, Current] = {}
    for row_id, *values in session.execute(query):
        current = Current(row_id, dict(zip(table.compared, values, strict=True)))
        key = table.key_of(current.values)
        if coverage.complete or key in incoming:
            rows[key] = current
    return rows


def _priced_elsewhere(
    session: Session, incoming: IncomingPrices, diffs: Sequence[TableDiff]
) -> dict[str, set[str]]:
    """Subjects losing their price in scope that keep a usable price outside it (other providers)."""
    found: dict[str, set[str]] = {}
    for (coverage, _), diff in zip(incoming.parts, diffs, strict=True):
        if not diff.losing or not coverage.where:
            continue
        table, model = coverage.table, coverage.table.model
        subject = getattr(model, table.subject)
        outside = or_(*(getattr(model, name) != value for name, value in coverage.where))
        query = select(subject).where(
            model.effective_to.is_(None), outside, subject.in_(sorted(diff.losing)), table.priced_sql()
        )
        found[table.name] = set(session.scalars(query.distinct()))
    return found


def _new_run(
    spec: ImportSpec,
    source: SourceFile,
    actor: Actor,
    now: dt.datetime,
    based_on: CatalogVersion | None,
    diff: dict[str, Any],
    reasons: list[HoldReason],
) -> ImportRun:
    return ImportRun(
        created_at=now,
        status="",
        format=spec.format,
        provider=spec.provider,
        source_kind=source.kind,
        source_url=source.url,
        filename=source.filename,
        sha256=source.sha256,
        size_bytes=len(source.content),
        etag=source.etag,
        last_modified=source.last_modified,
        fetched_at=source.fetched_at,
        force=spec.force,
        based_on_version_id=based_on.id if based_on else None,
        api_key_id=actor.key_id,
        actor=actor.label,
        diff=diff,
        hold_reasons=[reason.as_dict() for reason in reasons],
    )


def _new_version(
    session: Session, spec: ImportSpec, source: SourceFile, diff: dict[str, Any], now: dt.datetime
) -> CatalogVersion:
    what = f"{spec.format} ({spec.provider})" if spec.provider else spec.format
    version = CatalogVersion(
        created_at=now,
        kind="import",
        description=(
            f"Import of {what} from {source.url or source.filename or 'uploaded content'}: "
            f"{diff['added']} added, {diff['changed']} changed, {diff['removed']} removed"
        ),
        sources=[
            {
                "format": spec.format,
                "provider": spec.provider,
                "url": source.url,
                "filename": source.filename,
                "sha256": source.sha256,
                "size_bytes": len(source.content),
                "fetched_at": source.fetched_at.isoformat(),
                "etag": source.etag,
                "last_modified": source.last_modified,
            }
        ],
    )
    session.add(version)
    session.flush()
    return version


def _write(
    session: Session,
    diffs: Sequence[TableDiff],
    version_id: int,
    now: dt.datetime,
    fetched_at: dt.datetime,
    on_progress: Progress | None,
) -> None:
    """End the changed and removed rows, then insert the new ones (the order the unique indexes need)."""
    total = sum(diff.writes for diff in diffs)
    done = 0
    for diff in diffs:
        model = diff.table.model
        ending = [old.id for old, _ in diff.changed] + [old.id for old in diff.removed]
        for ids in _batches(ending):
            session.execute(
                update(model).where(model.id.in_(ids)).values(effective_to=now),
                execution_options={"synchronize_session": False},
            )
            done += len(ids)
            if on_progress:
                on_progress(done, total)
        provenance = {
            "fetched_at": fetched_at,
            "effective_from": now,
            "effective_to": None,
            "catalog_version_id": version_id,
        }
        new_rows = [*diff.added, *(new for _, new in diff.changed)]
        for rows in _batches(new_rows):
            session.execute(insert(model), [{**row, **provenance} for row in rows])
            done += len(rows)
            if on_progress:
                on_progress(done, total)


def _batches(items: Sequence[T]) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), _BATCH):
        yield items[start : start + _BATCH]


def _last_validators(session: Session, url: str) -> Validators | None:
    """The ETag / Last-Modified of the newest import of `url` that reached the catalog."""
    query = (
        select(ImportRun)
        .where(ImportRun.source_url == url, ImportRun.status.in_(("applied", "unchanged", "not_modified")))
        .order_by(ImportRun.id.desc())
        .limit(1)
    )
    last = session.scalars(query).first()
    if last is None or not (last.etag or last.last_modified):
        return None
    return Validators(etag=last.etag, last_modified=last.last_modified)


def _record_not_modified(
    session: Session,
    spec: ImportSpec,
    url: str,
    fetched_at: dt.datetime,
    validators: Validators | None,
    actor: Actor,
    clock: Callable[[], dt.datetime],
) -> ImportRun:
    now = clock()
    based_on = repo.latest_catalog_version(session)
    source = SourceFile(
        content=b"",
        kind="url",
        fetched_at=fetched_at,
        url=url,
        etag=validators.etag if validators else None,
        last_modified=validators.last_modified if validators else None,
    )
    run = _new_run(spec, source, actor, now, based_on, summarise([]), [])
    run.status = "not_modified"
    run.sha256 = None
    session.add(run)
    session.flush()
    record_audit(session, actor, "import.not_modified", f"import:{run.id}", _audit_detail(run), now)
    return run


def _audit_detail(run: ImportRun) -> dict[str, Any]:
    return {
        "format": run.format,
        "provider": run.provider,
        "source": run.source_url or run.filename,
        "sha256": run.sha256,
        "catalog_version": run.catalog_version_id,
        "counts": {name: run.diff.get(name, 0) for name in ("added", "changed", "removed", "unchanged")},
        "hold_reasons": len(run.hold_reasons),
        "forced": run.force,
    }
