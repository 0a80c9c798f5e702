"""Price imports over HTTP that once cost unbounded work or were applied though wrong (issue 10), on
SQLite and PostgreSQL: each is refused with a 422 naming where, and quickly. The wall-clock bound is
a generous guard against a return of the quadratic check (25+ CPU minutes), not a speed claim; the
figures are in `bench/import_bounds.py`."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from tests.import_support import (
    WIDE_HEADER,
    AdminApp,
    admin_app,
    assert_problem,
    edit_rows,
    fingerprint,
    shipped_text,
)

GUARD_S = 20.0  # far above what each case takes (see bench/import_bounds.py), far below the old cost


@pytest.fixture
def admin(seeded_engine: Engine, session_factory: sessionmaker[Session]) -> Iterator[AdminApp]:
    with admin_app(seeded_engine, session_factory) as made:
        yield made


def _import(admin: AdminApp, format: str, content: str, provider: str | None = None) -> dict[str, object]:
    payload: dict[str, object] = {"format": format, "content": content}
    if provider:
        payload["provider"] = provider
    started = time.monotonic()
    response = admin.client.post("/v1/admin/imports", json=payload, headers=admin.auth("write"))
    assert time.monotonic() - started < GUARD_S
    return assert_problem(response, 422)


@pytest.mark.parametrize(
    ("format", "provider", "content", "reason"),
    [
        ("skypilot", "aws", WIDE_HEADER.decode(), "200,000 columns"),
        ("litellm", None, "[" * 200_000 + "]" * 200_000, "nested too deeply"),
        ("canonical", None, '{"prices": ' + "[" * 200_000 + "]" * 200_000 + "}", "nested too deeply"),
        ("litellm", None, '{"m": {"input_cost_per_token": ' + "9" * 5000 + "}}", "5,000 digits"),
    ],
    ids=["200k columns", "litellm nested 200k", "canonical nested 200k", "5000-digit integer"],
)
def test_worst_case_files_are_refused_quickly_and_change_nothing(
    admin: AdminApp, session: Session, format: str, provider: str | None, content: str, reason: str
) -> None:
    before = fingerprint(session)
    problem = _import(admin, format, content, provider)
    assert reason in problem["detail"], problem
    assert problem["errors"][0]["field"] == "body.content"
    assert fingerprint(session) == before


def test_an_unknown_accelerator_is_rejected_naming_its_row_and_column(
    admin: AdminApp, session: Session
) -> None:
    rows_seen: list[int] = []

    def rename_second_gpu_row(row: dict[str, str]) -> dict[str, str]:
        if row["AcceleratorName"]:
            rows_seen.append(1)
            if len(rows_seen) == 2:
                return {**row, "AcceleratorName": "ZZ9000"}
        return row

    content = edit_rows(shipped_text("nebius"), rename_second_gpu_row)
    line = next(n for n, text in enumerate(content.splitlines(), start=1) if ",ZZ9000," in text)
    before = fingerprint(session)
    problem = _import(admin, "skypilot", content, "nebius")
    assert problem["errors"] == [
        {
            "field": "body.content",
            "row": line,
            "column": "AcceleratorName",
            "reason": (
                "unknown accelerator 'ZZ9000': not an id or alias in the catalog (GET /v1/accelerators)"
            ),
        }
    ]
    assert fingerprint(session) == before
