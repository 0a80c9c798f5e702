"""Array aliases and whole-unit rounding shared by the cost models."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["CEIL_TOLERANCE", "BoolArray", "FloatArray", "IntArray", "ceil_array", "ceil_count", "read_only"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

CEIL_TOLERANCE = 1e-9  # float noise that whole-unit rounding forgives


def ceil_count(value: float) -> int:
    """Whole units needed for `value`, tolerant of float noise (2.0000000001 -> 2)."""
    return max(math.ceil(value - CEIL_TOLERANCE), 0)


def ceil_array(values: FloatArray) -> FloatArray:
    """`ceil_count` over an array (kept as floats for further arithmetic)."""
    return np.maximum(np.ceil(values - CEIL_TOLERANCE), 0.0)


def read_only(*arrays: npt.NDArray[Any]) -> None:
    """Make `arrays` read-only: arrays a memo shares between requests and threads."""
    for array in arrays:
        array.flags.writeable = False
