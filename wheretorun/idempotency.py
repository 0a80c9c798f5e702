"""Idempotency records: the first response to a request sent with an `Idempotency-Key`, replayed
for every retry, in storage every replica shares (the database, or Redis where configured).

A record is keyed by (owner, method, path, Idempotency-Key), where the owner is the API key
(`key:<id>`) or `anonymous`, and remembers a SHA-256 of the request (query string and body). Its
life:

1. `claim`: the first request inserts a *pending* record (atomically: `INSERT ... ON CONFLICT DO
   NOTHING` or Redis `SET NX`) and goes on to run. A request that finds a record instead gets
   - the stored response, when the record is complete and the request is the same;
   - `IdempotencyKeyReused` when the request differs (HTTP 422);
   - `IdempotencyInProgress` while the first one is still running (HTTP 409).
2. `complete`: a successful (2xx) response is stored and replayed until the record expires
   (`idempotency_ttl_seconds`, 24 h by default).
3. `release`: any other outcome (an error, a crash) deletes the pending record, so the client may
   retry with the same key. A pending record left by a killed process expires after
   `PENDING_LEASE_SECONDS` and may then be claimed again.

The response is stored after the request's own transaction has committed, in a transaction of its
own: a process killed between the two leaves a pending record (a retry gets 409 until the lease
ends, then runs again).
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from sqlalchemy import JSON, Integer, LargeBinary, String, delete, select, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Mapped, Session, mapped_column

from wheretorun.db import Base, UTCDateTime
from wheretorun.errors import IdempotencyInProgress, IdempotencyKeyReused, Unavailable

__all__ = [
    "PENDING_LEASE_SECONDS",
    "IdempotencyRecord",
    "IdempotencyStore",
    "RedisIdempotencyStore",
    "RequestKey",
    "SqlIdempotencyStore",
    "StoredResponse",
    "fingerprint",
]

PENDING_LEASE_SECONDS = 300
PENDING = "pending"
COMPLETE = "complete"


class IdempotencyRecord(Base):
    __tablename__ = "idempotency_records"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)  # RequestKey.digest
    owner: Mapped[str] = mapped_column(String(80))
    method: Mapped[str] = mapped_column(String(10))
    path: Mapped[str] = mapped_column(String(400))
    idempotency_key: Mapped[str] = mapped_column(String(255))
    request_sha256: Mapped[str] = mapped_column(String(64))
    state: Mapped[str] = mapped_column(String(16))  # pending | complete
    response_status: Mapped[int | None] = mapped_column(Integer, nullable=True)
    response_headers: Mapped[list[list[str]] | None] = mapped_column(JSON, nullable=True)
    response_body: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), index=True)


@dataclass(frozen=True, slots=True)
class RequestKey:
    owner: str  # "key:<id>" or "anonymous"
    method: str
    path: str
    idempotency_key: str

    @property
    def digest(self) -> str:
        parts = (self.owner, self.method, self.path, self.idempotency_key)
        return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class StoredResponse:
    status: int
    headers: list[tuple[str, str]]  # latin-1 names and values, as sent
    body: bytes


def fingerprint(query_string: bytes, body: bytes) -> str:
    """What makes two requests with one key "the same": the query string and the body, byte for byte."""
    return hashlib.sha256(query_string + b"\0" + body).hexdigest()


class IdempotencyStore(Protocol):
    """Every method raises `Unavailable` when the store cannot be reached."""

    def claim(self, key: RequestKey, request_sha256: str) -> StoredResponse | None:
        """None: the caller now owns the key and runs the request. Otherwise the stored response;
        raises `IdempotencyKeyReused` or `IdempotencyInProgress`."""
        ...

    def complete(self, key: RequestKey, request_sha256: str, response: StoredResponse) -> None: ...

    def release(self, key: RequestKey, request_sha256: str) -> None: ...


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@contextmanager
def _reachable(store: str) -> Iterator[None]:
    try:
        yield
    except (OperationalError, RedisConnectionError, RedisTimeoutError) as error:
        raise Unavailable(f"the idempotency records ({store}) cannot be reached") from error


class SqlIdempotencyStore:
    """Records in `idempotency_records`; each call is its own short transaction."""

    def __init__(self, sessions: Callable[[], Session], ttl_seconds: int) -> None:
        self._sessions = sessions
        self._ttl = dt.timedelta(seconds=ttl_seconds)

    def claim(self, key: RequestKey, request_sha256: str) -> StoredResponse | None:
        with _reachable("database"):
            return self._claim(key, request_sha256)

    def _claim(self, key: RequestKey, request_sha256: str) -> StoredResponse | None:
        for _attempt in range(3):  # a record may vanish (released) between the insert and the read
            with self._sessions() as session, session.begin():
                now = _now()
                values = {
                    "key": key.digest,
                    "owner": key.owner,
                    "method": key.method,
                    "path": key.path,
                    "idempotency_key": key.idempotency_key,
                    "request_sha256": request_sha256,
                    "state": PENDING,
                    "created_at": now,
                    "expires_at": now + dt.timedelta(seconds=PENDING_LEASE_SECONDS),
                }
                insert: Any = (
                    postgresql_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
                )
                inserted = session.execute(
                    insert(IdempotencyRecord)
                    .values(**values)
                    .on_conflict_do_nothing(index_elements=[IdempotencyRecord.key])
                    .returning(IdempotencyRecord.key)
                ).first()
                if inserted is not None:
                    session.execute(delete(IdempotencyRecord).where(IdempotencyRecord.expires_at < now))
                    return None
                taken_over = session.execute(
                    update(IdempotencyRecord)
                    .where(IdempotencyRecord.key == key.digest, IdempotencyRecord.expires_at <= now)
                    .values(response_status=None, response_headers=None, response_body=None, **values)
                    .returning(IdempotencyRecord.key)
                ).first()
                if taken_over is not None:
                    return None
                record = session.scalars(
                    select(IdempotencyRecord).where(IdempotencyRecord.key == key.digest)
                ).first()
                if record is None:
                    continue
                if record.request_sha256 != request_sha256:
                    raise IdempotencyKeyReused()
                if record.state == PENDING:
                    raise IdempotencyInProgress()
                return StoredResponse(
                    status=record.response_status or 200,
                    headers=[(name, value) for name, value in record.response_headers or []],
                    body=record.response_body or b"",
                )
        raise IdempotencyInProgress()

    def complete(self, key: RequestKey, request_sha256: str, response: StoredResponse) -> None:
        with _reachable("database"):
            self._complete(key, request_sha256, response)

    def _complete(self, key: RequestKey, request_sha256: str, response: StoredResponse) -> None:
        with self._sessions() as session, session.begin():
            session.execute(
                update(IdempotencyRecord)
                .where(
                    IdempotencyRecord.key == key.digest,
                    IdempotencyRecord.request_sha256 == request_sha256,
                    IdempotencyRecord.state == PENDING,
                )
                .values(
                    state=COMPLETE,
                    response_status=response.status,
                    response_headers=[list(pair) for pair in response.headers],
                    response_body=response.body,
                    expires_at=_now() + self._ttl,
                )
            )

    def release(self, key: RequestKey, request_sha256: str) -> None:
        with _reachable("database"):
            self._release(key, request_sha256)

    def _release(self, key: RequestKey, request_sha256: str) -> None:
        with self._sessions() as session, session.begin():
            session.execute(
                delete(IdempotencyRecord).where(
                    IdempotencyRecord.key == key.digest,
                    IdempotencyRecord.request_sha256 == request_sha256,
                    IdempotencyRecord.state == PENDING,
                )
            )


class RedisIdempotencyStore:
    """Records as JSON strings under `prefix` + `idempotency:` + digest, expiring by Redis TTL."""

    def __init__(self, client: Any, prefix: str, ttl_seconds: int) -> None:
        self._client = client
        self._prefix = prefix
        self._ttl = ttl_seconds

    def _name(self, key: RequestKey) -> str:
        return f"{self._prefix}idempotency:{key.digest}"

    def claim(self, key: RequestKey, request_sha256: str) -> StoredResponse | None:
        with _reachable("Redis"):
            return self._claim(key, request_sha256)

    def _claim(self, key: RequestKey, request_sha256: str) -> StoredResponse | None:
        pending = json.dumps({"state": PENDING, "request_sha256": request_sha256})
        for _attempt in range(3):
            if self._client.set(self._name(key), pending, nx=True, ex=PENDING_LEASE_SECONDS):
                return None
            raw = self._client.get(self._name(key))
            if raw is None:
                continue
            record = json.loads(raw)
            if record["request_sha256"] != request_sha256:
                raise IdempotencyKeyReused()
            if record["state"] == PENDING:
                raise IdempotencyInProgress()
            return StoredResponse(
                status=record["status"],
                headers=[(name, value) for name, value in record["headers"]],
                body=base64.b64decode(record["body"]),
            )
        raise IdempotencyInProgress()

    def complete(self, key: RequestKey, request_sha256: str, response: StoredResponse) -> None:
        with _reachable("Redis"):
            self._complete(key, request_sha256, response)

    def _complete(self, key: RequestKey, request_sha256: str, response: StoredResponse) -> None:
        record = {
            "state": COMPLETE,
            "request_sha256": request_sha256,
            "status": response.status,
            "headers": [list(pair) for pair in response.headers],
            "body": base64.b64encode(response.body).decode("ascii"),
        }
        self._client.set(self._name(key), json.dumps(record), ex=self._ttl)

    def release(self, key: RequestKey, request_sha256: str) -> None:
        with _reachable("Redis"):
            self._release(key, request_sha256)

    def _release(self, key: RequestKey, request_sha256: str) -> None:
        raw = self._client.get(self._name(key))
        if raw is not None:
            record = json.loads(raw)
            if record["state"] == PENDING and record["request_sha256"] == request_sha256:
                self._client.delete(self._name(key))
