"""Pure ASGI middlewares, outermost first (`install_middleware` adds them in this order):

1. `RequestContextMiddleware`: the request id (`X-Request-ID` from the client when it is sane, else
   a uuid4 hex), echoed in the response header and kept in `scope["state"]["request_id"]` (problem
   bodies carry it); one access log line and the request metrics per request, by route template.
2. `RateLimitMiddleware`: a budget per API key, or per client address without a valid key
   (`wheretorun.ratelimit`); 429 problem+json with `Retry-After`. `/healthz`, `/readyz` and
   `/metrics` are exempt.
3. `BodySizeLimitMiddleware`: 413 problem+json above `max_request_bytes`, by `Content-Length` or
   by counting a streamed body. Price imports are left to their route, which checks the API key
   first and then `max_upload_bytes`.
4. `IdempotencyMiddleware`: `Idempotency-Key` on the POST routes that create things
   (`wheretorun.idempotency`): the first successful response is stored and replayed with
   `Idempotent-Replayed: true`.
5. `ConcurrencyLimitMiddleware`: at most `max_concurrent_requests` handlers at once in a worker,
   from a request's whole body received to its response's start; the others wait here, holding no
   thread and no database connection, up to `max_wait_s` (then 503). Probes, `/metrics` and price
   imports (long, with a lock of their own) pass by.

Outside them all, `KeepAliveLimitMiddleware` answers `Connection: close` once a connection has
served `max_requests_per_connection` requests or is `max_connection_seconds` old, so that
long-lived connections spread over the workers.

Storage lives outside `api/`; errors are domain errors rendered by `api.errors` only. Blocking
storage calls run in a worker thread.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import anyio
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.routing import compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from wheretorun.api.errors import domain_error_response, problem_response
from wheretorun.errors import InvalidInput, PayloadTooLarge, RateLimited, Unavailable, WheretorunError
from wheretorun.idempotency import IdempotencyStore, RequestKey, StoredResponse, fingerprint
from wheretorun.observability import ACCESS_LOGGER, Metrics
from wheretorun.ratelimit import RateLimiter
from wheretorun.security import key_id_for_token

__all__ = [
    "EXEMPT_FROM_RATE_LIMIT",
    "ConcurrencyLimitMiddleware",
    "BodySizeLimitMiddleware",
    "IdempotencyMiddleware",
    "IdempotentRoute",
    "KeepAliveLimitMiddleware",
    "RateLimitMiddleware",
    "RequestContextMiddleware",
    "client_identity",
]

EXEMPT_FROM_RATE_LIMIT = frozenset({"/healthz", "/readyz", "/metrics"})
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
_IDEMPOTENCY_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")  # printable ASCII, no spaces
_access_log = logging.getLogger(ACCESS_LOGGER)
_MAX_LOGGED_TARGET = 512
_log = logging.getLogger(__name__)


def _header(scope: Scope, name: bytes) -> str | None:
    """The first value of header `name` (lower case, as ASGI gives names), or None: what
    `Headers(scope=scope).get(name)` answers, without decoding every header of the request."""
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _uuid4_hex() -> str:
    """`uuid.uuid4().hex`: 16 random bytes with the version (4) and variant bits set, as `uuid`
    sets them, without building a `UUID` (~1 us a request, 2026-12-05)."""
    value = int.from_bytes(os.urandom(16), "big")
    value = (value & ~(0xC000 << 48)) | (0x8000 << 48)
    value = (value & ~(0xF000 << 64)) | (4 << 76)
    return f"{value:032x}"


def _state(scope: Scope) -> dict[str, Any]:
    state: dict[str, Any] = scope.setdefault("state", {})
    return state


async def _send_error(scope: Scope, receive: Receive, send: Send, error: WheretorunError) -> None:
    await domain_error_response(Request(scope), error)(scope, receive, send)


# --- 1. request id, access log, metrics -----------------------------------------------------------


class RequestContextMiddleware:
    """`templates()`: the app's path templates (`/v1/scenarios/{scenario_id}`), to name the route of
    a request answered before routing (a replay, a 429, a 413) without a series per id."""

    def __init__(self, app: ASGIApp, metrics: Metrics, templates: Callable[[], Iterable[str]]) -> None:
        self.app = app
        self.metrics = metrics
        self.templates = templates
        self._compiled: list[tuple[re.Pattern[str], str]] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = _header(scope, b"x-request-id") or ""
        request_id = given if _REQUEST_ID.match(given) else _uuid4_hex()
        _state(scope)["request_id"] = request_id
        status = 500
        started = False
        begin = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status, started
            if message["type"] == "http.response.start":
                started = True
                status = message["status"]
                MutableHeaders(scope=message)["X-Request-ID"] = request_id
            await send(message)

        failure: BaseException | None = None
        try:
            await self.app(scope, receive, send_with_id)
        except Exception as exc:
            failure = exc
            if not started:  # answer with a problem that names the request, then let the server log it
                response = problem_response(
                    Request(scope), 500, "Internal server error", "an unexpected error; see the logs"
                )
                await response(scope, receive, send_with_id)
            raise
        finally:
            self._record(scope, status, time.perf_counter() - begin, failure)

    def _template(self, scope: Scope) -> str:
        route = scope.get("route")
        template = getattr(route, "path", None)
        if template:
            return str(template)
        if self._compiled is None:
            self._compiled = [(compile_path(path)[0], path) for path in self.templates()]
        return next((path for regex, path in self._compiled if regex.match(scope["path"])), "<unmatched>")

    def _record(self, scope: Scope, status: int, seconds: float, failure: BaseException | None) -> None:
        template = self._template(scope)
        method = scope["method"]
        self.metrics.observe_request(method, template, status, seconds)
        state = _state(scope)
        _access_log.log(
            logging.ERROR if status >= 500 else logging.INFO,
            "request",
            exc_info=failure,
            extra={
                "fields": {
                    "method": method,
                    "path": template,
                    "target": _target(scope),
                    "client": (scope.get("client") or ("unknown",))[0],
                    "status": status,
                    "duration_ms": round(seconds * 1000, 3),
                    "request_id": state.get("request_id"),
                    "api_key_id": state.get("api_key_id"),
                }
            },
        )


def _target(scope: Scope) -> str:
    """The path and query the client sent, cut at `_MAX_LOGGED_TARGET` characters (what uvicorn's
    own access line showed; `path` is the route template, for aggregation)."""
    query = scope.get("query_string", b"").decode("latin-1")
    target = str(scope["path"]) + (f"?{query}" if query else "")
    return target if len(target) <= _MAX_LOGGED_TARGET else target[:_MAX_LOGGED_TARGET] + "..."


# --- who is asking ---------------------------------------------------------------------------------


async def client_identity(scope: Scope, sessions: Callable[[], Session]) -> str:
    """`key:<id>` for a live API key in `Authorization: Bearer`, else `ip:<client address>`.

    Resolved once per request (cached in the scope state); sets `api_key_id` for the access log.
    """
    state = _state(scope)
    if "client_identity" in state:
        identity: str = state["client_identity"]
        return identity
    authorization = _header(scope, b"authorization") or ""
    scheme, _, token = authorization.partition(" ")
    key_id: int | None = None
    if scheme.lower() == "bearer" and token.strip():

        def lookup() -> int | None:
            try:
                with sessions() as session:
                    return key_id_for_token(session, token.strip())
            except OperationalError:  # the route will answer 503; count the request by address
                return None

        key_id = await anyio.to_thread.run_sync(lookup)
    if key_id is not None:
        state["api_key_id"] = key_id
        identity = f"key:{key_id}"
    else:
        client = scope.get("client")
        identity = f"ip:{client[0] if client else 'unknown'}"
    state["client_identity"] = identity
    return identity


# --- 2. rate limit ---------------------------------------------------------------------------------


class RateLimitMiddleware:
    def __init__(
        self, app: ASGIApp, limiter: RateLimiter, sessions: Callable[[], Session], metrics: Metrics
    ) -> None:
        self.app = app
        self.limiter = limiter
        self.sessions = sessions
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in EXEMPT_FROM_RATE_LIMIT:
            await self.app(scope, receive, send)
            return
        identity = await client_identity(scope, self.sessions)
        try:
            await anyio.to_thread.run_sync(self.limiter.check, identity)
        except RateLimited as error:
            self.metrics.rate_limited.inc()
            await _send_error(scope, receive, send, error)
            return
        except Unavailable as error:  # fail open: the limit protects the service, it is not correctness
            _log.warning("rate limit not applied: %s", error.detail)
        await self.app(scope, receive, send)


# --- 3. body size ----------------------------------------------------------------------------------


class BodySizeLimitMiddleware:
    """`limit` bytes for every request body, or `limits_by_path[path]` for the paths it names
    (None: the route enforces its own limit, after it has checked the API key)."""

    def __init__(self, app: ASGIApp, limit: int, limits_by_path: dict[str, int | None] | None = None) -> None:
        self.app = app
        self.limit = limit
        self.limits_by_path = limits_by_path or {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limits_by_path.get(scope["path"], self.limit)
        if limit is None:
            await self.app(scope, receive, send)
            return
        declared = _header(scope, b"content-length") or ""
        if declared.isdigit() and int(declared) > limit:
            await _send_error(scope, receive, send, PayloadTooLarge("the request body", limit))
            return
        received = 0
        exceeded = False
        app_started = False

        async def counting_receive() -> Message:
            nonlocal received, exceeded
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    exceeded = True
                    raise PayloadTooLarge("the request body", limit)
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal app_started
            # Once the body was too large, whatever the app makes of the interrupted read is dropped.
            if exceeded:
                return
            app_started = app_started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, guarded_send)
        except Exception:  # PayloadTooLarge itself, or whatever the app turned it into
            if not exceeded or app_started:
                raise
        if exceeded and not app_started:
            await _send_error(scope, receive, send, PayloadTooLarge("the request body", limit))


# --- 4. idempotency --------------------------------------------------------------------------------


def succeeded(status: int, _body: bytes) -> bool:
    return 200 <= status < 300


@dataclass(frozen=True)
class IdempotentRoute:
    """A route that honours `Idempotency-Key`; `remember(status, body)` says which responses to keep."""

    method: str
    path: str
    remember: Callable[[int, bytes], bool] = field(default=succeeded)


class IdempotencyMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        store: IdempotencyStore,
        routes: Iterable[IdempotentRoute],
        sessions: Callable[[], Session],
        metrics: Metrics,
        max_body_bytes: int,
    ) -> None:
        """`max_body_bytes`: the most it buffers to fingerprint a body (413 above)."""
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.store = store
        self.routes = {(route.method, route.path): route for route in routes}
        self.sessions = sessions
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = self.routes.get((scope.get("method", ""), scope.get("path", "")))
        header = _header(scope, b"idempotency-key") if route and scope["type"] == "http" else None
        if route is None or header is None:
            await self.app(scope, receive, send)
            return
        if not _IDEMPOTENCY_KEY.match(header):
            reason = "1 to 255 printable ASCII characters without spaces (a UUID is a good choice)"
            await _send_error(scope, receive, send, InvalidInput("header.idempotency-key", reason))
            return
        try:
            body, arrived = await _read_body(receive, self.max_body_bytes)
        except PayloadTooLarge as error:
            await _send_error(scope, receive, send, error)
            return
        if not arrived:  # the client went away
            return
        identity = await client_identity(scope, self.sessions)
        owner = identity if identity.startswith("key:") else "anonymous"
        key = RequestKey(owner, scope["method"], scope["path"], header)
        request_sha256 = fingerprint(scope.get("query_string", b""), body)
        try:
            stored = await anyio.to_thread.run_sync(self.store.claim, key, request_sha256)
        except WheretorunError as error:
            await _send_error(scope, receive, send, error)
            return
        if stored is not None:
            self.metrics.idempotent_replays.inc()
            await _replay(stored, send)
            return
        await self._run_and_store(scope, receive, send, route, key, request_sha256, body)

    async def _run_and_store(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        route: IdempotentRoute,
        key: RequestKey,
        request_sha256: str,
        body: bytes,
    ) -> None:
        body_sent = False

        async def replay_receive() -> Message:
            nonlocal body_sent
            if not body_sent:
                body_sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        start: Message | None = None
        chunks: list[bytes] = []

        async def capture(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        try:
            await self.app(scope, replay_receive, capture)
        except BaseException:
            with anyio.CancelScope(shield=True):
                try:
                    await anyio.to_thread.run_sync(self.store.release, key, request_sha256)
                except Unavailable as error:
                    _log.warning("idempotency record not released: %s", error.detail)
            raise
        assert start is not None, "the app finished without a response"
        response = StoredResponse(
            status=start["status"],
            headers=[(name.decode("latin-1"), value.decode("latin-1")) for name, value in start["headers"]],
            body=b"".join(chunks),
        )
        # Keep (or forget) the outcome before the client sees it, so its retry finds a settled record.
        # If the store has gone away meanwhile, the response is still the truth: send it (a retry
        # then gets 409 until the pending record's lease ends).
        with anyio.CancelScope(shield=True):
            try:
                if route.remember(response.status, response.body):
                    await anyio.to_thread.run_sync(self.store.complete, key, request_sha256, response)
                else:
                    await anyio.to_thread.run_sync(self.store.release, key, request_sha256)
            except Unavailable as error:
                _log.warning("idempotency record not settled: %s", error.detail)
        await _send_stored(response, send, replayed=False)


async def _read_body(receive: Receive, limit: int) -> tuple[bytes, bool]:
    """The whole request body, and whether it arrived (False: the client disconnected)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"", False
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge("the request body", limit)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), True


