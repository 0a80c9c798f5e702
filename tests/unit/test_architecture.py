"""The layering rules of DESIGN.md, checked on the source: engine/ is a pure functional core and
api/ is the only layer that knows about HTTP."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "wheretorun"
ENGINE_FORBIDDEN = (
    "sqlalchemy",
    "fastapi",
    "starlette",
    "httpx",
    "wheretorun.pricing",
    "wheretorun.api",
    "wheretorun.settings",
    "pydantic_settings",
)
HTTP_MODULES = ("fastapi", "starlette")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _offending(folder: Path, forbidden: tuple[str, ...]) -> list[str]:
    return [
        f"{path.relative_to(PACKAGE)}: {module}"
        for path in sorted(folder.rglob("*.py"))
        for module in imported_modules(path)
        if module.startswith(forbidden)
    ]


def test_engine_imports_no_io_layers() -> None:
    assert _offending(PACKAGE / "engine", ENGINE_FORBIDDEN) == []


def test_engine_reads_no_clock_and_no_files() -> None:
    offenders = []
    for path in (PACKAGE / "engine").rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        for call in (".now(", ".today(", "time.time(", "open(", "read_text(", "os.environ"):
            if call in source:
                offenders.append(f"{path.name}: {call}")
    assert offenders == []


def test_only_api_imports_the_web_framework() -> None:
    outside_api = [p for p in PACKAGE.iterdir() if p.is_dir() and p.name not in {"api", "__pycache__"}]
    offenders = [line for folder in outside_api for line in _offending(folder, HTTP_MODULES)]
    assert offenders == []


def test_the_checks_see_a_forbidden_import(tmp_path: Path) -> None:
    """Guard against a checker that can never fail."""
    (tmp_path / "bad.py").write_text("from sqlalchemy import select\n", encoding="utf-8")
    assert imported_modules(tmp_path / "bad.py") == {"sqlalchemy"}
