"""The planning page's routes: its views and files are served outside /v1, are not API operations,
and ship inside the package (the browser tests in tests/browser drive the page itself)."""

from __future__ import annotations

import re
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest

from wheretorun.api.inprocess import InProcessClient
from wheretorun.api.page import PAGE_VIEWS, STATIC_DIR

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("path", PAGE_VIEWS)
def test_each_view_is_the_page_document_with_a_strict_policy(client: InProcessClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="/static/js/main.js">' in response.text
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert response.headers["x-content-type-options"] == "nosniff"


def test_every_script_the_page_imports_is_served(client: InProcessClient) -> None:
    main = client.get("/static/js/main.js")
    assert main.status_code == 200
    assert "javascript" in main.headers["content-type"]
    pending, seen = ["main.js"], set()
    while pending:
        name = pending.pop()
        seen.add(name)
        source = client.get(f"/static/js/{name}").text
        pending += [m for m in re.findall(r'from "\./([\w-]+\.js)"', source) if m not in seen]
    assert {"main.js", "api.js", "dom.js", "plan.js", "scenarios.js", "catalog.js", "chart.js"} <= seen
    assert client.get("/static/style.css").status_code == 200


def test_a_missing_file_is_a_404_problem(client: InProcessClient) -> None:
    response = client.get("/static/js/nope.js")
    assert response.status_code == 404
    assert client.get("/static/%2e%2e/%2e%2e/pyproject.toml").status_code == 404


def test_the_page_is_not_in_the_openapi_document(client: InProcessClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert paths, "the document lists the API"
    assert not [path for path in paths if path in PAGE_VIEWS or path.startswith("/static")]
    assert all(path.startswith("/v1/") or path in ("/healthz", "/readyz") for path in paths)


def test_every_static_file_ships_in_the_package() -> None:
    """pyproject's package-data globs cover every file the page needs, so a wheel serves it too."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    globs = config["tool"]["setuptools"]["package-data"]["wheretorun.api"]
    static = [path for path in STATIC_DIR.rglob("*") if path.is_file()]
    files = [path.relative_to(STATIC_DIR.parent).as_posix() for path in static]
    assert len(files) >= 8
    assert [name for name in files if not any(fnmatch(name, pattern) for pattern in globs)] == []
