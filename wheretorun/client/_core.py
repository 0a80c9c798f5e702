"""What the sync and async clients share: a request described as a value (`Call`), when a call may
be retried and how long to wait, and how an answer is decoded or turned into an error."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import httpx
from pydantic import BaseModel

from wheretorun.client.errors import problem_error
from wheretorun.client.types import Body

DEFAULT_TIMEOUT_S = 30.0
RETRY_STATUSES = frozenset({500, 502, 503, 504})
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
IDEMPOTENCY_KEY = "Idempotency-Key"


@dataclass(frozen=True)
class RetryPolicy:
    """`retries` more attempts after the first, waiting `backoff * 2**attempt` seconds (at most
    `max_backoff`) before each: 0.5, 1, 2, 4, ... by default."""

    retries: int = 2
    backoff: float = 0.5
    max_backoff: float = 30.0

    def __post_init__(self) -> None:
        if self.retries < 0 or self.backoff < 0:
            raise ValueError("retries and backoff must be >= 0")

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number `attempt` (0 = the first)."""
        return float(min(self.max_backoff, self.backoff * 2**attempt))


@dataclass(frozen=True)
class Call:
    """One API request, built once per client call, so that every retry of it is the same request
    (the same `Idempotency-Key` included).

    `side_effect_free` marks POSTs that only compute (estimates, recommendations, evaluations,
    charts, comparisons): they change nothing on the server, so they are as safe to retry as a GET.
    """

    method: str
    path: str
    params: Mapping[str, Any] = field(default_factory=dict)
    json: Any = None
    files: Mapping[str, tuple[str, bytes]] | None = None
    data: Mapping[str, str] | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    side_effect_free: bool = False

    @property
    def retryable(self) -> bool:
        """GET/PUT/DELETE, a POST with an Idempotency-Key, or a POST that changes nothing."""
        return self.method in IDEMPOTENT_METHODS or IDEMPOTENCY_KEY in self.headers or self.side_effect_free

    def request(self, http: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        return http.build_request(
            self.method,
            self.path,
            params=query(self.params),
            json=self.json,
            files=self.files,
            data=self.data,
            headers=self.headers,
        )


def creating(method: str, path: str, **fields: Any) -> Call:
    """A call that creates something: it carries a fresh `Idempotency-Key`, so a retry after a lost
    answer returns the first result instead of creating a duplicate."""
    return Call(method, path, headers={IDEMPOTENCY_KEY: str(uuid.uuid4())}, **fields)


def query(params: Mapping[str, Any]) -> dict[str, str | int | float]:
    """Query parameters as the service reads them: None dropped, booleans `true`/`false`,
    datetimes ISO 8601, decimals exact."""
    encoded: dict[str, str | int | float] = {}
    for name, value in params.items():
        if value is None:
            continue
        if isinstance(value, bool):
            encoded[name] = "true" if value else "false"
        elif isinstance(value, dt.datetime | dt.date):
            encoded[name] = value.isoformat()
        elif isinstance(value, Decimal):
            encoded[name] = str(value)
        else:
            encoded[name] = value
    return encoded


def body(value: Body | None) -> Any:
    """A request body as JSON-ready data; a pydantic model is dumped with only the fields set."""
    if value is None:
        return None
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_unset=True)
    return dict(value)


def if_match(version_or_etag: int | str) -> str:
    """The If-Match header: a scenario's `version` (3 -> `"v3"`) or an ETag as received."""
    if isinstance(version_or_etag, int) and not isinstance(version_or_etag, bool):
        return f'"v{version_or_etag}"'
    return str(version_or_etag)


def is_retryable_answer(call: Call, response: httpx.Response) -> bool:
    return call.retryable and response.status_code in RETRY_STATUSES


def checked(response: httpx.Response) -> httpx.Response:
    """The response if it is a success, else the typed `ProblemError`."""
    if response.is_success:
        return response
    raise problem_error(response)


def default_headers(api_key: str | None) -> dict[str, str]:
    headers = {"User-Agent": "wheretorun-python-client"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers
