"""Every memo the engine keeps between calls, and one way to forget them all.

Each memo holds results of pure functions of immutable values (capacity tables, replica layouts,
the eligible offers and purchasable hardware and the sizing of the offer groups, each pricing
mode's cheapest row per (group, sizing key), owned servers' figures and cloud layouts' rates as
columns, training sizings, the catalog's columns, the hosted price rows by model, each hosted
row's setup and token prices, the setups of cloud offers and bought hardware, the suspect cloud
offers' rejections, the sources of assumptions, Poisson quantiles), is bounded in size, and
changes timing only: `clear_caches()` exists so tests and benches can compare the remembered
path with the answer computed afresh. The memos of large immutable inputs match them by identity
(engine/memo.py).
"""

from __future__ import annotations

from wheretorun.engine import recommend, recommendation, spot_reclaims, training_setting
from wheretorun.engine.capacity import clear_capacity_cache
from wheretorun.engine.costs import hosted, training_jobs
from wheretorun.engine.planning import (
    acceptable_models,
    cloud_sizing,
    cloud_table,
    layouts,
    offers,
    serving_candidates,
    training_candidates,
)

__all__ = ["clear_caches"]


def clear_caches() -> None:
    """Forget every remembered result (the next call computes afresh)."""
    clear_capacity_cache()
    training_setting.clear_training_setting_cache()
    training_jobs.clear_job_sizers()
    spot_reclaims.poisson_quantile.cache_clear()
    cloud_table.clear_catalog_columns()
    cloud_table.clear_pair_minima()
    layouts.clear_layout_memo()
    offers.clear_screened_offers()
    cloud_sizing.clear_sized_groups()
    acceptable_models.clear_price_index()
    training_candidates.clear_sized_jobs()
    serving_candidates.clear_serving_memos()
    hosted.clear_row_memos()
    recommendation.clear_setup_memo()
    recommend.clear_recommend_memos()
