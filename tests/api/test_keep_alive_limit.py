"""`KeepAliveLimitMiddleware`: the `max_requests`-th request on one connection (one client address
and port), or the first after the connection is `max_age_s` old, is answered `Connection: close`,
the earlier ones are not, other connections count apart; a real uvicorn server then closes the
connection, and the client's next request opens another. `max_requests_per_connection` sets it in
the app (default 100; 0 leaves it out)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker
from starlette.types import Receive, Scope, Send

from wheretorun.api.app import create_app
from wheretorun.api.inprocess import InProcessClient
from wheretorun.api.middleware import KeepAliveLimitMiddleware
from wheretorun.settings import Settings

Message = dict[str, Any]
NEVER_OLD = 3600.0  # a connection age not reached in these tests


class _Recorder:
    """A tiny ASGI app: answers 200 (with `headers`), remembering each request's client."""

    def __init__(self, headers: list[tuple[bytes, bytes]] | None = None) -> None:
        self.headers = headers or []
        self.clients: list[tuple[str, int] | None] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        client = scope.get("client")
        self.clients.append(None if client is None else (client[0], client[1]))
        await send({"type": "http.response.start", "status": 200, "headers": list(self.headers)})
        await send({"type": "http.response.body", "body": b"ok"})


async def _call(app: Any, client: tuple[str, int] | None, http_version: str = "1.1") -> list[Message]:
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": http_version,
        "method": "GET",
        "scheme": "http",
        "path": "/",
        "raw_path": b"/",
        "query_string": b"",
        "headers": [],
        "client": client,
        "server": ("127.0.0.1", 8000),
    }
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


def _connection_header(messages: list[Message]) -> list[bytes]:
    start = next(message for message in messages if message["type"] == "http.response.start")
    return [value for name, value in start["headers"] if name.lower() == b"connection"]


@pytest.mark.anyio
async def test_the_nth_request_on_a_connection_says_close() -> None:
    app = KeepAliveLimitMiddleware(_Recorder(), max_requests=3, max_age_s=NEVER_OLD)
    client = ("10.0.0.1", 5000)
    headers = [_connection_header(await _call(app, client)) for _ in range(7)]
    # the 3rd says close; the 4th is the first on the connection the client opens next
    assert headers == [[], [], [b"close"], [], [], [b"close"], []]


@pytest.mark.anyio
async def test_connections_count_apart() -> None:
    app = KeepAliveLimitMiddleware(_Recorder(), max_requests=2, max_age_s=NEVER_OLD)
    a, a_other_port, b = ("10.0.0.1", 5000), ("10.0.0.1", 5001), ("10.0.0.2", 5000)
    assert _connection_header(await _call(app, a)) == []
    assert _connection_header(await _call(app, a_other_port)) == []
    assert _connection_header(await _call(app, b)) == []
    assert _connection_header(await _call(app, b)) == [b"close"]
    assert _connection_header(await _call(app, a)) == [b"close"]
    assert _connection_header(await _call(app, a_other_port)) == [b"close"]


@pytest.mark.anyio
async def test_the_body_passes_and_an_own_connection_header_is_replaced() -> None:
    app = KeepAliveLimitMiddleware(
        _Recorder(headers=[(b"connection", b"keep-alive")]), max_requests=1, max_age_s=NEVER_OLD
    )
    messages = await _call(app, ("10.0.0.1", 5000))
    assert _connection_header(messages) == [b"close"]
    assert [m["type"] for m in messages] == ["http.response.start", "http.response.body"]
    assert messages[1]["body"] == b"ok"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("client", "http_version"),
    [(None, "1.1"), (("10.0.0.1", 5000), "2"), (("10.0.0.1", 0), "1.1")],  # port 0: set by a proxy
)
async def test_requests_it_cannot_tell_apart_or_that_are_not_http_1_1_pass(
    client: tuple[str, int] | None, http_version: str
) -> None:
    app = KeepAliveLimitMiddleware(_Recorder(), max_requests=1, max_age_s=NEVER_OLD)
    for _ in range(3):
        assert _connection_header(await _call(app, client, http_version)) == []


@pytest.mark.anyio
async def test_the_first_request_after_the_connection_is_old_says_close() -> None:
    app = KeepAliveLimitMiddleware(_Recorder(), max_requests=100, max_age_s=0.5)
    old, young = ("10.0.0.1", 5000), ("10.0.0.2", 5000)
    assert _connection_header(await _call(app, old)) == []
    await asyncio.sleep(0.3)
    assert _connection_header(await _call(app, young)) == []
    assert _connection_header(await _call(app, old)) == []
    await asyncio.sleep(0.3)  # `old` is 0.6 s old, `young` 0.3 s
    assert _connection_header(await _call(app, old)) == [b"close"]
    assert _connection_header(await _call(app, young)) == []
    assert _connection_header(await _call(app, old)) == []  # the connection opened next is new


def _app_over(seeded_engine: Engine, session_factory: sessionmaker[Session], **settings: Any) -> Any:
    app = create_app(Settings(auto_seed=False, **settings), engine=seeded_engine)
    app.state.session_factory = session_factory
    return app


@pytest.mark.parametrize(("limit", "closing"), [(None, 100), (3, 3), (0, None)])
def test_the_app_closes_after_the_setting(
    seeded_engine: Engine, session_factory: sessionmaker[Session], limit: int | None, closing: int | None
) -> None:
    settings: dict[str, Any] = {"max_connection_seconds": NEVER_OLD}  # counted, not aged, here
    if limit is not None:
        settings["max_requests_per_connection"] = limit
    app = _app_over(seeded_engine, session_factory, **settings)
    with InProcessClient(app, client_address=("10.9.9.9", 4242)) as client:
        said = [client.get("/healthz").headers.get("connection") for _ in range(101)]
    closed_at = [n for n, value in enumerate(said, start=1) if value == "close"]
    if closing is None:
        assert closed_at == []
    else:
        assert closed_at == list(range(closing, 102, closing))


@pytest.fixture
def listening() -> Iterator[socket.socket]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    try:
        yield sock
    finally:
        sock.close()


@pytest.mark.parametrize(("limit", "connections"), [(3, 3), (None, 1)])
def test_a_real_server_closes_the_connection_and_the_client_opens_another(
    listening: socket.socket, limit: int | None, connections: int
) -> None:
    recorder = _Recorder()
    app: Any = (
        recorder
        if limit is None
        else KeepAliveLimitMiddleware(recorder, max_requests=limit, max_age_s=NEVER_OLD)
    )
    config = uvicorn.Config(app, http="h11", ws="none", lifespan="off", log_config=None, access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        port = listening.getsockname()[1]
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            said = [http.get("/").headers.get("connection") for _ in range(7)]
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    ports = [client[1] for client in recorder.clients if client is not None]
    assert len(ports) == 7
    assert len(set(ports)) == connections
    if limit is not None:
        assert [value == "close" for value in said] == [False, False, True, False, False, True, False]
        # each connection served its 3 requests: 1-3 on the first, 4-6 on the second, 7 on the third
        assert ports[0] == ports[1] == ports[2] != ports[3] == ports[4] == ports[5] != ports[6]
