"""Where the tests find the shipped source files (to compute expectations independently)."""

from __future__ import annotations

from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent.parent / "wheretorun" / "pricing" / "data"
SOURCES_DIR = DATA_DIR / "sources"
CALIBRATION_DIR = DATA_DIR / "calibration"
SKYPILOT_DIR = SOURCES_DIR / "skypilot-catalog"
LITELLM_FILE = SOURCES_DIR / "litellm" / "model_prices_and_context_window.json"
EPOCH_FILE = SOURCES_DIR / "epoch-ml-hardware" / "ml_hardware.csv"
