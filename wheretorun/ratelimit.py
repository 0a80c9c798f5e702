"""A fixed-window rate limit whose counters live in shared storage, so every replica sees them.

Each client (an API key, or the client address for requests without a valid key) may make
`limit` requests per 60-second window (windows are aligned to the epoch minute). A counter per
(client, window) is incremented atomically:

- in the database (`rate_limit_counters`): `INSERT ... ON CONFLICT (bucket) DO UPDATE SET
  hits = hits + 1 RETURNING hits`, one statement on PostgreSQL and on SQLite >= 3.35; a new
  window deletes the counters that have expired;
- in Redis (`WHERETORUN_REDIS_URL`): `INCR` + `EXPIRE` in one MULTI.

Never in process memory: several processes behind a load balancer share one budget. A fixed
window lets a client burst up to 2 x limit across a window boundary; that is the price of one
counter per client.
"""

from __future__ import annotations

import datetime as dt
import math
import time
from collections.abc import Callable
from typing import Any, Protocol

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from sqlalchemy import Integer, String, delete
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Mapped, Session, mapped_column

from wheretorun.db import Base, UTCDateTime
from wheretorun.errors import RateLimited, Unavailable

__all__ = [
    "WINDOW_SECONDS",
    "CounterStore",
    "RateLimitCounter",
    "RateLimiter",
    "RedisCounters",
    "SqlCounters",
]

WINDOW_SECONDS = 60


class RateLimitCounter(Base):
    """Requests of one client in one window: `bucket` is `<client>@<window number>`."""

    __tablename__ = "rate_limit_counters"

    bucket: Mapped[str] = mapped_column(String(200), primary_key=True)
    hits: Mapped[int] = mapped_column(Integer)
    expires_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), index=True)


class CounterStore(Protocol):
    def hit(self, bucket: str, expires_at: float) -> int:
        """Add one to `bucket` (kept until the epoch second `expires_at`); the new count.
        Raises `Unavailable` when the store cannot be reached."""
        ...


class SqlCounters:
    """Counters in the database; `sessions()` gives a new session (each hit is its own transaction)."""

    def __init__(self, sessions: Callable[[], Session]) -> None:
        self._sessions = sessions

    def hit(self, bucket: str, expires_at: float) -> int:
        try:
            return self._hit(bucket, expires_at)
        except OperationalError as error:
            raise Unavailable("the rate-limit counters (database) cannot be reached") from error

    def _hit(self, bucket: str, expires_at: float) -> int:
        expiry = dt.datetime.fromtimestamp(expires_at, dt.UTC)
        with self._sessions() as session, session.begin():
            insert: Any = (
                postgresql_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
            )
            statement = (
                insert(RateLimitCounter)
                .values(bucket=bucket, hits=1, expires_at=expiry)
                .on_conflict_do_update(
                    index_elements=[RateLimitCounter.bucket], set_={"hits": RateLimitCounter.hits + 1}
                )
                .returning(RateLimitCounter.hits)
            )
            hits: int = session.execute(statement).scalar_one()
            if hits == 1:  # a new window: forget the finished ones
                now = dt.datetime.now(dt.UTC)
                session.execute(delete(RateLimitCounter).where(RateLimitCounter.expires_at < now))
        return hits


class RedisCounters:
    """Counters in Redis under `prefix` + `ratelimit:` + bucket."""

    def __init__(self, client: Any, prefix: str) -> None:
        self._client = client
        self._prefix = prefix

    def hit(self, bucket: str, expires_at: float) -> int:
        key = f"{self._prefix}ratelimit:{bucket}"
        pipeline = self._client.pipeline(transaction=True)
        pipeline.incr(key)
        pipeline.expireat(key, math.ceil(expires_at))
        try:
            hits, _ = pipeline.execute()
        except (RedisConnectionError, RedisTimeoutError) as error:
            raise Unavailable("the rate-limit counters (Redis) cannot be reached") from error
        return int(hits)


class RateLimiter:
    """`check(client)` counts a request and raises `RateLimited` above `limit` per window."""

    def __init__(self, store: CounterStore, limit: int, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.limit = limit
        self._clock = clock

    def check(self, client: str) -> int:
        """Count one request of `client`; the requests left in this window."""
        now = self._clock()
        window = int(now // WINDOW_SECONDS)
        window_end = (window + 1) * WINDOW_SECONDS
        hits = self.store.hit(f"{client}@{window}", window_end)
        if hits > self.limit:
            raise RateLimited(self.limit, max(1, math.ceil(window_end - now)))
        return self.limit - hits
