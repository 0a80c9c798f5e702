"""The layering rules of DESIGN.md are import-linter contracts (`[tool.importlinter]` in
pyproject.toml); CI runs `lint-imports`. These tests run the same check, prove that it fails when a
rule is broken (on a copy of the package with one forbidden import added), and check what
import-linter cannot see: the engine reads no clock and no files."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "wheretorun"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def run_lint_imports(project: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` on the project at `project` (its pyproject.toml and its `wheretorun/`)."""
    environment = {**os.environ, "PYTHONPATH": str(project)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", str(project / "pyproject.toml")],
        cwd=project,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python files of the package and the contracts, copied to a scratch folder."""
    project = tmp_path_factory.mktemp("project")
    shutil.copy(ROOT / "pyproject.toml", project / "pyproject.toml")
    for source in PACKAGE.rglob("*.py"):
        target = project / source.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)
    return project


def test_the_contracts_hold() -> None:
    result = run_lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 7 kept, 0 broken." in result.stdout


@pytest.mark.parametrize(
    ("module", "forbidden_import", "expected"),
    [
        # the gap the old AST test had: `from wheretorun import settings` in the engine
        (
            "wheretorun/engine/roofline.py",
            "from wheretorun import settings",
            "wheretorun.engine.roofline -> wheretorun.settings",
        ),
        # a relative import out of the engine
        (
            "wheretorun/engine/memory.py",
            "from ..pricing import snapshot",
            "wheretorun.engine.memory -> wheretorun.pricing.snapshot",
        ),
        # a top-level module of the engine, not only its folders
        ("wheretorun/engine/errors.py", "import sqlalchemy", "wheretorun.engine.errors -> sqlalchemy"),
        # a rule that reaches into the planning that applies it
        (
            "wheretorun/engine/rules/memory_fit.py",
            "from wheretorun.engine.planning import offers",
            "wheretorun.engine.rules.memory_fit -> wheretorun.engine.planning.offers",
        ),
        ("wheretorun/services/engine_call.py", "import wheretorun.api.errors", "-> wheretorun.api.errors"),
        ("wheretorun/security.py", "from wheretorun.pricing import models", "-> wheretorun.pricing.models"),
        ("wheretorun/pricing/snapshot.py", "import fastapi", "wheretorun.pricing.snapshot -> fastapi"),
        # the CLI's warm path loading the database layer it exists to skip
        (
            "wheretorun/pricing/snapshot_files.py",
            "import sqlalchemy",
            "wheretorun.pricing.snapshot_files -> sqlalchemy",
        ),
    ],
)
def test_a_broken_contract_fails(
    package_copy: Path, module: str, forbidden_import: str, expected: str
) -> None:
    path = package_copy / module
    original = path.read_text(encoding="utf-8")
    try:
        path.write_text(f"{forbidden_import}  # noqa\n{original}", encoding="utf-8")
        result = run_lint_imports(package_copy)
    finally:
        path.write_text(original, encoding="utf-8")
    assert result.returncode == 1, result.stdout + result.stderr
    # one import can break two contracts (the engine imported by the CLI's warm path, too)
    assert re.search(r"Contracts: \d+ kept, [12] broken", result.stdout)
    assert expected in result.stdout


CLOCK_AND_FILE_CALLS = (".now(", ".today(", "time.time(", "open(", "read_text(", "os.environ")


def clock_and_file_calls(source: str) -> list[str]:
    return [call for call in CLOCK_AND_FILE_CALLS if call in source]


def test_engine_reads_no_clock_and_no_files() -> None:
    sources = sorted((PACKAGE / "engine").rglob("*.py"))
    assert len(sources) > 30  # it read the engine, not an empty folder
    offenders = [
        f"{path.relative_to(PACKAGE)}: {call}"
        for path in sources
        for call in clock_and_file_calls(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_the_clock_check_sees_a_clock() -> None:
    """Guard against a text check that can never fail."""
    assert clock_and_file_calls("stamp = datetime.datetime.now()\nopen('x')\n") == [".now(", "open("]
