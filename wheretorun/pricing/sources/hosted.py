"""Which LiteLLM keys serve which catalog model: a normalising rule plus explicit names.

A key's last path segment (`together_ai/meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo` ->
`meta-llama-3.1-8b-instruct-turbo`) is cut into tokens: lower case, split at every non-alphanumeric
character and between a word and a number (`llama3` -> `llama 3`); Bedrock's version suffix
(`-v1:0`) and Fireworks' `p` for a decimal point (`v3p1` -> `3.1`) are undone first.

A model matches a key when the model's `hosted_match` tokens appear in the key in order and every
other token of the key is a decoration that does not change the weights: serving words
(`instruct`, `chat`, `turbo`, `versatile`, ...), precisions (`fp8`, ...), routing/region words
(`us`, `global`, ...), Groq's context suffix (`8192`), the model's own optional tokens
(`hosted_optional`, e.g. `v 0 1` for Mixtral), and for proprietary models a release date
(`2024-08-06`, `20250929`). So `llama-guard-3-8b`, `deepseek-r1-distill-llama-70b` and
`gpt-4o-mini` do not match Llama 3 8B, Llama 70B or GPT-4o. Names the rule cannot reach are
listed explicitly in `hosted_names`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["HostedMatcher", "key_tokens"]

# Bedrock's listing version: `-v1:0`, `-v2:0`, and `-v1` on namespaced ids (`anthropic.claude-...-v1`).
# `-v0:2` is not one: there it is the model's own version (`mistral.mistral-7b-instruct-v0:2` = v0.2).
_BEDROCK_VERSION = re.compile(r"-v[1-9]\d*:0$")
_BEDROCK_NAMESPACED_VERSION = re.compile(r"^([a-z]+\..*)-v[1-9]\d*$")
_FIREWORKS_DECIMAL = re.compile(r"(\d)p(\d)")
_TOKEN = re.compile(r"[a-z]+|\d+[a-z0-9]*")

# Words that describe how a model is served, not which weights.
OPEN_DECORATIONS = frozenset(
    {
        "instruct",
        "chat",
        "hf",
        "it",
        "turbo",
        "versatile",
        "instant",
        "preview",
        "fast",
        "free",
        "specdec",
        "fp8",
        "fp16",
        "bf16",
        "int8",
        "int4",
        "awq",
        "maas",
        "open",
        "v",
        "meta",
        "latest",
        "4096",
        "8192",
        "32768",  # Groq appends the context length
    }
)
# Routing, region and namespace words that appear in keys of both open and proprietary models.
COMMON_DECORATIONS = frozenset(
    {
        "us",
        "eu",
        "apac",
        "global",
        "jp",
        "au",
        "anthropic",
        "openai",
        "google",
        "mistralai",
        "microsoft",
        "databricks",
    }
)


def key_tokens(key: str) -> list[str]:
    """Tokens of a LiteLLM key's last segment: `bedrock/us.meta.llama3-1-70b-instruct-v1:0` ->
    `['us', 'meta', 'llama', '3', '1', '70b', 'instruct']`."""
    name = key.rsplit("/", 1)[-1].lower()
    name = _BEDROCK_VERSION.sub("", name)
    name = _BEDROCK_NAMESPACED_VERSION.sub(r"\1", name)
    name = _FIREWORKS_DECIMAL.sub(r"\1.\2", name)
    return _TOKEN.findall(name)


def _is_date(tokens: Sequence[str], start: int) -> int:
    """Length of a release date starting at `start` (`2024 08 06` or `20240806`), else 0."""
    token = tokens[start]
    if re.fullmatch(r"20\d{6}", token):
        return 1
    rest = tokens[start : start + 3]
    if (
        len(rest) == 3
        and re.fullmatch(r"20\d\d", rest[0])
        and all(re.fullmatch(r"\d\d", t) for t in rest[1:])
    ):
        return 3
    return 0


@dataclass(frozen=True, slots=True)
class _Pattern:
    model_id: str
    required: tuple[str, ...]
    optional: frozenset[str]
    dated: bool  # proprietary models: release-date snapshots are the same model
    names: frozenset[str]  # explicit last segments, lower case

    def matches(self, last_segment: str, tokens: list[str]) -> bool:
        """Whether a key (its lower-case last segment and its tokens) serves this model."""
        if last_segment in self.names:
            return True
        leftovers = _without_subsequence(tokens, self.required)
        if leftovers is None:
            return False
        allowed = COMMON_DECORATIONS | self.optional | (frozenset() if self.dated else OPEN_DECORATIONS)
        i = 0
        while i < len(leftovers):
            if leftovers[i] in allowed:
                i += 1
            elif self.dated and (length := _is_date(leftovers, i)):
                i += length
            else:
                return False
        return True


def _without_subsequence(tokens: list[str], required: Sequence[str]) -> list[str] | None:
    """`tokens` minus the first in-order occurrence of `required`, or None if it does not occur."""
    leftovers: list[str] = []
    position = 0
    for token in tokens:
        if position < len(required) and token == required[position]:
            position += 1
        else:
            leftovers.append(token)
    return leftovers if position == len(required) else None


class HostedMatcher:
    """LiteLLM keys per catalog model, from each model's match tokens and explicit names."""

    def __init__(self) -> None:
        self._patterns: list[_Pattern] = []

    def add(
        self,
        model_id: str,
        match: str,
        optional: str = "",
        names: Iterable[str] = (),
        proprietary: bool = False,
    ) -> None:
        if not match and not names:
            return
        self._patterns.append(
            _Pattern(
                model_id=model_id,
                required=tuple(match.split()),
                optional=frozenset(optional.split()),
                dated=proprietary,
                names=frozenset(name.lower() for name in names),
            )
        )

    def match(self, keys: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """Keys per model id, in key order. A key that two models claim is an error in the table."""
        found: dict[str, list[str]] = {pattern.model_id: [] for pattern in self._patterns}
        for key in keys:
            last_segment, tokens = key.rsplit("/", 1)[-1].lower(), key_tokens(key)
            owners = {p.model_id for p in self._patterns if p.matches(last_segment, tokens)}
            if len(owners) > 1:
                raise ValueError(f"LiteLLM key {key!r} matches several models: {sorted(owners)}")
            if owners:
                found[owners.pop()].append(key)
        return {model_id: tuple(keys) for model_id, keys in found.items()}
