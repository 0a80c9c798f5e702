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
read is treated as absent. The files are pickles: the directory is the user's own (created 0700),
trusted like the SQLite catalog file beside it. Slotted dataclasses (every engine value) are
pickled as their field values and restored without `dataclasses`' generic `__setstate__`, which
looks the fields up again for each of the ~9,000 objects: loading takes ~0.05 s instead of ~0.2 s.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import pickle
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from wheretorun.engine.catalog import CatalogSnapshot

__all__ = ["SnapshotFiles", "code_fingerprint", "default_snapshot_dir"]

_PACKAGE = Path(__file__).resolve().parent.parent
_KEPT_FILES = 8  # the newest files kept; older ones are removed when a new one is written


def default_snapshot_dir() -> Path:
    """`$XDG_CACHE_HOME/wheretorun/snapshots`, or `~/.cache/wheretorun/snapshots`."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "wheretorun" / "snapshots"


@cache
def code_fingerprint() -> str:
    """A digest of the sources that shape a snapshot (engine values, how pricing builds them)."""
    digest = hashlib.blake2b(sys.version.encode(), digest_size=16)
    for folder in ("engine", "pricing"):
        for path in sorted((_PACKAGE / folder).rglob("*.py")):
            digest.update(str(path.relative_to(_PACKAGE)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


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

    def _path(self, key: tuple[object, ...]) -> Path:
        name = hashlib.blake2b(repr((code_fingerprint(), key)).encode(), digest_size=16).hexdigest()
        return self.directory / f"{name}.pickle"

    def load(self, key: tuple[object, ...]) -> CatalogSnapshot | None:
        """The snapshot saved under `key`, or None (never saved, or unreadable)."""
        try:
            with self._path(key).open("rb") as file:
                snapshot = pickle.load(file)
        except Exception:  # absent, truncated by a crash, or written by incompatible code
            return None
        return snapshot if isinstance(snapshot, CatalogSnapshot) else None

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
        self._remove_old()

    def _remove_old(self) -> None:
        files = sorted(self.directory.glob("*.pickle"), key=_modified, reverse=True)
        for old in files[_KEPT_FILES:]:
            with contextlib.suppress(OSError):
                old.unlink()


def _modified(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
