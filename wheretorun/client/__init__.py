"""A typed Python client of the wheretorun API, sync and async, on httpx.

    from wheretorun.client import WheretorunClient

    with WheretorunClient("http://127.0.0.1:8000") as client:
        offers = client.list_cloud_offers(accelerator="H100", pricing_mode="spot", limit=5)

Method names are the API's OpenAPI operation ids; answers are the service's JSON as dicts. Errors
are the `ClientError` tree in `wheretorun.client.errors`. The client imports nothing of the server.
"""

from __future__ import annotations

from wheretorun.client._async import AsyncWheretorunClient
from wheretorun.client._core import RetryPolicy
from wheretorun.client._sync import WheretorunClient
from wheretorun.client.errors import (
    AuthError,
    ClientError,
    ConflictError,
    NotFoundError,
    ProblemError,
    RateLimitedError,
    ServerError,
    TransportError,
    ValidationError,
)
from wheretorun.client.types import JSONObject, Page

__all__ = [
    "AsyncWheretorunClient",
    "AuthError",
    "ClientError",
    "ConflictError",
    "JSONObject",
    "NotFoundError",
    "Page",
    "ProblemError",
    "RateLimitedError",
    "RetryPolicy",
    "ServerError",
    "TransportError",
    "ValidationError",
    "WheretorunClient",
]