async def _replay(stored: StoredResponse, send: Send) -> None:
    await _send_stored(stored, send, replayed=True)


async def _send_stored(response: StoredResponse, send: Send, replayed: bool) -> None:
    headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in response.headers]
    if replayed:
        headers.append((b"idempotent-replayed", b"true"))
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    await send({"type": "http.response.body", "body": response.body, "more_body": False})


# --- 5. concurrency limit ---------------------------------------------------------------------------


class ConcurrencyLimitMiddleware:
    """Admit at most `limit` handlers at once; the rest queue here, in the event loop.

    The handlers are CPU-bound Python (an estimate ~3 ms, a recommendation ~10-30 ms) run in the
    thread pool. Without a limit, 32 connections on 2 workers put ~16 requests in each worker's
    threads at once: they fought for the GIL (estimates: 278 requests/s at 4 connections, 131 at
    32), and each held a database connection from its first query to its commit, so with more in
    flight than the pool has connections (5 + 10 overflow), a request that finished its handler
    waited for a thread to commit while the threads waited for its connection: nothing was
    answered until the pool's 30 s timeout (bench/load_test.py, 2026-12-03).

    A slot is taken once the whole body has arrived (a client trickling its upload holds none;
    the body size limit outside bounds what is read) and given back when the response starts (a
    slow reader holds none: the session has committed and closed by then). A request that waits
    longer than `max_wait_s` is answered 503 with `Retry-After`. `exempt` paths never wait.
    """

    def __init__(self, app: ASGIApp, limit: int, exempt: frozenset[str], max_wait_s: float = 30.0) -> None:
        self.app = app
        self.limit = limit
        self.exempt = exempt
        self.max_wait_s = max_wait_s
        self._slots: anyio.Semaphore | None = None  # made in the running event loop, on first use

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.exempt:
            await self.app(scope, receive, send)
            return
        received = await _whole_body(receive)
        if self._slots is None:
            self._slots = anyio.Semaphore(self.limit)
        slots = self._slots
        if not await self._took_slot(slots):
            busy = Unavailable(f"busy: every slot was taken for {self.max_wait_s:g} s; retry shortly")
            await _send_error(scope, receive, _with_retry_after(send), busy)
            return
        held = True

        def give_back() -> None:
            nonlocal held
            if held:
                held = False
                slots.release()

        async def replay() -> Message:
            return received.pop(0) if received else await receive()

        async def send_and_give_back(message: Message) -> None:
            if message["type"] == "http.response.start":
                give_back()
            await send(message)

        try:
            await self.app(scope, replay, send_and_give_back)
        finally:
            give_back()

    async def _took_slot(self, slots: anyio.Semaphore) -> bool:
        """Take a free slot at once, else wait for one up to `max_wait_s` (False: none came). The
        cancel scope of the wait is made only when there is one (~13 us a request otherwise)."""
        try:
            slots.acquire_nowait()
            return True
        except anyio.WouldBlock:
            pass
        with anyio.move_on_after(self.max_wait_s) as waited:
            await slots.acquire()
        return not waited.cancelled_caught


