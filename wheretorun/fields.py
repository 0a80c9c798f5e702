"""Field types shared by the request models of every layer (services, scenarios, the HTTP API):
date-times normalised to UTC, the integers an id, version or offset may be, and bounded numbers."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from pydantic import AfterValidator, AwareDatetime, BeforeValidator, Field

__all__ = ["SAFE_INT_MAX", "SAFE_INT_MIN", "AwareUtcDateTime", "UtcDateTime", "number"]

SAFE_INT_MIN, SAFE_INT_MAX = -(2**31 - 1), 2**31 - 1
"""The integers an id, version or offset may be: what a PostgreSQL `integer` column (the ids and
versions) holds, and so also exact as JSON numbers and SQLite integers. A larger one is refused as
422 instead of failing in the database (`integer out of range` was a 500 on PostgreSQL)."""


def _in_utc(moment: dt.datetime) -> dt.datetime:
    """A moment without a time zone is UTC; one whose UTC time is outside the years 1-9999 (e.g.
    9999-12-31T23:00-05:00) cannot be stored or compared, so it is invalid input."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=dt.UTC)
    try:
        return moment.astimezone(dt.UTC)
    except OverflowError:
        raise ValueError("the moment in UTC is outside the years 1 to 9999") from None


def _iso_8601(value: object) -> object:
    """A date-time is written as ISO 8601 text (as the OpenAPI `date-time` format says); pydantic
    would also read a number, or a numeric string, as seconds since 1970."""
    if isinstance(value, bool | int | float) or (isinstance(value, str) and _is_number(value)):
        raise ValueError("expected an ISO 8601 date-time such as 2025-06-01T00:00:00Z")
    return value


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


UtcDateTime = Annotated[dt.datetime, BeforeValidator(_iso_8601), AfterValidator(_in_utc)]
"""A request's date-time, in UTC."""
AwareUtcDateTime = Annotated[AwareDatetime, BeforeValidator(_iso_8601), AfterValidator(_in_utc)]
"""A request's date-time that must name its time zone, in UTC."""


def number(low: float, high: float, *, low_open: bool = False, default: Any = ..., **extra: Any) -> Any:
    """A finite JSON number in [low, high] (or (low, high] with `low_open`); required unless
    `default`. Strict: `true` or "1.5" is not a number (a JSON integer is)."""
    if low_open:
        return Field(default, gt=low, le=high, allow_inf_nan=False, strict=True, **extra)
    return Field(default, ge=low, le=high, allow_inf_nan=False, strict=True, **extra)
