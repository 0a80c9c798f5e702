"""`data/manifest.json`: what each shipped source file is, where it came from, its licence and hash."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["DATA_DIR", "ManifestEntry", "read_manifest", "source_labels"]

DATA_DIR = Path(__file__).resolve().parents[1] / "data"  # the data shipped in the package
MANIFEST_FILE = "manifest.json"


@dataclass(frozen=True, slots=True)
class ManifestEntry:
    path: str  # relative to the data directory
    format: str
    provider: str | None
    repository: str
    origin_path: str
    commit: str | None
    release: str | None
    license: str
    as_of: str
    sha256: str

    @property
    def label(self) -> str:
        """How a record cites this file: `repo path @commit`."""
        version = f" @{self.commit[:12]}" if self.commit else ""
        if self.release:
            version += f" (release {self.release})"
        return f"{self.repository} {self.origin_path}{version}"


def read_manifest(data_dir: Path = DATA_DIR) -> list[ManifestEntry]:
    raw: dict[str, Any] = json.loads((data_dir / MANIFEST_FILE).read_text(encoding="utf-8"))
    return [_entry(item) for item in raw["files"]]


def _entry(item: dict[str, Any]) -> ManifestEntry:
    origin = item["origin"]
    return ManifestEntry(
        path=item["path"],
        format=item["format"],
        provider=item.get("provider"),
        repository=origin["repository"],
        origin_path=origin["path"],
        commit=origin.get("commit"),
        release=origin.get("release"),
        license=item["license"],
        as_of=item["as_of"],
        sha256=item["sha256"],
    )


def source_labels(data_dir: Path = DATA_DIR) -> dict[str, str]:
    """Citation label per shipped file name (`aws_vms.csv` -> `skypilot-org/skypilot-catalog ...`)."""
    return {Path(entry.path).name: entry.label for entry in read_manifest(data_dir)}
