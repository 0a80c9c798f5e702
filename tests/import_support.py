"""Helpers for the import tests: a fingerprint of the catalog (row counts and a checksum of every
table an import or an admin action can touch) and small price files to build cases from."""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from tests.sources import LITELLM_FILE, SKYPILOT_DIR
from wheretorun.api.app import create_app
from wheretorun.api.deps import get_fetcher
from wheretorun.api.inprocess import InProcessClient
from wheretorun.db import Base
from wheretorun.pricing.imports import HttpFetcher, UrlPolicy
from wheretorun.pricing.models import (
    ApiPrice,
    CatalogVersion,
    CloudOffer,
    EnergyPrice,
    HardwarePrice,
    ImportRun,
    PriceOverride,
)
from wheretorun.security import Actor, ApiKey, AuditEntry, Scope, create_api_key
from wheretorun.settings import Settings

WRITABLE_TABLES: tuple[type[Base], ...] = (
    CatalogVersion,
    CloudOffer,
    ApiPrice,
    HardwarePrice,
    EnergyPrice,
    PriceOverride,
    ImportRun,
    AuditEntry,
    ApiKey,
)
TEST_ACTOR = Actor(label="test-suite", key_id=None, scope=Scope.ADMIN)
SKYPILOT_HEADER = [
    "InstanceType",
    "AcceleratorName",
    "AcceleratorCount",
    "vCPUs",
    "MemoryGiB",
    "Price",
    "SpotPrice",
    "Region",
]


def fingerprint(session: Session) -> dict[str, tuple[int, str]]:
    """Per table: (row count, sha256 of every row as stored, in key order). Equal: nothing written."""
    session.flush()
    result = {}
    for model in WRITABLE_TABLES:
        table = model.__table__
        order = ", ".join(column.name for column in table.primary_key.columns)
        rows = session.connection().exec_driver_sql(f"SELECT * FROM {table.name} ORDER BY {order}").fetchall()
        result[table.name] = (len(rows), hashlib.sha256(repr(rows).encode()).hexdigest())
    return result


def shipped_text(provider: str) -> str:
    return (SKYPILOT_DIR / f"{provider}_vms.csv").read_text(encoding="utf-8")


def litellm_text() -> str:
    return LITELLM_FILE.read_text(encoding="utf-8")


def csv_rows(text: str) -> tuple[list[str], list[dict[str, str]]]:
    reader = csv.DictReader(io.StringIO(text))
    return list(reader.fieldnames or []), list(reader)


def to_csv(header: Iterable[str], rows: Iterable[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(header), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def edit_rows(text: str, edit: Callable[[dict[str, str]], dict[str, str] | None]) -> str:
    """The CSV with `edit` applied to every row (return None to drop the row)."""
    header, rows = csv_rows(text)
    return to_csv(header, [edited for row in rows if (edited := edit(dict(row))) is not None])


def scaled(
    column: str, factor: str, where: Callable[[dict[str, str]], bool] = lambda _row: True
) -> Callable[[dict[str, str]], dict[str, str]]:
    """A row edit multiplying `column` by `factor` (empty cells stay empty)."""

    def edit(row: dict[str, str]) -> dict[str, str]:
        if row[column] and where(row):
            row[column] = str(Decimal(row[column]) * Decimal(factor))
        return row

    return edit


def later(minutes: int) -> Callable[[], dt.datetime]:
    """A clock `minutes` from now (imports must be after the newest catalog version)."""
    moment = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=minutes)
    return lambda: moment


# --- malformed files: (id, format, provider, content, expected row, expected column, reason part) --

_GOOD_SKYPILOT = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region\n"
    "p4d.24xlarge,A100,8,96,1152,32.77,12.5,us-east-1\n"
    "g5.xlarge,A10G,1,4,16,1.006,,us-west-2\n"
)


def _sky(replace: str, by: str) -> bytes:
    assert replace in _GOOD_SKYPILOT
    return _GOOD_SKYPILOT.replace(replace, by, 1).encode()


_LITELLM = (
    '{"gpt-x": {"litellm_provider": "openai", "mode": "chat", '
    '"input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06}}'
)


def _lite(replace: str, by: str) -> bytes:
    assert replace in _LITELLM
    return _LITELLM.replace(replace, by, 1).encode()


_CANONICAL = (
    "kind,key,usd_per_unit,usd_per_kwh,source\nhardware,H100-SXM,30000,,quote\nenergy,US/Ohio,,0.11,EIA\n"
)


def _canon(replace: str, by: str) -> bytes:
    assert replace in _CANONICAL
    return _CANONICAL.replace(replace, by, 1).encode()


