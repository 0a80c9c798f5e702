"""The pure parts: the log formatters, per-app metrics, and the fixed-window arithmetic of the rate
limiter over an in-memory counter store (a fake: the real stores are tested in tests/api and
tests/integration)."""

from __future__ import annotations

import io
import json
import logging

import pytest

from wheretorun.errors import RateLimited
from wheretorun.idempotency import RequestKey, fingerprint
from wheretorun.observability import JsonFormatter, Metrics, TextFormatter, configure_logging
from wheretorun.ratelimit import RateLimiter


class FakeCounters:
    def __init__(self) -> None:
        self.hits: dict[str, int] = {}
        self.expiry: dict[str, float] = {}

    def hit(self, bucket: str, expires_at: float) -> int:
        self.hits[bucket] = self.hits.get(bucket, 0) + 1
        self.expiry[bucket] = expires_at
        return self.hits[bucket]


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_the_limit_refuses_the_request_after_the_budget_until_the_next_window() -> None:
    clock, counters = Clock(6000.0), FakeCounters()  # 6000 s: the start of window 100
    limiter = RateLimiter(counters, limit=2, clock=clock)
    assert limiter.check("ip:1") == 1
    clock.now = 6010.0
    assert limiter.check("ip:1") == 0
    clock.now = 6015.5
    with pytest.raises(RateLimited) as refused:
        limiter.check("ip:1")
    assert refused.value.retry_after_seconds == 45  # ceil(6060 - 6015.5)
    assert refused.value.limit == 2
    assert limiter.check("ip:2") == 1, "another client has its own budget"
    clock.now = 6060.0
    assert limiter.check("ip:1") == 1, "a new window starts from zero"
    assert counters.expiry == {"ip:1@100": 6060.0, "ip:2@100": 6060.0, "ip:1@101": 6120.0}


def test_retry_after_is_at_least_one_second() -> None:
    clock = Clock(6059.9)
    limiter = RateLimiter(FakeCounters(), limit=0, clock=clock)
    with pytest.raises(RateLimited) as refused:
        limiter.check("key:1")
    assert refused.value.retry_after_seconds == 1


def test_idempotency_keys_and_fingerprints() -> None:
    one = RequestKey("key:1", "POST", "/v1/scenarios", "abc")
    assert one.digest == RequestKey("key:1", "POST", "/v1/scenarios", "abc").digest
    others = [
        RequestKey("key:2", "POST", "/v1/scenarios", "abc"),
        RequestKey("anonymous", "POST", "/v1/scenarios", "abc"),
        RequestKey("key:1", "POST", "/v1/admin/overrides", "abc"),
        RequestKey("key:1", "POST", "/v1/scenarios", "abd"),
    ]
    assert len({one.digest, *(other.digest for other in others)}) == 5
    assert fingerprint(b"", b"{}") == fingerprint(b"", b"{}")
    assert fingerprint(b"", b"{}") != fingerprint(b"format=csv", b"{}")
    assert fingerprint(b"", b'{"a":1}') != fingerprint(b"", b'{"a": 1}'), "bytes, not meaning"


def _record(**fields: object) -> logging.LogRecord:
    record = logging.LogRecord("wheretorun.access", logging.INFO, __file__, 1, "request", None, None)
    record.fields = fields
    return record


def test_json_lines_carry_the_fields() -> None:
    line = JsonFormatter().format(_record(method="GET", status=200, duration_ms=1.5, api_key_id=None))
    entry = json.loads(line)
    assert "\n" not in line
    assert entry == {
        "time": entry["time"],
        "level": "INFO",
        "logger": "wheretorun.access",
        "message": "request",
        "method": "GET",
        "status": 200,
        "duration_ms": 1.5,
        "api_key_id": None,
    }
    assert entry["time"].endswith("+00:00")


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ({"fields": {"a": 1}}, {"a": 1}),
        ({"fields": {"a": 1}, "b": 2}, {"a": 1, "b": 2}),  # an extra beside `fields`
        ({"c": 3}, {"c": 3}),  # an extra alone
        ({"fields": {"a": 1}, "a": 9}, {"a": 1}),  # `fields` wins over a plain extra
    ],
)
def test_json_lines_carry_every_extra(extra: dict[str, object], expected: dict[str, object]) -> None:
    record = logging.getLogger("wheretorun.test").makeRecord(
        "wheretorun.test", logging.INFO, __file__, 1, "event", (), None, extra=extra
    )
    for formatter in (JsonFormatter(), JsonFormatter()):  # formatted twice: `message` is set by then
        entry = json.loads(formatter.format(record))
        assert {
            key: entry[key] for key in entry if key not in {"time", "level", "logger", "message"}
        } == expected


def test_json_lines_carry_exceptions_on_one_line() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        record = logging.LogRecord(
            "x", logging.ERROR, __file__, 1, "failed", None, __import__("sys").exc_info()
        )
    entry = json.loads(JsonFormatter().format(record))
    assert "ValueError: boom" in entry["exc_info"]


def test_text_lines_append_the_fields() -> None:
    line = TextFormatter().format(_record(method="POST", status=201))
    assert line.endswith("INFO wheretorun.access request method=POST status=201")


def test_configuring_twice_keeps_one_handler() -> None:
    logger = logging.getLogger("wheretorun")
    before = list(logger.handlers)
    try:
        configure_logging("text", "WARNING")
        configure_logging("json", "DEBUG")
        ours = [handler for handler in logger.handlers if handler.get_name() == "wheretorun"]
        assert len(ours) == 1
        assert isinstance(ours[0].formatter, JsonFormatter)
        assert logger.level == logging.DEBUG
        stream = io.StringIO()
        assert isinstance(ours[0], logging.StreamHandler)
        ours[0].setStream(stream)
        logging.getLogger("wheretorun.access").debug("hello", extra={"fields": {"a": 1}})
        assert json.loads(stream.getvalue())["a"] == 1
    finally:
        for handler in list(logger.handlers):
            if handler not in before:
                logger.removeHandler(handler)
        configure_logging("json", "INFO")


def test_two_metrics_objects_do_not_share_series() -> None:
    one, two = Metrics(), Metrics()
    one.imports.labels(status="applied").inc()
    assert b'wheretorun_price_imports_total{status="applied"} 1.0' in one.exposition()[0]
    assert b'status="applied"' not in two.exposition()[0]
    assert one.exposition()[1].startswith("text/plain")
