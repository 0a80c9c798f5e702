"""The SkyPilot `GpuInfo` cell: GPU name and memory, with each cloud's quirks undone.

The cell is Python-dict-like text (`{'Gpus': [{'Name': 'H100', 'MemoryInfo': {'SizeInMiB': 81920}}], ...}`),
JSON in Verda's file, only a GPU name in Azure's, and empty for some AWS accelerators. The memory
fields mean different things per cloud (see `data/sources/README.md`); `per_gpu_memory_gb` applies
the documented rule for each.

SkyPilot sizes are the vendor's nominal gigabytes times 1024 in almost every row (H100 `81920` =
80 x 1024, H200 `144384` = 141 x 1024), so GB here is `SizeInMiB / 1024`: the nominal figure a spec
sheet prints, not a binary-to-decimal conversion (which would turn an 80 GB card into 85.9 GB).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any

__all__ = ["GpuInfo", "parse_gpu_info", "per_gpu_memory_gb"]

_NULL = re.compile(r"\bnull\b")

# Clouds whose SizeInMiB is the total over all GPUs of the instance, not one GPU.
_SIZE_IS_INSTANCE_TOTAL = frozenset({"vast", "verda"})
# Clouds whose "...InMiB" values are in fact GB.
_SIZE_IS_GB = frozenset({"runpod"})


@dataclass(frozen=True, slots=True)
class GpuInfo:
    name: str | None
    size_mib: float | None  # MemoryInfo.SizeInMiB of the first GPU entry, as published


@lru_cache(maxsize=4096)
def parse_gpu_info(text: str) -> GpuInfo:
    """Parse one `GpuInfo` cell; unparseable or empty cells give an empty `GpuInfo`."""
    text = text.strip()
    if not text:
        return GpuInfo(None, None)
    if not text.startswith("{"):
        return GpuInfo(text, None)  # Azure: the GPU name only
    data = _load_dict(text)
    gpus = data.get("Gpus") or [{}]
    first = gpus[0] if isinstance(gpus[0], dict) else {}
    memory = first.get("MemoryInfo") or {}
    size = memory.get("SizeInMiB") if isinstance(memory, dict) else None
    name = first.get("Name")
    return GpuInfo(
        name=str(name) if name else None,
        size_mib=float(size) if isinstance(size, int | float) else None,
    )


def _load_dict(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        try:
            value = ast.literal_eval(_NULL.sub("None", text))
        except (ValueError, SyntaxError):
            return {}
    return value if isinstance(value, dict) else {}


def per_gpu_memory_gb(info: GpuInfo, provider: str, accelerator_count: Decimal) -> float | None:
    """Memory of one whole GPU in nominal GB, or None when the cell has no usable figure.

    RunPod publishes GB in the MiB fields; Vast and Verda publish the instance total; AWS `g6f`/`gr6f`
    publish the memory of a fractional slice (count < 1), so the whole GPU is slice / count.
    """
    size = info.size_mib
    if size is None or size <= 0 or accelerator_count <= 0:
        return None
    if provider in _SIZE_IS_GB:
        return size
    count = float(accelerator_count)
    if provider in _SIZE_IS_INSTANCE_TOTAL or count < 1:
        size = size / count
    return round(size / 1024, 2)
