"""Strict checks of a price file before anything is read from it.

The source readers (`wheretorun.pricing.sources`) are lenient on purpose: they skip host-only rows
and read an unusable cell as "unknown". An import must be stricter, because a file that is
truncated, mis-encoded or has a garbled column would otherwise quietly remove or blank prices.
So every file passes these checks first and is rejected whole, with the row, column and reason of
each problem (`MalformedFile`), before a reader sees it.

Rows are line numbers (the CSV header is line 1); for a JSON table the row is the entry's key.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from wheretorun.errors import FileProblem, MalformedFile

__all__ = [
    "MAX_COLUMNS",
    "MAX_JSON_DEPTH",
    "MAX_PRICE_ROWS",
    "MAX_PROBLEMS",
    "ProblemList",
    "check_litellm",
    "check_skypilot",
    "decode_text",
    "load_json",
    "parse_amount",
    "read_csv_grid",
    "reject",
    "too_many_rows",
]

MAX_PROBLEMS = 50  # problems listed in one rejection; the count says how many more there were
# Columns a CSV price file may have. SkyPilot's vms.csv has 11 (aws) to 13; canonical files 5. The
# bound keeps the work per line small however the header was made.
MAX_COLUMNS = 100
# Priced rows one import may hold (SkyPilot rows with an accelerator, LiteLLM entries, canonical rows).
# An import holds the catalog lock while it diffs and writes them, and on SQLite that lock is the
# database's one write lock, which other writes wait for: the bound keeps that wait short (README,
# "Price imports"; bench/import_bounds.py). The largest shipped files: RunPod 5,125 rows, LiteLLM ~4,900.
MAX_PRICE_ROWS = 20_000
# Nesting of a JSON price file: LiteLLM entries are 3 levels deep (table, entry, tiered price).
MAX_JSON_DEPTH = 20
# Digits of a JSON integer: a price or token count never needs more (Python refuses > 4,300 anyway).
MAX_INTEGER_DIGITS = 30

SKYPILOT_REQUIRED = (
    "InstanceType",
    "AcceleratorName",
    "AcceleratorCount",
    "vCPUs",
    "MemoryGiB",
    "Price",
    "SpotPrice",
    "Region",
)
# Numeric columns (empty allowed) and their exclusive upper bounds, from the database columns:
# hourly prices keep 8 digits before the decimal point, counts and vCPUs 7, memory 9.
_SKYPILOT_NUMBERS: dict[str, Decimal] = {
    "AcceleratorCount": Decimal(10) ** 7,
    "vCPUs": Decimal(10) ** 7,
    "MemoryGiB": Decimal(10) ** 9,
    "Price": Decimal(10) ** 8,
    "SpotPrice": Decimal(10) ** 8,
}
LITELLM_PRICE_FIELDS = (
    "input_cost_per_token",
    "cache_read_input_token_cost",
    "cache_creation_input_token_cost",
    "output_cost_per_token",
    "input_cost_per_token_batches",
    "output_cost_per_token_batches",
)
_MAX_USD_PER_TOKEN = Decimal(10) ** 6  # the column holds < 10^12 USD per million tokens


class ProblemList:
    """Collects problems up to `MAX_PROBLEMS` and raises them together."""

    def __init__(self) -> None:
        self.problems: list[FileProblem] = []
        self.count = 0

    def add(self, row: int | str | None, column: str | None, reason: str) -> None:
        self.count += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(FileProblem(row, column, reason))

    def raise_if_any(self) -> None:
        if not self.count:
            return
        problems = list(self.problems)
        if self.count > len(problems):
            problems.append(FileProblem(None, None, f"{self.count - len(problems)} more problems not listed"))
        raise MalformedFile(problems)


def reject(reason: str, row: int | str | None = None, column: str | None = None) -> MalformedFile:
    """A rejection with one problem."""
    return MalformedFile([FileProblem(row, column, reason)])


# --- text ----------------------------------------------------------------------------------------


def decode_text(content: bytes) -> str:
    """The file as text. It must be UTF-8 (a leading byte-order mark is dropped) without NUL bytes."""
    if not content.strip():
        raise reject("the file is empty")
    if content.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise reject("the file is UTF-16; save it as UTF-8", row=1)
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = content[: error.start].count(b"\n") + 1
        byte = content[error.start : error.start + 1].hex()
        raise reject(
            f"not UTF-8 text: byte 0x{byte} at offset {error.start} cannot be decoded; save it as UTF-8",
            row=line,
        ) from error
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise reject("the file contains NUL bytes: binary data, not a text price file", row=line)
    return text


def parse_amount(cell: str) -> Decimal | str:
    """A number as written (`2.5`, `1e-3`), or the reason it is not one."""
    try:
        value = Decimal(cell)
    except InvalidOperation:
        return f"not a number: {cell!r}"
    if not value.is_finite():
        return f"not a finite number: {cell!r}"
    return value


# --- CSV -----------------------------------------------------------------------------------------


def read_csv_grid(text: str, required: Sequence[str]) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """Header and rows `(line, {column: cell})` of a CSV file, checked for shape.

    Rejects: a quoting error or a file cut inside a quoted cell; a row whose cell count differs from
    the header's (the usual sign of a truncated or mis-quoted line); a duplicate or missing column.
    Blank lines are skipped; cells are stripped.
    """
    problems = ProblemList()
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[tuple[int, dict[str, str]]] = []
    try:
        header = [cell.strip() for cell in next(reader, [])]
        if not any(header):
            raise reject("no header line", row=1)
        if len(header) > MAX_COLUMNS:
            raise reject(f"{len(header):,} columns; a price file has at most {MAX_COLUMNS}", row=1)
        counts = Counter(header)
        for name in sorted(name for name, count in counts.items() if count > 1):
            problems.add(1, name, "the column appears more than once in the header")
        for name in required:
            if name not in header:
                problems.add(1, name, "required column missing from the header")
        problems.raise_if_any()
        for cells in reader:
            if not cells or (len(cells) == 1 and not cells[0].strip()):
                continue
            if len(cells) != len(header):
                problems.add(
                    reader.line_num,
                    None,
                    f"{len(cells)} cells where the header has {len(header)}: a truncated or mis-quoted line?",
                )
                continue
            rows.append(
                (reader.line_num, {name: cell.strip() for name, cell in zip(header, cells, strict=True)})
            )
    except csv.Error as error:
        problems.add(reader.line_num, None, f"unreadable CSV ({error}): a stray quote or a truncated file?")
    problems.raise_if_any()
    return header, rows


def check_skypilot(text: str, provider: str) -> list[tuple[int, dict[str, str]]]:
    """A SkyPilot `vms.csv`: columns by header name, every number a number, no negative values.
    Returns its rows `(line, {column: cell})`.

    Rows without an `AcceleratorName` are host-only VMs; they are allowed and not imported. A row
    with one needs a positive `AcceleratorCount`, a `Region`, and (except GCP's attachable-GPU rows)
    an `InstanceType`. Empty prices are allowed (unknown, never 0).
    """
    _, rows = read_csv_grid(text, SKYPILOT_REQUIRED)
    problems = ProblemList()
    accelerator_rows = 0
    for line, row in rows:
        for column, bound in _SKYPILOT_NUMBERS.items():
            _check_number(problems, line, column, row[column], bound)
        if not row["AcceleratorName"]:
            continue
        accelerator_rows += 1
        count = parse_amount(row["AcceleratorCount"]) if row["AcceleratorCount"] else None
        if count is None or (isinstance(count, Decimal) and count <= 0):
            problems.add(line, "AcceleratorCount", "a row with an AcceleratorName needs a positive count")
        if not row["Region"]:
            problems.add(line, "Region", "empty: every offer needs its region")
        if not row["InstanceType"] and provider != "gcp":
            problems.add(line, "InstanceType", "empty: only GCP lists GPUs without an instance type")
    if not accelerator_rows and not problems.count:
        problems.add(None, "AcceleratorName", "no row has an accelerator: nothing to import")
    if accelerator_rows > MAX_PRICE_ROWS:
        problems.add(None, None, too_many_rows(accelerator_rows, "rows with an accelerator"))
    problems.raise_if_any()
    return rows


def too_many_rows(count: int, what: str) -> str:
    return f"{count:,} {what}; one import takes at most {MAX_PRICE_ROWS:,}: split the file"


def _check_number(problems: ProblemList, line: int, column: str, cell: str, bound: Decimal) -> None:
    if not cell:
        return
    value = parse_amount(cell)
    if isinstance(value, str):
        problems.add(line, column, value)
    elif value < 0:
        problems.add(line, column, f"negative value {cell}")
    elif value >= bound:
        problems.add(line, column, f"{cell} is implausibly large (the limit is {bound:,})")


# --- LiteLLM JSON --------------------------------------------------------------------------------


def load_json(text: str) -> Any:
    """A JSON price file, strictly: numbers as `Decimal` (never float) and finite, integers of at
    most `MAX_INTEGER_DIGITS` digits, no duplicate key in an object, at most `MAX_JSON_DEPTH` levels
    of nesting. Anything else is a `MalformedFile` naming where it is (line and character when the
    JSON itself is broken)."""
    try:
        document = json.loads(
            text,
            parse_float=Decimal,
            parse_int=_bounded_int,
            parse_constant=_no_constants,
            object_pairs_hook=_unique_keys,
        )
    except json.JSONDecodeError as error:
        raise reject(
            f"invalid JSON: {error.msg}", row=error.lineno, column=f"character {error.colno}"
        ) from error
    except _JsonProblem as error:
        raise reject(str(error)) from error
    except RecursionError as error:  # the parser gives up near the interpreter's recursion limit
        raise reject(f"JSON nested too deeply; a price file needs at most {MAX_JSON_DEPTH} levels") from error
    depth = _depth(document)
    if depth > MAX_JSON_DEPTH:
        raise reject(f"JSON nested {depth} levels deep; a price file needs at most {MAX_JSON_DEPTH}")
    return document


def _depth(document: Any) -> int:
    """How deeply arrays and objects nest in `document` (a scalar is 0), without recursion."""
    deepest = 0
    pending: list[tuple[Any, int]] = [(document, 0)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, dict | list):
            deepest = max(deepest, depth + 1)
            children = value.values() if isinstance(value, dict) else value
            pending.extend((child, depth + 1) for child in children)
    return deepest


def check_litellm(text: str) -> list[str]:
    """LiteLLM's price table: a JSON object of model entries; returns the model keys.

    Rejects invalid or truncated JSON (with its line and column), duplicate keys, `NaN`/`Infinity`,
    entries that are not objects, and prices that are not non-negative numbers. `null` is allowed
    for a price (unknown); 0 is allowed too (LiteLLM's "free or unknown", stored as unknown).
    """
    table = load_json(text)
    if not isinstance(table, dict):
        raise reject("the top level must be a JSON object mapping model ids to entries")
    problems = ProblemList()
    keys = [key for key in table if key != "sample_spec"]
    if not keys:
        problems.add(None, None, "no model entries: nothing to import")
    if len(keys) > MAX_PRICE_ROWS:
        raise reject(too_many_rows(len(keys), "model entries"))
    for key in keys:
        entry = table[key]
        if not isinstance(entry, dict):
            problems.add(key, None, f"an entry must be a JSON object, not {_json_type(entry)}")
            continue
        _check_litellm_entry(problems, key, entry)
    problems.raise_if_any()
    return keys


def _check_litellm_entry(problems: ProblemList, key: str, entry: dict[str, Any]) -> None:
    for field, value in entry.items():
        if "cost" in field:
            for reason in _cost_problems(value, per_token=field in LITELLM_PRICE_FIELDS):
                problems.add(key, field, reason)
        elif field in ("max_input_tokens", "max_output_tokens", "max_tokens"):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                problems.add(key, field, f"must be a non-negative whole number, not {value!r}")
        elif field in ("litellm_provider", "mode", "alias_of") and not isinstance(value, str):
            problems.add(key, field, f"must be a string, not {_json_type(value)}")
        elif field == "deprecation_date" and value is not None:
            if not isinstance(value, str) or not _is_iso_date(value):
                problems.add(key, field, f"must be a date YYYY-MM-DD, not {value!r}")


def _cost_problems(value: object, per_token: bool) -> Iterator[str]:
    if value is None:
        return
    if isinstance(value, dict):  # tiered prices: {"tier": number}
        for inner in value.values():
            yield from _cost_problems(inner, per_token=False)
        return
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        yield f"a price must be a JSON number, not {_json_type(value)} {value!r}"
    elif value < 0:
        yield f"negative price {value}"
    elif per_token and value >= _MAX_USD_PER_TOKEN:
        yield f"{value} USD per token is implausibly large"


class _JsonProblem(ValueError):
    pass


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise _JsonProblem(
            f"an integer of {len(digits.lstrip('-')):,} digits is not a price or a count "
            f"(at most {MAX_INTEGER_DIGITS} digits)"
        )
    return int(digits)


def _no_constants(name: str) -> Any:
    raise _JsonProblem(f"{name} is not a price: JSON numbers must be finite")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _JsonProblem(f"duplicate key {key!r}: an entry may appear only once")
        seen[key] = value
    return seen


def _json_type(value: object) -> str:
    names: dict[type, str] = {str: "a string", list: "an array", bool: "a boolean", dict: "an object"}
    if value is None:
        return "null"
    return names.get(type(value), "a number")


def _is_iso_date(text: str) -> bool:
    try:
        dt.date.fromisoformat(text.strip())
    except ValueError:
        return False
    return True
