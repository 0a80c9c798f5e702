"""A synchronous client that calls the app in-process through httpx's ASGI transport.

Used by the tests and the benchmarks: real routing, validation, dependencies and serialisation,
without a server or a socket. It does not run the app's lifespan; build the app with
`auto_seed=False` and a prepared database.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

import anyio.from_thread
import httpx
from fastapi import FastAPI

__all__ = ["InProcessClient"]


class InProcessClient:
    """`client.get("/v1/...")` returns an `httpx.Response`; use as a context manager."""

    def __init__(
        self,
        app: FastAPI,
        base_url: str = "http://wheretorun.test",
        client_address: tuple[str, int] = ("127.0.0.1", 123),
        headers: dict[str, str] | None = None,
    ) -> None:
        """`client_address`: the (host, port) the app sees as the peer (the rate limit keys on it);
        `headers`: sent with every request (an `Authorization` header, say)."""
        self._app = app
        self._base_url = base_url
        self._client_address = client_address
        self._headers = headers or {}
        self._stack = ExitStack()

    def __enter__(self) -> InProcessClient:
        self._portal = self._stack.enter_context(anyio.from_thread.start_blocking_portal())
        self._client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=self._app, client=self._client_address),
            base_url=self._base_url,
            headers=self._headers,
        )
        self._stack.callback(self._portal.call, self._client.aclose)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stack.close()

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        return self._portal.call(lambda: self._client.request(method, url, **kwargs))

    def get(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", url, **kwargs)

    def put(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("PUT", url, **kwargs)

    def patch(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("PATCH", url, **kwargs)

    def delete(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("DELETE", url, **kwargs)
