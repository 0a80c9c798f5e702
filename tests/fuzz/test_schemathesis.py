"""Schemathesis over every operation of the OpenAPI document, in-process, on a seeded SQLite catalog.

Each operation gets up to `EXAMPLES` generated requests with valid data ("positive") and, when it
takes any input, up to `EXAMPLES` with invalid data ("negative"), one test per mode (so xdist runs
them side by side): at least `MIN_REQUESTS_PER_MODE` each, 2,000 in all, counted and asserted.
Every response must pass `CHECKS`: no 5xx, a declared status code, a declared content type and a
body matching the declared schema.

Schemathesis 4 cannot build invalid data for some deeply nested bodies (`InvalidSchema: Cannot
generate an array ...` in its negative mode, e.g. `POST /v1/scenarios/compare`): that operation's
negative run ends there, the requests it sent still count and still had to pass. The same error in
the positive mode would mean our schema is unsatisfiable, and fails the test.

Every request carries an admin API key, so the admin operations are fuzzed too (their 401/403 paths
are covered in `tests/api/test_admin_security.py`). URL imports go to a fake price server (no
network). Generation is derandomized: the same requests on every run.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.errors import InvalidSchema
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from wheretorun.api.app import create_app
from wheretorun.api.deps import get_fetcher
from wheretorun.db import create_db_engine, make_session_factory
from wheretorun.pricing.bootstrap import prepare_database
from wheretorun.pricing.imports import HttpFetcher, UrlPolicy
from wheretorun.security import Actor, Scope, create_api_key
from wheretorun.settings import Settings

pytestmark = pytest.mark.fuzz

EXAMPLES = 36
MIN_REQUESTS_PER_MODE = 1000
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


def _fuzzed_app(database: Path) -> tuple[schemathesis.BaseSchema, str]:
    """The app on a freshly seeded SQLite file, its OpenAPI schema, and an admin key's token."""
    engine = create_db_engine(f"sqlite:///{database}")
    prepare_database(engine)
    app = create_app(Settings(auto_seed=False), engine=engine)
    no_network = httpx.MockTransport(lambda _request: httpx.Response(404))
    policy = UrlPolicy(("prices.example.com",), resolver=lambda _host: ["93.184.216.34"])
    app.dependency_overrides[get_fetcher] = lambda: HttpFetcher(
        policy, transport=no_network, sleep=lambda _s: None
    )
    actor = Actor(label="fuzz", key_id=None, scope=Scope.ADMIN)
    with make_session_factory(engine).begin() as session:
        _key, token = create_api_key(session, "fuzz", Scope.ADMIN, actor, dt.datetime.now(dt.UTC))
    return schemathesis.openapi.from_asgi("/openapi.json", app), token


def _takes_input(operation: schemathesis.APIOperation) -> bool:
    return bool(list(operation.iter_parameters()) or operation.get_request_payload_content_types())


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=str)
def test_every_operation_survives_generated_requests(mode: GenerationMode, tmp_path: Path) -> None:
    schema, token = _fuzzed_app(tmp_path / "catalog.db")
    headers = {"Authorization": f"Bearer {token}"}
    operations = [result.ok() for result in schema.get_all_operations()]
    if mode is GenerationMode.NEGATIVE:
        operations = [operation for operation in operations if _takes_input(operation)]
    sent = 0
    failures: list[str] = []

    for operation in operations:

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        def fuzz(case: schemathesis.Case) -> None:
            nonlocal sent
            sent += 1
            case.call_and_validate(headers=headers, checks=CHECKS)

        try:
            fuzz()
        except InvalidSchema as error:
            if mode is GenerationMode.POSITIVE:
                failures.append(f"{operation.label}: no valid request can be generated: {error}")
        except BaseExceptionGroup as error:  # schemathesis' FailureGroup: the failed checks
            failures.append(f"{operation.label} ({mode.value}): {error}")
        except Exception as error:  # an exception the app raised (a 500)
            failures.append(f"{operation.label} ({mode.value}): {error!r}")

    print(f"schemathesis, {mode.value}: {sent} requests over {len(operations)} operations")  # noqa: T201
    assert not failures, "\n\n".join(failures)
    assert sent >= MIN_REQUESTS_PER_MODE, f"only {sent} requests generated"
