"""Small parsing helpers shared by the source readers: CSV rows by header name, optional numbers."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from pathlib import Path

__all__ = [
    "csv_rows",
    "optional_decimal",
    "optional_float",
    "optional_int",
    "plain_decimal",
    "read_text",
    "split_list",
]


def read_text(path: Path) -> str:
    """The file as text: UTF-8, a leading byte-order mark dropped; line endings are left to the CSV reader."""
    return path.read_text(encoding="utf-8-sig")


def csv_rows(text: str) -> Iterator[dict[str, str]]:
    """Rows keyed by header name; cells stripped, missing cells as ''.

    Column order, CRLF/LF line endings, quoted newlines, extra columns and a missing final newline
    are all handled by the csv module; callers look columns up by name only.
    """
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff"), newline=""))
    for row in reader:
        yield {key.strip(): (value or "").strip() for key, value in row.items() if key is not None}


def optional_decimal(text: str | None) -> Decimal | None:
    """`Decimal` of the text exactly as written, or None when empty or not a number."""
    if text is None or not text.strip():
        return None
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def optional_float(text: str | None) -> float | None:
    value = optional_decimal(text)
    return None if value is None else float(value)


def optional_int(text: str | None) -> int | None:
    value = optional_decimal(text)
    if value is None or value != value.to_integral_value():
        return None
    return int(value)


def split_list(text: str | None) -> tuple[str, ...]:
    """A `;`-separated cell as a tuple of non-empty, stripped items."""
    if not text:
        return ()
    return tuple(item.strip() for item in text.split(";") if item.strip())


def plain_decimal(value: Decimal) -> Decimal:
    """The same number without trailing zeros or an exponent: 0.2500000 -> 0.25, 33600.0 -> 33600."""
    normal = value.normalize()
    return normal.quantize(Decimal(1)) if normal == normal.to_integral_value() else normal