# A SkyPilot header of 200,000 columns (1.5 MB): the duplicate-column check was quadratic in it.
WIDE_HEADER = (",".join(f"c{n}" for n in range(200_000)) + "\n").encode()

MALFORMED: list[tuple[str, str, str | None, bytes, int | str | None, str | None, str]] = [
    ("empty file", "skypilot", "aws", b"", None, None, "empty"),
    ("blank file", "litellm", None, b"  \n\n", None, None, "empty"),
    (
        "header only",
        "skypilot",
        "aws",
        _GOOD_SKYPILOT.split("\n")[0].encode() + b"\n",
        None,
        "AcceleratorName",
        "nothing to import",
    ),
    ("missing column", "skypilot", "aws", _sky(",Price,", ",Cost,"), 1, "Price", "required column missing"),
    ("duplicate column", "skypilot", "aws", _sky(",SpotPrice,", ",Region,"), 1, "Region", "more than once"),
    ("price not a number", "skypilot", "aws", _sky("32.77", "abc"), 2, "Price", "not a number"),
    ("negative price", "skypilot", "aws", _sky("32.77", "-32.77"), 2, "Price", "negative"),
    ("NaN spot price", "skypilot", "aws", _sky("12.5", "NaN"), 2, "SpotPrice", "not a finite number"),
    ("comma decimal", "skypilot", "aws", _sky("1.006", '"1,006"'), 3, "Price", "not a number"),
    ("currency sign", "skypilot", "aws", _sky("1.006", "$1.006"), 3, "Price", "not a number"),
    ("absurd price", "skypilot", "aws", _sky("32.77", "1e9"), 2, "Price", "implausibly large"),
    (
        "zero accelerator count",
        "skypilot",
        "aws",
        _sky("A100,8,", "A100,0,"),
        2,
        "AcceleratorCount",
        "positive count",
    ),
    ("negative vCPUs", "skypilot", "aws", _sky(",96,", ",-96,"), 2, "vCPUs", "negative"),
    ("no region", "skypilot", "aws", _sky(",us-west-2", ","), 3, "Region", "region"),
    ("no instance type", "skypilot", "aws", _sky("g5.xlarge", ""), 3, "InstanceType", "instance type"),
    ("truncated line", "skypilot", "aws", _GOOD_SKYPILOT.encode()[:-12], 3, None, "truncated"),
    ("extra cell", "skypilot", "aws", _sky(",us-east-1", ",us-east-1,oops"), 2, None, "9 cells"),
    (
        "cut inside a quote",
        "skypilot",
        "aws",
        _GOOD_SKYPILOT.encode() + b'x1,H100,8,1,1,"9',
        4,
        None,
        "unreadable CSV",
    ),
    ("stray quote", "skypilot", "aws", _sky("g5.xlarge", '"g5"xlarge'), 3, None, "unreadable CSV"),
    (
        "latin-1 text",
        "skypilot",
        "aws",
        _GOOD_SKYPILOT.replace("us-west-2", "us-wést-2").encode("latin-1"),
        3,
        None,
        "not UTF-8",
    ),
    ("utf-16 text", "skypilot", "aws", _GOOD_SKYPILOT.encode("utf-16"), 1, None, "UTF-16"),
    ("NUL bytes", "skypilot", "aws", _sky("1.006", "1.0\x0006"), 3, None, "NUL"),
    ("truncated JSON", "litellm", None, _LITELLM.encode()[:-20], 1, "character 89", "invalid JSON"),
    ("JSON list", "litellm", None, b'[{"input_cost_per_token": 1}]', None, None, "top level"),
    ("entry not an object", "litellm", None, b'{"gpt-x": "cheap"}', "gpt-x", None, "JSON object"),
    (
        "price as text",
        "litellm",
        None,
        _lite("1e-06", '"1e-06"'),
        "gpt-x",
        "input_cost_per_token",
        "JSON number",
    ),
    (
        "negative token price",
        "litellm",
        None,
        _lite("2e-06", "-2e-06"),
        "gpt-x",
        "output_cost_per_token",
        "negative",
    ),
    ("NaN token price", "litellm", None, _lite("1e-06", "NaN"), None, None, "finite"),
    (
        "duplicate model key",
        "litellm",
        None,
        _LITELLM[:-1].encode() + b', "gpt-x": {}}',
        None,
        None,
        "duplicate key",
    ),
    (
        "context as text",
        "litellm",
        None,
        _lite('"mode": "chat"', '"mode": "chat", "max_input_tokens": "8k"'),
        "gpt-x",
        "max_input_tokens",
        "whole number",
    ),
    (
        "bad deprecation date",
        "litellm",
        None,
        _lite('"mode": "chat"', '"mode": "chat", "deprecation_date": "soon"'),
        "gpt-x",
        "deprecation_date",
        "YYYY-MM-DD",
    ),
    ("no entries", "litellm", None, b"{}", None, None, "no model entries"),
    ("unknown kind", "canonical", None, _canon("energy,", "water,"), 3, "kind", "must be one of"),
    (
        "unknown accelerator",
        "canonical",
        None,
        _canon("H100-SXM", "Quantum-9000"),
        2,
        "key",
        "unknown accelerator",
    ),
    ("negative canonical price", "canonical", None, _canon("30000", "-30000"), 2, "usd_per_unit", "negative"),
    (
        "both price columns",
        "canonical",
        None,
        _canon("30000,,", "30000,0.1,"),
        2,
        "usd_per_kwh",
        "must be empty",
    ),
    ("no source", "canonical", None, _canon(",quote", ","), 2, "source", "source"),
    (
        "duplicate row",
        "canonical",
        None,
        _CANONICAL.encode() + b"hardware,h100-sxm,31000,,other\n",
        4,
        "key",
        "twice",
    ),
    (
        "missing price column",
        "canonical",
        None,
        _canon("usd_per_kwh", "usd_per_kWh"),
        1,
        "usd_per_kwh",
        "required column",
    ),
    (
        "canonical JSON not a list",
        "canonical",
        None,
        b'{"prices": {"kind": "energy"}}',
        None,
        None,
        "expected",
    ),
    ("canonical JSON row not an object", "canonical", None, b'{"prices": [42]}', 1, None, "JSON object"),
    ("empty canonical price", "canonical", None, _canon("0.11", ""), 3, "usd_per_kwh", "empty"),
    # Issue 10: files that cost unbounded work, and JSON that is ambiguous.
    ("200k columns", "skypilot", "aws", WIDE_HEADER, 1, None, "at most 100"),
    ("JSON nested 200k deep", "litellm", None, b"[" * 200_000 + b"]" * 200_000, None, None, "nested"),
    ("canonical JSON nested deep", "canonical", None, b"[" * 50 + b"]" * 50, None, None, "nested 50 levels"),
    ("5,000-digit integer", "litellm", None, _lite("1e-06", "1" * 5000), None, None, "5,000 digits"),
    (
        "canonical duplicate key",
        "canonical",
        None,
        b'{"prices": [{"kind": "energy", "key": "US/Ohio", "usd_per_kwh": 0.11, "usd_per_kwh": 0.01,'
        b' "source": "EIA"}]}',
        None,
        None,
        "duplicate key 'usd_per_kwh'",
    ),
]


