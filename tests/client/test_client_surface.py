"""The client's surface follows the API contract: one method per operation, on both clients, with
the same signatures, and filters named as the API's query parameters."""

from __future__ import annotations

import inspect
import subprocess
import sys
import typing
from typing import Any

import pytest

import wheretorun.client
from wheretorun import openapi
from wheretorun.client import AsyncWheretorunClient, WheretorunClient

CLIENTS = [WheretorunClient, AsyncWheretorunClient]


def _public_methods(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_")
    }


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return openapi.current_document()


def _operations(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        operation["operationId"]: operation
        for item in document["paths"].values()
        for operation in item.values()
    }


@pytest.mark.parametrize("client", CLIENTS, ids=lambda cls: cls.__name__)
def test_every_operation_has_a_client_method_of_its_name(document: dict[str, Any], client: type) -> None:
    missing = sorted(set(_operations(document)) - set(_public_methods(client)))
    assert missing == [], f"add these operations to both clients: {missing}"


def test_sync_and_async_clients_have_the_same_methods_and_parameters() -> None:
    sync, async_ = _public_methods(WheretorunClient), _public_methods(AsyncWheretorunClient)
    assert set(sync) - {"close"} == set(async_) - {"aclose"}
    for name in set(sync) - {"close", "paginate"}:
        assert list(sync[name].parameters) == list(async_[name].parameters), name
        assert inspect.iscoroutinefunction(getattr(AsyncWheretorunClient, name)), name
    assert inspect.isasyncgenfunction(AsyncWheretorunClient.paginate)


def test_list_filters_are_the_query_parameters_of_the_operation(document: dict[str, Any]) -> None:
    """A filter the API renamed or added shows up here (the API ignores unknown parameters)."""
    checked = 0
    for operation_id, operation in _operations(document).items():
        method = getattr(WheretorunClient, operation_id)
        kwargs = inspect.signature(method).parameters.get("filters")
        if kwargs is None or kwargs.kind is not inspect.Parameter.VAR_KEYWORD:
            continue
        filters = typing.get_args(typing.get_type_hints(method)["filters"])[0]  # Unpack[TypedDict]
        query = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
        assert set(filters.__annotations__) == query, operation_id
        checked += 1
    assert checked == 10


def test_the_client_imports_nothing_of_the_server() -> None:
    code = (
        "import sys, wheretorun.client; "
        "print(sorted(m for m in ('fastapi', 'sqlalchemy', 'wheretorun.api', 'wheretorun.engine') "
        "if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_the_public_names_are_exported() -> None:
    assert sorted(wheretorun.client.__all__) == sorted(
        name for name in dir(wheretorun.client) if not name.startswith("_") and name[0].isupper()
    )
