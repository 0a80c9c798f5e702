"""`ConcurrencyLimitMiddleware`: at most `limit` requests in the handlers at once; probes pass by.

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


class _SlowApp:
    """An ASGI app whose handler takes a while and records how many run at once."""

    def __init__(self) -> None:
        self.running = 0
        self.most_at_once = 0
        self.release = asyncio.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["path"] != "/healthz":
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
            await self.release.wait()
            self.running -= 1
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


@pytest.mark.anyio
@pytest.mark.parametrize("limit", [1, 2])
async def test_no_more_than_the_limit_run_at_once_and_all_are_answered(limit: int) -> None:
    app = _SlowApp()
    client = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=ConcurrencyLimitMiddleware(app, limit)), base_url="http://t"
    )
    async with client:
        requests = [asyncio.create_task(client.post("/v1/estimates/inference")) for _ in range(6)]
        await asyncio.sleep(0.05)
        assert app.running == limit  # the others wait in the middleware, not in the handler
        probe = await asyncio.wait_for(client.get("/healthz"), timeout=2)  # not queued behind them
        assert probe.status_code == 200
        app.release.set()
        answers = await asyncio.gather(*requests)
    assert [answer.status_code for answer in answers] == [200] * 6
    assert app.most_at_once == limit


def test_the_limit_is_a_bounded_setting() -> None:
    assert Settings().max_concurrent_requests == 2
    for refused in (0, 8):
        with pytest.raises(ValueError, match="max_concurrent_requests"):
            Settings(max_concurrent_requests=refused)
