"""Logs and metrics: one JSON object per log line, and the Prometheus metrics of one app.

Logging uses the standard library only. `configure_logging` puts one handler on the `wheretorun`
logger (replacing the one it put there before, so building many apps does not stack handlers) and
formats records as JSON (`JsonFormatter`) or as text. Structured fields travel in a record's
`fields` extra: `logger.info("request", extra={"fields": {...}})`.

`Metrics` holds the collectors of one app in its own `CollectorRegistry`, so several apps in one
process (the tests build many) never clash; `/metrics` serves `Metrics.exposition()`. With several
uvicorn worker processes every worker has its own registry: a scrape sees the worker that answered
it (see the README).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest

__all__ = [
    "ACCESS_LOGGER",
    "JsonFormatter",
    "Metrics",
    "TextFormatter",
    "configure_logging",
    "silence_server_access_log",
]

ACCESS_LOGGER = "wheretorun.access"
_HANDLER_NAME = "wheretorun"
_LINE_ENCODER = json.JSONEncoder(default=str, separators=(",", ":"))  # made once, not per line
_STANDARD_ATTRIBUTES = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """`{"time", "level", "logger", "message", ...fields}` on one line; exceptions as `exc_info`."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update(_fields(record))
        if record.exc_info:
            entry["exc_info"] = self.formatException(record.exc_info)
        return _LINE_ENCODER.encode(entry)


class TextFormatter(logging.Formatter):
    """`time level logger message key=value ...` for people reading a terminal."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        extra = " ".join(f"{key}={value}" for key, value in _fields(record).items())
        return f"{line} {extra}" if extra else line


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    fields = getattr(record, "fields", None)
    found = dict(fields) if isinstance(fields, dict) else {}
    for key, value in record.__dict__.items():
        if key not in _STANDARD_ATTRIBUTES and key != "fields":
            found.setdefault(key, value)
    return found


def configure_logging(log_format: str, level: str) -> None:
    """Send the `wheretorun` loggers to stderr in `log_format` ("json" or "text") at `level`."""
    logger = logging.getLogger("wheretorun")
    for handler in list(logger.handlers):
        if handler.get_name() == _HANDLER_NAME:
            logger.removeHandler(handler)
    handler = logging.StreamHandler()
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False


def silence_server_access_log() -> None:
    """Turn off uvicorn's own access line (what `uvicorn --no-access-log` does): the app writes one
    per request itself (`wheretorun.access`, with the request id, route template and duration),
    and two lines per request were measurably dearer: bench/load_test.py gave estimates 1,737-
    1,815 req/s before this (and the log encoder made once), 1,906-2,006 after (2026-12-04).
    uvicorn decides per connection from whether `uvicorn.access` has handlers."""
    server_access = logging.getLogger("uvicorn.access")
    server_access.handlers = []
    server_access.propagate = False


class Metrics:
    """The Prometheus collectors of one app."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "wheretorun_http_requests",
            "HTTP requests answered, by method, route template and status.",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "wheretorun_http_request_duration_seconds",
            "Time to answer an HTTP request, by method, route template and status.",
            ["method", "route", "status"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
            registry=self.registry,
        )
        self._series: dict[tuple[str, str, int], tuple[Any, Any]] = {}  # (count, latency) by labels
        self.candidates_evaluated = Histogram(
            "wheretorun_recommendation_candidates_evaluated",
            "Candidates (offers x pricing modes, hosted prices, owned servers, ...) evaluated per "
            "recommendation.",
            buckets=(10, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000),
            registry=self.registry,
        )
        self.imports = Counter(
            "wheretorun_price_imports",
            "Price imports by outcome (applied, unchanged, not_modified, held, dry_run).",
            ["status"],
            registry=self.registry,
        )
        self.rate_limited = Counter(
            "wheretorun_rate_limited_requests",
            "Requests refused with 429 by the rate limit.",
            registry=self.registry,
        )
        self.idempotent_replays = Counter(
            "wheretorun_idempotent_replays",
            "Responses replayed for a repeated Idempotency-Key.",
            registry=self.registry,
        )

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        """Count one answered request and its duration. The labelled series are looked up once
        per (method, route template, status): `labels()` costs a few microseconds a call."""
        key = (method, route, status)
        series = self._series.get(key)
        if series is None:
            labels = {"method": method, "route": route, "status": str(status)}
            series = self._series[key] = (self.requests.labels(**labels), self.latency.labels(**labels))
        series[0].inc()
        series[1].observe(seconds)

    def exposition(self) -> tuple[bytes, str]:
        """The text exposition format and its content type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
