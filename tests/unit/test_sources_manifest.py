"""`data/manifest.json` lists every shipped data file with its origin, licence, date and hash."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).resolve().parents[2] / "wheretorun" / "pricing" / "data"


@pytest.fixture(scope="module")
def entries() -> list[dict[str, Any]]:
    manifest: dict[str, Any] = json.loads((DATA / "manifest.json").read_text(encoding="utf-8"))
    files: list[dict[str, Any]] = manifest["files"]
    return files


def test_every_data_file_is_listed(entries: list[dict[str, Any]]) -> None:
    shipped = {
        str(path.relative_to(DATA))
        for folder in (DATA / "sources", DATA / "calibration")
        for path in folder.rglob("*")
        if path.is_file() and path.name != "README.md" or path.parent.name == "calibration" and path.is_file()
    }
    shipped |= {"accelerators.csv", "models.csv", "skypilot_accelerator_rules.csv"}
    shipped |= {"accelerator_tensor_peaks.csv", "precision_support.csv"}
    assert shipped <= {entry["path"] for entry in entries}


def test_hashes_match_the_files(entries: list[dict[str, Any]]) -> None:
    for entry in entries:
        digest = hashlib.sha256((DATA / entry["path"]).read_bytes()).hexdigest()
        assert digest == entry["sha256"], f"{entry['path']}: update manifest.json after changing the file"


def test_origin_licence_and_date(entries: list[dict[str, Any]]) -> None:
    for entry in entries:
        assert entry["origin"]["repository"]
        assert entry["origin"]["path"]
        assert entry["license"]
        dt.date.fromisoformat(entry["as_of"])
        assert entry["as_of_basis"]
    skypilot = [e for e in entries if e["format"] == "skypilot"]
    assert len(skypilot) == 16
    for entry in skypilot:
        assert Path(entry["path"]).name == f"{entry['provider']}_vms.csv"
        assert len(entry["origin"]["commit"]) == 40
        assert entry["as_of"] == "2026-11-30"  # ingestion date: the commit dates are not recorded
    (litellm,) = [e for e in entries if e["format"] == "litellm"]
    assert (litellm["as_of"], litellm["origin"]["release"]) == ("2026-11-20", "1.110.2")
    (epoch,) = [e for e in entries if e["format"] == "epoch"]
    assert "CC BY 4.0" in epoch["license"]
