"""What the recommender remembers between requests: the suspect cloud offers' rejections, merged
into each request's book (the same groups as recording every suspect price one by one, after the
hosted ones), and the sources of an assumptions value (those `Assumptions.sources` gives)."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import cast

import pytest

from tests.unit.recommend_catalog import TOGETHER_8B, cloud_offer, snapshot
from wheretorun.engine import recommend as recommend_module
from wheretorun.engine.assumptions import Assumptions
from wheretorun.engine.caches import clear_caches
from wheretorun.engine.catalog import ApiPriceOffer, CatalogSnapshot, CloudOffer
from wheretorun.engine.planning.context import Context
from wheretorun.engine.planning.rejections import EXAMPLES_PER_GROUP, RejectionBook
from wheretorun.engine.recommendation import RejectedGroup, RejectReason
from wheretorun.engine.workload import Constraints, InferenceWorkload

_WORKLOAD = InferenceWorkload(
    models=("llama-3.1-8b",), requests_per_day=300, input_tokens=800, output_tokens=200
)


def _suspect_offers(count: int) -> tuple[CloudOffer, ...]:
    return tuple(
        dataclasses.replace(
            cloud_offer(100 + index, f"p5.suspect{index}", "h100-sxm", "8", "1.00", None),
            # a few offers share a reason, as in the catalog
            suspect_reason=f"implausibly cheap ({index % 3})" if index % 2 else None,
        )
        for index in range(count)
    )


def _hosted(count: int) -> tuple[ApiPriceOffer, ...]:
    return tuple(
        dataclasses.replace(
            TOGETHER_8B, id=500 + index, provider=f"resold{index}", suspect_reason="a zero price"
        )
        for index in range(count)
    )


def _counted(catalog: CatalogSnapshot) -> tuple[RejectedGroup, ...]:
    context = SimpleNamespace(book=RejectionBook(), notes=[])
    recommend_module._count_suspect(catalog, _WORKLOAD, Constraints(), cast(Context, context))
    return context.book.groups()


def _counted_one_by_one(
    hosted: tuple[ApiPriceOffer, ...], offers: tuple[CloudOffer, ...]
) -> tuple[RejectedGroup, ...]:
    """The rule written plainly: every suspect price recorded in turn, hosted rows first."""
    book = RejectionBook()
    for price in hosted:
        book.reject(RejectReason.SUSPECT_PRICE, f"{price.provider} {price.model_id}: {price.suspect_reason}")
    for offer in offers:
        if offer.suspect_reason is not None:
            subject = f"{offer.provider} {offer.instance_type} {offer.region}"
            book.reject(RejectReason.SUSPECT_PRICE, f"{subject}: {offer.suspect_reason}")
    return book.groups()


@pytest.mark.parametrize("hosted", [0, 1, EXAMPLES_PER_GROUP])
@pytest.mark.parametrize("offers", [0, 3, 2 * EXAMPLES_PER_GROUP + 3])
def test_suspect_offers_count_as_if_recorded_one_by_one(hosted: int, offers: int) -> None:
    clear_caches()
    catalog = snapshot(suspect_cloud_offers=_suspect_offers(offers), suspect_api_prices=_hosted(hosted))
    expected = _counted_one_by_one(_hosted(hosted), _suspect_offers(offers))
    assert _counted(catalog) == expected  # computed
    assert _counted(catalog) == expected  # remembered


def test_the_remembered_rejections_are_those_of_the_same_offers() -> None:
    clear_caches()
    fewer = snapshot(suspect_cloud_offers=_suspect_offers(3))
    more = snapshot(suspect_cloud_offers=_suspect_offers(9))
    assert _counted(fewer)[0].count == 1
    assert _counted(more)[0].count == 4
    assert _counted(fewer)[0].count == 1
    included = Constraints(include_suspect_prices=True)
    context = SimpleNamespace(book=RejectionBook(), notes=[])
    recommend_module._count_suspect(more, _WORKLOAD, included, cast(Context, context))
    assert context.book.groups() == ()


def test_the_sources_of_the_assumptions_are_those_of_the_value_in_use() -> None:
    clear_caches()
    mine = Assumptions(pue=1.2, horizon_months=24)
    first = recommend_module.recommend(_WORKLOAD, Constraints(), mine, snapshot())
    again = recommend_module.recommend(_WORKLOAD, Constraints(), mine, snapshot())
    assert dict(first.assumption_sources) == mine.sources()
    assert again.assumption_sources is first.assumption_sources
    with pytest.raises(TypeError):
        first.assumption_sources["pue"] = "changed"  # type: ignore[index]
    equal = Assumptions(pue=1.2, horizon_months=24)  # another value, equal
    assert dict(
        recommend_module.recommend(_WORKLOAD, Constraints(), equal, snapshot()).assumption_sources
    ) == (mine.sources())
    defaults = recommend_module.recommend(_WORKLOAD, Constraints(), Assumptions(), snapshot())
    assert dict(defaults.assumption_sources) == Assumptions().sources()
    assert defaults.assumption_sources["pue"] != "set by the request"
