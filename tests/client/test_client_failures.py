"""Retries, timeouts and typed errors, against `httpx.MockTransport` fakes of the service."""

from __future__ import annotations

import uuid

import httpx
import pytest

from tests.client.conftest import BASE_URL
from wheretorun.client import (
    AsyncWheretorunClient,
    ClientError,
    ConflictError,
    ProblemError,
    RateLimitedError,
    RetryPolicy,
    ServerError,
    TransportError,
    ValidationError,
    WheretorunClient,
)

PROBLEM = "application/problem+json"
Answer = httpx.Response | Exception


class FakeService:
    """Answers from a script, in order (the last one repeats); keeps every request it got."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers[min(len(self.requests), len(self.answers)) - 1]
        if isinstance(answer, Exception):
            raise answer
        return answer


def problem(
    status: int, detail: str = "it went wrong", headers: dict[str, str] | None = None, **extra: object
) -> httpx.Response:
    body = {"type": "about:blank", "title": "A title", "status": status, "detail": detail, **extra}
    return httpx.Response(status, json=body, headers={"content-type": PROBLEM, **(headers or {})})


def ok(body: object = None, status: int = 200) -> httpx.Response:
    return httpx.Response(status, json=body if body is not None else {"status": "ok"})


def client_of(service: FakeService, retries: int = 2) -> WheretorunClient:
    return WheretorunClient(BASE_URL, retries=retries, backoff=0, transport=httpx.MockTransport(service))


def test_a_503_is_retried_then_succeeds() -> None:
    service = FakeService(problem(503), problem(503), ok({"id": "h100"}))
    with client_of(service) as client:
        assert client.get_accelerator("h100") == {"id": "h100"}
    assert len(service.requests) == 3


def test_a_5xx_that_persists_raises_server_error_after_the_retries() -> None:
    service = FakeService(problem(502, "upstream down"))
    with client_of(service, retries=3) as client, pytest.raises(ServerError) as failed:
        client.get_catalog()
    assert len(service.requests) == 4
    assert (failed.value.status, failed.value.detail) == (502, "upstream down")


def test_a_post_without_an_idempotency_key_is_not_retried() -> None:
    service = FakeService(problem(503))
    with client_of(service) as client:
        with pytest.raises(ServerError):
            client.end_override(7)
        with pytest.raises(ServerError):
            client.request("POST", "/v1/anything", json={})
    assert len(service.requests) == 2
    assert all("Idempotency-Key" not in request.headers for request in service.requests)


def test_creating_posts_send_a_fresh_idempotency_key_and_reuse_it_on_retry() -> None:
    service = FakeService(problem(503), ok({"id": 1}, 201), ok({"id": 2}, 201))
    with client_of(service) as client:
        client.create_scenario({"name": "a"})
        client.create_scenario({"name": "b"})
    first, retried, second = (request.headers["Idempotency-Key"] for request in service.requests)
    assert first == retried != second
    assert uuid.UUID(first).version == 4


def test_a_generic_post_with_an_idempotency_key_is_retried() -> None:
    service = FakeService(problem(500), ok())
    with client_of(service) as client:
        client.request("POST", "/v1/metrics-like", headers={"Idempotency-Key": "k1"})
    assert len(service.requests) == 2


def test_429_raises_rate_limited_with_retry_after_and_is_not_retried() -> None:
    service = FakeService(problem(429, "slow down", headers={"Retry-After": "7"}), ok())
    with client_of(service) as client, pytest.raises(RateLimitedError) as limited:
        client.list_models()
    assert limited.value.retry_after == 7.0
    assert len(service.requests) == 1


def test_problem_fields_land_on_the_exception() -> None:
    errors = [{"field": "body.model.kv_heads", "reason": "must divide attention_heads"}]
    service = FakeService(problem(422, "body.model.kv_heads: must divide", errors=errors, instance="/x"))
    with client_of(service) as client, pytest.raises(ValidationError) as invalid:
        client.estimate_inference({"model": "x", "accelerator": "y"})
    error = invalid.value
    assert (error.status, error.title, error.detail) == (422, "A title", "body.model.kv_heads: must divide")
    assert error.errors == errors
    assert error.body["instance"] == "/x"
    assert isinstance(error, ProblemError)
    assert "422 A title" in str(error)


@pytest.mark.parametrize(
    ("status", "kind"), [(409, ConflictError), (412, ConflictError), (428, ConflictError)]
)
def test_precondition_and_conflict_statuses_are_conflicts(status: int, kind: type[ProblemError]) -> None:
    with client_of(FakeService(problem(status))) as client, pytest.raises(kind):
        client.update_scenario(1, {}, if_match=1)


def test_a_timeout_becomes_a_transport_error_after_the_retries() -> None:
    service = FakeService(httpx.ReadTimeout("too slow"))
    with client_of(service, retries=2) as client, pytest.raises(TransportError) as failed:
        client.list_cloud_offers()
    assert len(service.requests) == 3
    assert isinstance(failed.value.__cause__, httpx.ReadTimeout)
    assert isinstance(failed.value, ClientError)
    assert not isinstance(failed.value, ProblemError)


def test_a_connection_error_is_retried_then_succeeds() -> None:
    service = FakeService(
        httpx.ConnectError("refused"), ok({"items": [], "total": 0, "limit": 50, "offset": 0})
    )
    with client_of(service) as client:
        assert client.list_scenarios()["total"] == 0


def test_an_error_page_that_is_not_problem_json_still_becomes_a_typed_error() -> None:
    service = FakeService(httpx.Response(502, text="<html>Bad Gateway</html>"))
    with client_of(service, retries=0) as client, pytest.raises(ServerError) as failed:
        client.healthz()
    assert (failed.value.status, failed.value.title) == (502, "Bad Gateway")
    assert "Bad Gateway" in failed.value.detail


def test_requests_carry_the_key_the_etag_and_encoded_filters() -> None:
    service = FakeService(ok({"items": [], "total": 0, "limit": 5, "offset": 0}))
    client = WheretorunClient(BASE_URL, api_key="wtr_secret", transport=httpx.MockTransport(service))
    with client:
        client.list_cloud_offers(include_suspect=True, max_usd_per_hour="2.50", limit=5)
        client.delete_scenario(3, if_match=4)
    listing, deletion = service.requests
    assert listing.headers["Authorization"] == "Bearer wtr_secret"
    assert dict(listing.url.params) == {"include_suspect": "true", "max_usd_per_hour": "2.50", "limit": "5"}
    assert (deletion.method, deletion.url.path, deletion.headers["If-Match"]) == (
        "DELETE",
        "/v1/scenarios/3",
        '"v4"',
    )


def test_the_backoff_doubles_up_to_a_cap() -> None:
    policy = RetryPolicy(retries=6, backoff=0.5, max_backoff=4)
    assert [policy.delay(attempt) for attempt in range(6)] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    with pytest.raises(ValueError, match="retries"):
        RetryPolicy(retries=-1)


def test_pagination_walks_every_page_and_stops() -> None:
    rows = [{"id": n} for n in range(5)]

    def pages(request: httpx.Request) -> httpx.Response:
        limit, offset = int(request.url.params["limit"]), int(request.url.params["offset"])
        return ok(
            {"items": rows[offset : offset + limit], "total": len(rows), "limit": limit, "offset": offset}
        )

    with WheretorunClient(BASE_URL, transport=httpx.MockTransport(pages)) as client:
        assert list(client.paginate(client.list_models, limit=2)) == rows
        assert list(client.paginate(client.list_models, limit=2, offset=3)) == rows[3:]


# --- async: the same paths through AsyncWheretorunClient -----------------------------------------


def async_client_of(service: FakeService, retries: int = 2) -> AsyncWheretorunClient:
    return AsyncWheretorunClient(BASE_URL, retries=retries, backoff=0, transport=httpx.MockTransport(service))


@pytest.mark.anyio
async def test_async_retries_a_503_then_succeeds_and_keeps_the_idempotency_key() -> None:
    service = FakeService(problem(503), ok({"id": 1}, 201))
    async with async_client_of(service) as client:
        assert await client.create_override({"applies_to": "api_prices"}) == {"id": 1}
    first, retried = (request.headers["Idempotency-Key"] for request in service.requests)
    assert first == retried


@pytest.mark.anyio
async def test_async_does_not_retry_a_plain_post_and_types_its_errors() -> None:
    service = FakeService(problem(503), problem(429, headers={"Retry-After": "2"}))
    async with async_client_of(service) as client:
        with pytest.raises(ServerError):
            await client.end_override(1)
        with pytest.raises(RateLimitedError) as limited:
            await client.get_catalog()
    assert limited.value.retry_after == 2.0
    assert len(service.requests) == 2


@pytest.mark.anyio
async def test_async_timeout_becomes_a_transport_error_after_the_retries() -> None:
    service = FakeService(httpx.ConnectTimeout("no route"))
    async with async_client_of(service, retries=1) as client:
        with pytest.raises(TransportError):
            await client.list_api_prices()
    assert len(service.requests) == 2
