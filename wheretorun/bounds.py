"""The bounds of request inputs, declared once and used by every request model, so the OpenAPI
document states them and a request outside them is a 422 naming the field.

Every bound has a physical or practical reason (in the comment beside it): far enough above the
largest real value that no real plan is refused, and low enough that the arithmetic behind an
answer stays finite and fast (money stays below 10^20 USD, see `MAX_TOTAL_GROWTH`), so a request
is either answered or refused, never a server error.

Strings: every request string is bounded in length and may not contain a NUL character, which
PostgreSQL cannot store or compare (SQLite can: both databases now answer the same 422).
Lists: bounded in length; lists of names (models, providers, accelerators) drop repeated entries,
so their work is bounded by the number of distinct names.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated, TypeVar

from pydantic import AfterValidator, Field, StrictInt

from wheretorun.errors import InvalidInput

__all__ = [
    "MAX_ACCELERATORS",
    "MAX_CONTEXT_TOKENS",
    "MAX_HORIZON_MONTHS",
    "MAX_MODELS",
    "MAX_NAMES",
    "MAX_REQUESTS_PER_DAY",
    "MAX_TOTAL_GROWTH",
    "MAX_TOKENS_PER_MONTH",
    "MAX_TOTAL_TOKENS",
    "NOT_BLANK",
    "NO_NUL",
    "Count",
    "Id",
    "LongText",
    "Name",
    "NameList",
    "Text",
    "check_total_growth",
    "distinct",
]

NO_NUL = r"^[^\x00]*$"
"""A string without NUL (U+0000): PostgreSQL text and JSON cannot hold it."""

Text = Annotated[str, Field(max_length=200, pattern=NO_NUL)]
"""A short free text or name (a plan, a line, a filter)."""
NOT_BLANK = r"^[^\x00]*[^\s\x00][^\x00]*$"
"""A string without NUL that is not only white space."""

Name = Annotated[str, Field(min_length=1, max_length=200, pattern=NOT_BLANK)]
"""A name that must not be empty (a catalog id, a provider, a plan name)."""
Id = Annotated[str, Field(min_length=1, max_length=200, pattern=NOT_BLANK)]
"""A catalog id or alias (the longest shipped alias is under 80 characters)."""
LongText = Annotated[str, Field(max_length=2000, pattern=NO_NUL)]
"""A description or a reason."""

Count = Annotated[StrictInt, Field(ge=0)]
"""A whole number that JSON sends as an integer; `true` is not 1."""

# --- sizes of the world, for the bounds below -------------------------------------------------

MAX_REQUESTS_PER_DAY = 1e11
"""~40x the 2.5 billion prompts a day OpenAI reported for ChatGPT (Axios, 2025-07-21), the largest
published figure for an AI service: 1.16 million requests a second."""

MAX_CONTEXT_TOKENS = 10_000_000
"""The longest context window published (Llama 4 Scout, 10M tokens, Meta 2025-04-05): a request
cannot carry more tokens than any model reads."""

MAX_TOTAL_TOKENS = 1e15
"""A token volume (a batch job, a training run): ~65x the 15.6 trillion tokens Llama 3 405B was
trained on (Llama 3 paper, arXiv:2407.21783), the largest published training set."""

MAX_TOKENS_PER_MONTH = 1e16
"""Tokens a month: ~20x the 480 trillion tokens a month Google reported serving across all its
products (Google I/O, 2025-05-20)."""

MAX_HORIZON_MONTHS = 240
"""20 years, longer than any accelerator is kept in service (4-6 years)."""

MAX_TOTAL_GROWTH = 1e6
"""The traffic of the last month may be at most a million times that of the first: ChatGPT grew
from 1 million users (2022-12) to 800 million weekly users (2025-10), 800x in three years. Growth
compounds (1.25 a month over 240 months is 10^23), so this bound, not the per-month one, keeps the
money finite: a million-fold of the other bounds stays below 10^20 USD, within `Decimal`'s 28
digits at cent precision."""

MAX_ACCELERATORS = 1_000_000
"""Accelerators in one deployment or job: ~5x the largest cluster reported (xAI Colossus, 200,000
GPUs, 2025)."""

MAX_NAMES = 100
"""Names in one list (models, providers, regions, accelerators): more than the catalog's 37
accelerators or any provider's region count; a constraint list longer than this names nothing new."""

MAX_MODELS = 8
"""Acceptable models of one workload: each is planned in full over the whole catalog (~0.1-0.2 s
each on the 2-core CI machine, bench/bounded_work.py), so eight keep a recommendation under 2 s."""

_T = TypeVar("_T")


def distinct(values: Sequence[_T]) -> list[_T]:
    """`values` without repeats, first occurrence first (a repeated name adds no work)."""
    return list(dict.fromkeys(values))


NameList = Annotated[list[Name], Field(max_length=MAX_NAMES), AfterValidator(distinct)]
"""Names (ids, providers, regions): at most `MAX_NAMES`, repeats dropped in order."""


def check_total_growth(growth_per_month: float, horizon_months: int, field: str) -> None:
    """InvalidInput(`field`) when traffic growing by `growth_per_month` for `horizon_months`
    would end more than `MAX_TOTAL_GROWTH` times its first month (see there)."""
    if growth_per_month <= 0 or horizon_months <= 1:
        return
    total_log10 = (horizon_months - 1) * math.log10(1 + growth_per_month)
    if total_log10 > math.log10(MAX_TOTAL_GROWTH):
        most = MAX_TOTAL_GROWTH ** (1 / (horizon_months - 1)) - 1
        raise InvalidInput(
            field,
            f"{growth_per_month:g} a month for {horizon_months} months multiplies the traffic by "
            f"10^{total_log10:.0f}; at most {MAX_TOTAL_GROWTH:.0e} over the horizon (at most {most:.4f} a "
            f"month over {horizon_months} months)",
        )
