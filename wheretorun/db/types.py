"""Column types that behave the same on PostgreSQL and SQLite.

SQLite has no exact decimal and no time zones. `Money` stores a `Decimal` as NUMERIC on PostgreSQL
and as a scaled integer on SQLite (exact, and it sorts and compares correctly); `UTCDateTime` always
hands back an aware UTC datetime.
"""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from sqlalchemy import BigInteger, DateTime, Dialect, Numeric
from sqlalchemy.types import TypeDecorator, TypeEngine

__all__ = ["Money", "UTCDateTime"]


class Money(TypeDecorator[Decimal]):
    """An exact USD amount with a fixed number of decimal places."""

    impl = Numeric
    cache_ok = True

    def __init__(self, precision: int = 18, scale: int = 6) -> None:
        super().__init__()
        self.precision = precision
        self.scale = scale

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "sqlite":
            return dialect.type_descriptor(BigInteger())
        return dialect.type_descriptor(Numeric(self.precision, self.scale, asdecimal=True))

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        if value is None:
            return None
        amount = Decimal(value) if not isinstance(value, Decimal) else value
        # Round here, half to even, so both databases store the same amount (PostgreSQL's NUMERIC
        # would round half away from zero).
        scaled = amount.scaleb(self.scale).to_integral_value(rounding=ROUND_HALF_EVEN)
        if dialect.name == "sqlite":
            return int(scaled)
        return scaled.scaleb(-self.scale)

    def process_result_value(self, value: Any, dialect: Dialect) -> Decimal | None:
        if value is None:
            return None
        if dialect.name == "sqlite":
            return Decimal(int(value)).scaleb(-self.scale)
        return Decimal(value)


class UTCDateTime(TypeDecorator[dt.datetime]):
    """A timestamp stored in UTC and always returned time-zone aware."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetimes are not stored: give a time zone")
        return value.astimezone(dt.UTC)

    def process_result_value(self, value: Any, dialect: Dialect) -> dt.datetime | None:
        if value is None:
            return None
        moment: dt.datetime = value
        if moment.tzinfo is None:
            return moment.replace(tzinfo=dt.UTC)
        return moment.astimezone(dt.UTC)
