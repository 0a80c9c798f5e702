"""Accelerator names as the sources spell them -> our canonical accelerator ids.

Two layers:

* `AliasResolver.resolve(name)`: spelling only. A name is reduced to a key (lower case, separators
  dropped, the brand words `NVIDIA`/`Tesla`/`GeForce`/`AMD` dropped, `80G` read as `80GB`), so
  `RTX-A6000`, `RTXA6000` and `NVIDIA RTX A6000` meet; `A6000` is a listed alias of the same part.
  Unknown spellings get one more chance: decorations (`-80GB`, `-SXM5`, `-PCIe`, `-HBM3`) are
  stripped, and the name is accepted only if what was stripped agrees with the part found (memory
  and form factor), so `H100-SXM5-80GB` -> `h100-sxm` but `RTX4090-48GB` -> None.
* `AliasResolver.resolve_offer(...)`: a SkyPilot row in context. The same name can mean different
  parts on different clouds (`H100` is the PCIe card on RunPod, the SXM part on AWS), so explicit,
  documented rules (`data/skypilot_accelerator_rules.csv`) are tried first.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from wheretorun.pricing.records import AcceleratorRecord
from wheretorun.pricing.sources._text import csv_rows, optional_float, read_text
from wheretorun.pricing.sources.manifest import DATA_DIR

__all__ = ["RULES_FILE", "AliasResolver", "OfferRule", "normalise_alias", "read_offer_rules"]

RULES_FILE = "skypilot_accelerator_rules.csv"

_BRAND_WORDS = frozenset({"nvidia", "tesla", "geforce", "amd"})
_TOKEN = re.compile(r"[a-z0-9]+")
_MEMORY = re.compile(r"(\d+)gb?")  # "80gb", "80g"

_FORM_TOKENS = frozenset({"sxm", "sxm2", "sxm3", "sxm4", "sxm5", "sxm6", "pcie"})
_MEMORY_TYPE_TOKENS = frozenset({"hbm2", "hbm2e", "hbm3", "hbm3e", "gddr6", "gddr6x", "gddr7"})
_MEMORY_TOLERANCE_GB = 1.0


def _tokens(name: str) -> list[str]:
    """Lower-case word tokens, brand words dropped, `80 GB`/`80G` joined to `80gb`."""
    raw = _TOKEN.findall(name.lower())
    tokens: list[str] = []
    for token in raw:
        if token in _BRAND_WORDS:
            continue
        if token == "gb" and tokens and tokens[-1].isdigit():
            tokens[-1] += "gb"
            continue
        match = _MEMORY.fullmatch(token)
        tokens.append(f"{match.group(1)}gb" if match else token)
    return tokens


def normalise_alias(name: str) -> str:
    """The lookup key of a spelling: `NVIDIA-A100-80G-PCIe` and `a100 80gb pcie` give the same key."""
    return "".join(_tokens(name))


@dataclass(frozen=True, slots=True)
class OfferRule:
    """A cloud-specific meaning of a SkyPilot accelerator name (see skypilot_accelerator_rules.csv)."""

    provider: str
    accelerator_name: str
    instance_pattern: re.Pattern[str] | None
    per_gpu_memory_gb: float | None
    accelerator_id: str
    reason: str

    def matches(
        self, provider: str, accelerator_name: str, instance_type: str, memory_gb: float | None
    ) -> bool:
        if provider != self.provider or accelerator_name != self.accelerator_name:
            return False
        if self.instance_pattern is not None and not self.instance_pattern.search(instance_type):
            return False
        if self.per_gpu_memory_gb is None:
            return True
        return (
            memory_gb is not None and abs(memory_gb - self.per_gpu_memory_gb) <= 0.1 * self.per_gpu_memory_gb
        )


def read_offer_rules(path: Path) -> list[OfferRule]:
    """Rules from `skypilot_accelerator_rules.csv`, in file order (first match wins)."""
    rules = []
    for row in csv_rows(read_text(path)):
        pattern = row["instance_type_pattern"]
        rules.append(
            OfferRule(
                provider=row["provider"],
                accelerator_name=row["accelerator_name"],
                instance_pattern=re.compile(pattern) if pattern else None,
                per_gpu_memory_gb=optional_float(row["per_gpu_memory_gb"]),
                accelerator_id=row["accelerator_id"],
                reason=row["reason"],
            )
        )
    return rules


class AliasResolver:
    """Canonical accelerator id for a spelling, built from the records' ids, names and aliases."""

    def __init__(
        self, records: Iterable[AcceleratorRecord], offer_rules: Sequence[OfferRule] | None = None
    ) -> None:
        """`offer_rules=None` uses the shipped rules whose target part is among `records`;
        an explicit sequence is used as given and must only name known ids."""
        self._records: dict[str, AcceleratorRecord] = {}
        self._by_key: dict[str, str] = {}
        for record in records:
            if record.id in self._records:
                raise ValueError(f"duplicate accelerator id {record.id!r}")
            self._records[record.id] = record
            for spelling in (record.id, record.name, *record.aliases):
                self._add(normalise_alias(spelling), record.id, spelling)
        if offer_rules is None:
            shipped = read_offer_rules(DATA_DIR / RULES_FILE)
            offer_rules = [rule for rule in shipped if rule.accelerator_id in self._records]
        unknown = {rule.accelerator_id for rule in offer_rules} - self._records.keys()
        if unknown:
            raise ValueError(f"offer rules name unknown accelerator ids: {sorted(unknown)}")
        self._rules = tuple(offer_rules)

    def _add(self, key: str, accelerator_id: str, spelling: str) -> None:
        known = self._by_key.setdefault(key, accelerator_id)
        if known != accelerator_id:
            raise ValueError(f"spelling {spelling!r} is claimed by both {known!r} and {accelerator_id!r}")

    @property
    def ids(self) -> frozenset[str]:
        return frozenset(self._records)

    def record(self, accelerator_id: str) -> AcceleratorRecord | None:
        return self._records.get(accelerator_id)

    def resolve_exact(self, name: str) -> str | None:
        """The id whose listed spelling normalises to the same key, without any fallback."""
        return self._by_key.get(normalise_alias(name))

    def resolve(self, name: str) -> str | None:
        """The id for a spelling; unknown decorations are accepted only when they agree with the part."""
        found = self.resolve_exact(name)
        if found is not None:
            return found
        tokens = _tokens(name)
        decorations = [i for i, token in enumerate(tokens) if _decoration_kind(token)]
        for size in range(1, len(decorations) + 1):
            for stripped in itertools.combinations(decorations, size):
                base = "".join(t for i, t in enumerate(tokens) if i not in stripped)
                candidate = self._by_key.get(base)
                if candidate and self._agrees(candidate, [tokens[i] for i in stripped]):
                    return candidate
        return None

    def _agrees(self, accelerator_id: str, stripped: list[str]) -> bool:
        record = self._records[accelerator_id]
        for token in stripped:
            kind = _decoration_kind(token)
            if kind == "memory":
                if record.memory_gb is None:
                    return False
                if abs(record.memory_gb - float(token.removesuffix("gb"))) > _MEMORY_TOLERANCE_GB:
                    return False
            elif kind == "form":
                form = (record.form_factor or "").lower()
                if token not in form:
                    return False
        return True

    def rule_for(
        self, provider: str, accelerator_name: str, instance_type: str, memory_gb: float | None
    ) -> OfferRule | None:
        for rule in self._rules:
            if rule.matches(provider, accelerator_name, instance_type, memory_gb):
                return rule
        return None

    def resolve_offer(
        self, provider: str, accelerator_name: str, instance_type: str, memory_gb: float | None
    ) -> str | None:
        """The id of the part a cloud's catalog row means: a matching rule, else the spelling."""
        rule = self.rule_for(provider, accelerator_name, instance_type, memory_gb)
        return rule.accelerator_id if rule else self.resolve(accelerator_name)


def _decoration_kind(token: str) -> str | None:
    if token in _FORM_TOKENS:
        return "form"
    if token in _MEMORY_TYPE_TOKENS:
        return "memory_type"
    if re.fullmatch(r"\d+gb", token):
        return "memory"
    return None
