"""The one place where the engine's `InvalidSpec` becomes the API's `InvalidInput`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from wheretorun.engine import InvalidSpec
from wheretorun.errors import InvalidInput

__all__ = ["engine_call"]

T = TypeVar("T")


def engine_call(prefix: str, build: Callable[[], T]) -> T:
    """Run `build`; an impossible input it finds is reported at `prefix` + its field
    (`body` + `model.kv_heads` -> `body.model.kv_heads`)."""
    try:
        return build()
    except InvalidSpec as error:
        raise InvalidInput(f"{prefix}.{error.field}", error.reason) from error
