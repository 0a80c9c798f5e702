"""engine/rules/ is where a newcomer looks for the rule behind a rejection: its index lists every
reason the answer can report and every rule module, and each module says what it rejects."""

from __future__ import annotations

import importlib
from pathlib import Path

import wheretorun.engine.rules as rules
from wheretorun.engine.recommendation import RejectReason

RULES = Path(rules.__file__).parent
MODULES = sorted(
    path.stem for path in RULES.glob("*.py") if path.stem not in ("__init__", "rejection", "first_failing")
)


def test_the_index_lists_every_reason_and_every_rule_module() -> None:
    index = rules.__doc__ or ""
    assert len(MODULES) >= 15
    missing_reasons = [reason.value for reason in RejectReason if reason.value not in index]
    missing_modules = [name for name in MODULES if f"{name}.py" not in index]
    assert missing_reasons == []
    assert missing_modules == []


def test_every_rule_module_says_which_reason_it_reports() -> None:
    for name in MODULES:
        doc = importlib.import_module(f"wheretorun.engine.rules.{name}").__doc__ or ""
        reported = [reason.value for reason in RejectReason if f"`{reason.value}`" in doc]
        assert reported, f"rules/{name}.py names no reason it reports"