async def _whole_body(receive: Receive) -> list[Message]:
    """The request's body messages up to the last one (or a disconnect), to replay to the app."""
    messages = [await receive()]
    while messages[-1]["type"] == "http.request" and messages[-1].get("more_body", False):
        messages.append(await receive())
    return messages


def _with_retry_after(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            MutableHeaders(scope=message)["Retry-After"] = "1"
        await send(message)

    return sending


# --- keep-alive limit ---------------------------------------------------------------------------


class KeepAliveLimitMiddleware:
    """A response says `Connection: close` once its keep-alive connection has served
    `max_requests` requests or is `max_age_s` old (nginx's `keepalive_requests` and
    `keepalive_time`, Envoy's `max_requests_per_connection` and `max_connection_duration`).

    uvicorn's workers share one listening socket, and a worker that wakes accepts every
    connection waiting; a connection then stays with its worker for its life. Clients that keep
    their connections (a planning tool's pool, a load balancer) can so land all on one worker
    while the other idles: `bench/load_test.py` (2026-12-04, 32 connections, 2 workers) measured
    estimates at 923 requests/s with every connection on one worker and 1,784 with both serving,
    and recommendations at 98 requests/s with one worker doing all the work. A closed connection
    comes back as a new one, accepted by whichever worker is waiting for work, so the load evens
    out within about `max_age_s`.

    Connections are told apart by the client's address and port (`scope["client"]`; none behind a
    proxy that sets the address from its headers, where the port is 0); those of the
    `_MAX_TRACKED` most recent connections are kept. A new connection that reuses a closed one's
    port may inherit its count or age and be closed early: one reconnect more.

    The default age, 1 s, is short for a connection but costs little: with 32 connections, 32
    reconnects a second (an accept and a handshake each). By the count alone, a slow endpoint
    would stay unbalanced for long: at ~200 recommendations a second over 32 connections, each
    serves ~6 a second, so 100 requests take ~16 s.
    """

    _MAX_TRACKED = 4096

    def __init__(self, app: ASGIApp, max_requests: int, max_age_s: float) -> None:
        self.app = app
        self.max_requests = max_requests
        self.max_age_s = max_age_s
        self._connections: OrderedDict[tuple[str, int], tuple[int, float]] = OrderedDict()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._closes(scope):
            await self.app(scope, receive, send)
            return

        async def send_closing(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message)["Connection"] = "close"
            await send(message)

        await self.app(scope, receive, send_closing)

    def _closes(self, scope: Scope) -> bool:
        """Count the request on its connection; True when it is to be the connection's last."""
        client = scope.get("client")
        # a client port of 0 is one a proxy's headers gave (uvicorn --proxy-headers): no connection
        if scope["type"] != "http" or not client or not client[1] or scope.get("http_version") != "1.1":
            return False
        return self._is_last_request(tuple(client))

    def _is_last_request(self, client: tuple[str, int]) -> bool:
        """Count one more request on `client`'s connection; True when it is to be its last."""
        now = time.monotonic()
        served, since = self._connections.pop(client, (0, now))
        if served + 1 >= self.max_requests or now - since >= self.max_age_s:
            return True
        self._connections[client] = (served + 1, since)
        while len(self._connections) > self._MAX_TRACKED:
            self._connections.popitem(last=False)
        return False
