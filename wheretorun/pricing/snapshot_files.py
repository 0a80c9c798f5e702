"""Catalog snapshots kept on disk between processes, so `wheretorun recommend` skips the build.

Building a snapshot reads every price in force (~0.4 s of CPU over the seeded catalog); a CLI
process would pay it on every call. `SnapshotFiles` keeps each snapshot it is handed as one pickle
file per key in a cache directory (`$XDG_CACHE_HOME/wheretorun/snapshots`, or
`~/.cache/wheretorun/snapshots`). `SnapshotCache` asks it before building and gives it what it built.

The key is the one `SnapshotCache` uses in memory (catalog version, moment, price-override
fingerprint) plus what makes a file safe to share between processes:
- the database (its URL without password, and the creation time of the catalog version, so a
  database file deleted and seeded again never matches an old file of the same version number);
- the code: a digest of this package's engine and pricing sources and the Python version, so a file
  written by another version of the code (other dataclass fields) is never read back.

Writes are atomic (a temporary file in the same directory, then `os.replace`), so a reader running
beside a writer sees the old file, the new file or none, never half a file; a file that cannot be
read is treated as absent.

A *stamp* lets a later process find the snapshot without SQLAlchemy (the CLI's warm path, in
`cli_recommend.py`: ~0.4 s of imports saved). For a SQLite catalog, `sqlite_catalog_stamp` reads,
with the standard library's `sqlite3`, what decides which snapshot is current, and a little more:
the migrations applied, the catalog versions (how many, the newest id and creation time), every
price override's id, start and end, and the day. Whatever changes the key `SnapshotCache` gives a
snapshot (a new catalog version, an override created or ended, a new day) changes the stamp.
`stamp_last` links the stamp to the snapshot file last loaded or saved (a hard link named by the
stamp); the CLI records a stamp only when it reads the same before and after its own run through
the database, so the link never names a snapshot of another state. `load_stamped` reads it back.

The files are pickles: the directory is the user's own (created 0700),
trusted like the SQLite catalog file beside it. Slotted dataclasses (every engine value) are
pickled as their field values and restored without `dataclasses`' generic `__setstate__`, which
looks the fields up again for each of the ~9,000 objects: loading takes ~0.05 s instead of ~0.2 s.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import hashlib
import os
import pickle
import sqlite3
import sys
import tempfile
import threading
from functools import cache
from pathlib import Path
from typing import Any

from wheretorun.engine.catalog import CatalogSnapshot

__all__ = [
    "DatabaseStamp",
    "SnapshotFiles",
    "code_fingerprint",
    "sqlite_catalog_stamp",
    "default_snapshot_dir",
]

_PACKAGE = Path(__file__).resolve().parent.parent
_DATA = _PACKAGE / "pricing" / "data"
_KEPT_FILES = 8  # the newest files kept (of snapshots, and of stamps); older ones are removed

DatabaseStamp = tuple[object, ...]


def default_snapshot_dir() -> Path:
    """`$XDG_CACHE_HOME/wheretorun/snapshots`, or `~/.cache/wheretorun/snapshots`."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "wheretorun" / "snapshots"


