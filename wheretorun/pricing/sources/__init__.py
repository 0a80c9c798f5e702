"""Pure readers of the public catalog files and our curated tables (no database, no network).

Each reader takes text or a path and returns the plain records of `wheretorun.pricing.records`:

* `read_accelerators(data_dir)` and `AliasResolver` (accelerator names -> canonical ids);
* `read_skypilot_offers(text, provider, resolver, source)` / `read_skypilot_dir(directory)`;
* `read_models(data_dir)` with the LiteLLM keys serving each model (`hosted_index` inverts it);
* `read_litellm_prices(text, source, model_index)` / `read_litellm_file(path, model_index)`.

`DATA_DIR` is the data shipped in the package; `data/SOURCES.md` says where each file came from.
"""

from __future__ import annotations

from wheretorun.pricing.sources.accelerators import load_resolver, read_accelerators
from wheretorun.pricing.sources.aliases import AliasResolver, normalise_alias
from wheretorun.pricing.sources.litellm import read_litellm_file, read_litellm_prices
from wheretorun.pricing.sources.manifest import DATA_DIR
from wheretorun.pricing.sources.models import hosted_index, read_models
from wheretorun.pricing.sources.skypilot import read_skypilot_dir, read_skypilot_offers

__all__ = [
    "DATA_DIR",
    "AliasResolver",
    "hosted_index",
    "load_resolver",
    "normalise_alias",
    "read_accelerators",
    "read_litellm_file",
    "read_litellm_prices",
    "read_models",
    "read_skypilot_dir",
    "read_skypilot_offers",
]