# --- the app with API keys, a fake price server and a fake DNS --------------------------------------


class FakePriceServer:
    """What the app's URL fetcher talks to: `routes[url] = response`; every request is kept."""

    def __init__(self) -> None:
        self.routes: dict[str, httpx.Response] = {}
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.routes.get(str(request.url), httpx.Response(404))


@dataclass
class AdminApp:
    client: InProcessClient
    app: FastAPI
    server: FakePriceServer
    keys: dict[str, tuple[int, str]]  # scope -> (key id, token)

    def auth(self, scope: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.keys[scope][1]}"}


PRICE_HOSTS = {"prices.example.com": ["93.184.216.34"], "internal.example.com": ["10.1.2.3"]}


@contextmanager
def admin_app(engine: Engine, session_factory: sessionmaker[Session], **settings: Any) -> Iterator[AdminApp]:
    """The app over the test's transaction, with a read, a write and an admin key."""
    app = create_app(Settings(auto_seed=False, **settings), engine=engine)
    app.state.session_factory = session_factory
    server = FakePriceServer()
    policy = UrlPolicy(
        ("prices.example.com", "internal.example.com"), resolver=lambda host: PRICE_HOSTS[host]
    )
    app.dependency_overrides[get_fetcher] = lambda: HttpFetcher(
        policy, transport=httpx.MockTransport(server), sleep=lambda _s: None
    )
    keys = {}
    with session_factory.begin() as session:
        for scope in Scope:
            key, token = create_api_key(
                session, f"{scope.value}-key", scope, TEST_ACTOR, dt.datetime.now(dt.UTC)
            )
            keys[scope.value] = (key.id, token)
    with InProcessClient(app) as client:
        yield AdminApp(client=client, app=app, server=server, keys=keys)


def assert_problem(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    assert body["title"]
    assert body["detail"]
    return body