@cache
def code_fingerprint() -> str:
    """A digest of what shapes a snapshot: the engine's values, how pricing builds them (code and
    the data files it reads; not the seed's source catalogs, which shape the database instead) and
    the migrations (a new one means the database must be upgraded first: a stamp of the old code
    never matches)."""
    digest = hashlib.blake2b(sys.version.encode(), digest_size=16)
    files = [
        *(_PACKAGE / "engine").rglob("*.py"),
        *(_PACKAGE / "pricing").rglob("*.py"),
        *(_PACKAGE / "migrations").rglob("*.py"),
        *(path for path in _DATA.rglob("*") if path.relative_to(_DATA).parts[0] != "sources"),
    ]
    for path in sorted(files):
        if path.is_file():
            digest.update(str(path.relative_to(_PACKAGE)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def sqlite_catalog_stamp(url: str) -> DatabaseStamp | None:
    """What identifies the catalog state in the SQLite file at `url` today (see the module
    docstring), or None: not a SQLite file (PostgreSQL, in memory), no such file, or not a
    catalog (no tables yet)."""
    if not url.startswith("sqlite"):
        return None
    database = url.split("///", 1)[-1].split("?", 1)[0]
    if not database or database == ":memory:" or not Path(database).is_file():
        return None
    path = Path(database).resolve()
    try:
        with contextlib.closing(sqlite3.connect(path)) as connection:
            heads = connection.execute("SELECT version_num FROM alembic_version ORDER BY 1").fetchall()
            versions = connection.execute(
                "SELECT count(*), max(id), max(created_at) FROM catalog_versions"
            ).fetchone()
            overrides = connection.execute(
                "SELECT id, effective_from, effective_to FROM price_overrides ORDER BY id"
            ).fetchall()
    except sqlite3.Error:
        return None
    day = dt.datetime.now(dt.UTC).date().isoformat()
    return (str(path), day, tuple(heads), tuple(versions), tuple(overrides))


@cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(item.name for item in dataclasses.fields(cls))


def _restored(cls: type, values: tuple[Any, ...]) -> Any:
    """A slotted dataclass instance from its field values, as pickle's default `__setstate__`
    would set them (no `__init__`, frozen or not)."""
    value: Any = object.__new__(cls)
    for name, item in zip(_field_names(cls), values, strict=True):
        object.__setattr__(value, name, item)
    return value


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        cls = type(obj)
        if dataclasses.is_dataclass(cls) and "__slots__" in cls.__dict__:
            return _restored, (cls, tuple(getattr(obj, name) for name in _field_names(cls)))
        return NotImplemented


class SnapshotFiles:
    """Snapshots pickled in `directory`, one file per key (see the module docstring)."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or default_snapshot_dir()
        self._last_path: Path | None = None  # the snapshot file last loaded or saved

    def _path(self, key: tuple[object, ...], suffix: str = ".pickle") -> Path:
        name = hashlib.blake2b(repr((code_fingerprint(), key)).encode(), digest_size=16).hexdigest()
        return self.directory / f"{name}{suffix}"

    def load(self, key: tuple[object, ...]) -> CatalogSnapshot | None:
        """The snapshot saved under `key`, or None (never saved, or unreadable)."""
        return self._read(self._path(key))

    def load_stamped(self, stamp: DatabaseStamp) -> CatalogSnapshot | None:
        """The snapshot `stamp_last` linked to `stamp`, or None."""
        return self._read(self._path(stamp, ".stamp"))

    def stamp_last(self, stamp: DatabaseStamp) -> None:
        """Link `stamp` to the snapshot file last loaded or saved (atomically; skipped where hard
        links cannot be made)."""
        if self._last_path is None:
            return
        temporary = self.directory / f"{os.getpid()}.{threading.get_ident()}.link"
        try:
            os.link(self._last_path, temporary)
            os.replace(temporary, self._path(stamp, ".stamp"))
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            return
        self._remove_old("*.stamp")
        self._remove_old("*.link", keep=0)  # left by a process killed between link and replace

    def _read(self, path: Path) -> CatalogSnapshot | None:
        try:
            with path.open("rb") as file:
                snapshot = pickle.load(file)
        except Exception:  # absent, truncated by a crash, or written by incompatible code
            return None
        if not isinstance(snapshot, CatalogSnapshot):
            return None
        self._last_path = path
        return snapshot

    def save(self, key: tuple[object, ...], snapshot: CatalogSnapshot) -> None:
        """Write atomically; a cache that cannot be written (read-only home) is skipped."""
        temporary: str | None = None
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            with os.fdopen(handle, "wb") as file:
                _Pickler(file, protocol=pickle.HIGHEST_PROTOCOL).dump(snapshot)
            os.replace(temporary, self._path(key))
        except OSError:
            if temporary is not None:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
            return
        self._last_path = self._path(key)
        self._remove_old("*.pickle")

    def _remove_old(self, pattern: str, keep: int = _KEPT_FILES) -> None:
        files = sorted(self.directory.glob(pattern), key=_modified, reverse=True)
        for old in files[keep:]:
            with contextlib.suppress(OSError):
                old.unlink()


def _modified(path: Path) -> float:
    """When the file was last written or linked (a stamp links an older snapshot file)."""
    try:
        return path.stat().st_ctime
    except OSError:
        return 0.0
