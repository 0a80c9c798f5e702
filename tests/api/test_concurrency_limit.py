"""`ConcurrencyLimitMiddleware`: at most `limit` handlers at once, from the whole body received to
the response's start; probes pass by; a request that waits too long is answered 503.

Without it, 32 connections put ~16 requests into each worker's threads: they fought for the GIL and
for the 15 pooled database connections until the pool's 30 s timeout (bench/load_test.py).
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from wheretorun.api.middleware import ConcurrencyLimitMiddleware
from wheretorun.settings import Settings

PROBES = frozenset({"/healthz"})


class _SlowApp:
    """An ASGI app whose handler reads the body, then waits for `release`, recording how many
    handlers run at once. `/stream` starts its response first, then waits."""

    def __init__(self) -> None:
        self.running = 0
        self.most_at_once = 0
        self.release = asyncio.Event()
        self.bodies: list[bytes] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.bodies.append(body)
        if scope["path"] == "/healthz":
            await self._answer(send)
            return
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        if scope["path"] == "/stream":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            self.running -= 1
            await self.release.wait()
            await send({"type": "http.response.body", "body": b"ok"})
            return
        await self.release.wait()
        self.running -= 1
        await self._answer(send)

    @staticmethod
    async def _answer(send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def _client(app: Any, limit: int, max_wait_s: float = 30.0) -> httpx.AsyncClient:
    limited = ConcurrencyLimitMiddleware(app, limit, PROBES, max_wait_s)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=limited), base_url="http://t")


@pytest.mark.anyio
@pytest.mark.parametrize("limit", [1, 2])
async def test_no_more_than_the_limit_run_at_once_and_all_are_answered(limit: int) -> None:
    app = _SlowApp()
    async with _client(app, limit) as client:
        requests = [
            asyncio.create_task(client.post("/v1/estimates/inference", content=f"body {n}")) for n in range(6)
        ]
        await asyncio.sleep(0.05)
        assert app.running == limit  # the others wait in the middleware, not in the handler
        probe = await asyncio.wait_for(client.get("/healthz"), timeout=2)  # not queued behind them
        assert probe.status_code == 200
        app.release.set()
        answers = await asyncio.gather(*requests)
    assert [answer.status_code for answer in answers] == [200] * 6
    assert app.most_at_once == limit
    replayed = sorted(body for body in app.bodies if body)  # every body reached its handler whole
    assert replayed == [f"body {n}".encode() for n in range(6)]


@pytest.mark.anyio
async def test_a_slot_is_given_back_when_the_response_starts() -> None:
    """A client reading its response slowly holds no slot once the handler has answered."""
    app = _SlowApp()
    async with _client(app, limit=1) as client:
        streaming = asyncio.create_task(client.get("/stream"))
        await asyncio.sleep(0.05)
        app.release.clear()
        waiting = asyncio.create_task(client.post("/v1/recommendations"))
        await asyncio.sleep(0.05)
        assert app.running == 1  # the second request runs while the first one's body is pending
        app.release.set()
        assert (await streaming).status_code == 200
        assert (await waiting).status_code == 200


@pytest.mark.anyio
async def test_a_request_that_waits_too_long_is_answered_503_with_retry_after() -> None:
    app = _SlowApp()
    async with _client(app, limit=1, max_wait_s=0.1) as client:
        first = asyncio.create_task(client.post("/v1/recommendations"))
        await asyncio.sleep(0.05)
        refused = await client.post("/v1/recommendations")
        app.release.set()
        assert (await first).status_code == 200
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "1"
    assert refused.headers["content-type"].startswith("application/problem+json")


def test_the_limit_is_a_bounded_setting() -> None:
    assert Settings().max_concurrent_requests == 2
    for refused in (0, 8):
        with pytest.raises(ValueError, match="max_concurrent_requests"):
            Settings(max_concurrent_requests=refused)
