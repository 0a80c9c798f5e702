"""The setups of cloud offers and bought hardware are remembered: the same arguments give the same
setup, equal to one built field by field, and any other argument gives its own."""

from __future__ import annotations

import dataclasses

import pytest

from tests.unit.recommend_catalog import G6, P5
from wheretorun.engine import recommendation
from wheretorun.engine.caches import clear_caches
from wheretorun.engine.recommendation import Setup, clear_setup_memo

_PURCHASE = {
    "scaling": "always_on",
    "units": 2,
    "accelerators": 16,
    "accelerators_per_replica": 4,
    "replicas": 4,
    "precision": "fp8",
    "serving_engine": "vllm",
}
_CLOUD = {
    "pricing_mode": "spot",
    "scaling": "autoscaled",
    "instances": 3,
    "accelerators": 24,
    "accelerators_per_replica": 8,
    "replicas": 3,
    "precision": "bf16",
    "serving_engine": "sglang",
}


def test_a_bought_setup_is_remembered_and_equal_to_one_built_field_by_field() -> None:
    clear_setup_memo()
    first = Setup.for_purchase("llama-3.1-70b", "h100-sxm", **_PURCHASE)
    assert first == Setup(
        model_id="llama-3.1-70b",
        accelerator_id="h100-sxm",
        accelerator_count=16,
        accelerators_per_replica=4,
        replicas=4,
        precision="fp8",
        serving_engine="vllm",
        instance_count=2,
        pricing_mode="purchase",
        scaling="always_on",
    )
    assert Setup.for_purchase("llama-3.1-70b", "h100-sxm", **_PURCHASE) is first
    clear_caches()
    afresh = Setup.for_purchase("llama-3.1-70b", "h100-sxm", **_PURCHASE)
    assert afresh is not first
    assert afresh == first


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("scaling", "autoscaled"),
        ("units", 3),
        ("accelerators", 8),
        ("accelerators_per_replica", 2),
        ("replicas", 8),
        ("precision", "int8"),
        ("serving_engine", None),
    ],
)
def test_any_other_argument_gives_its_own_bought_setup(name: str, value: object) -> None:
    first = Setup.for_purchase("llama-3.1-70b", "h100-sxm", **_PURCHASE)
    other = Setup.for_purchase("llama-3.1-70b", "h100-sxm", **{**_PURCHASE, name: value})
    field = {"units": "instance_count", "accelerators": "accelerator_count"}.get(name, name)
    assert getattr(other, field) == value
    assert dataclasses.replace(first, **{field: value}) == other
    assert Setup.for_purchase("llama-3.1-8b", "h100-sxm", **_PURCHASE).model_id == "llama-3.1-8b"
    assert Setup.for_purchase("llama-3.1-70b", "l4", **_PURCHASE).accelerator_id == "l4"


def test_a_cloud_setup_is_remembered_for_that_offer_object_only() -> None:
    clear_setup_memo()
    first = Setup.for_cloud("llama-3.1-70b", P5, **_CLOUD)
    assert first == Setup(
        model_id="llama-3.1-70b",
        accelerator_id="h100-sxm",
        accelerator_count=24,
        accelerators_per_replica=8,
        replicas=3,
        precision="bf16",
        serving_engine="sglang",
        provider="aws",
        region="us-east-1",
        instance_type="p5.48xlarge",
        instance_count=3,
        pricing_mode="spot",
        scaling="autoscaled",
        offer_ids=(1,),
    )
    assert Setup.for_cloud("llama-3.1-70b", P5, **_CLOUD) is first
    moved = dataclasses.replace(P5, id=9, region="eu-west-1")
    elsewhere = Setup.for_cloud("llama-3.1-70b", moved, **_CLOUD)
    assert (elsewhere.region, elsewhere.offer_ids) == ("eu-west-1", (9,))
    assert Setup.for_cloud("llama-3.1-70b", G6, **_CLOUD).instance_type == "g6.xlarge"
    on_demand = Setup.for_cloud("llama-3.1-70b", P5, **{**_CLOUD, "pricing_mode": "on_demand"})
    assert on_demand == dataclasses.replace(first, pricing_mode="on_demand")


def test_the_remembered_setups_are_bounded() -> None:
    clear_setup_memo()
    for units in range(recommendation._SETUPS_KEPT + 10):
        Setup.for_purchase("llama-3.1-70b", "h100-sxm", **{**_PURCHASE, "units": units + 1})
        assert len(recommendation._SETUPS) <= recommendation._SETUPS_KEPT
    assert Setup.for_purchase("llama-3.1-70b", "h100-sxm", **{**_PURCHASE, "units": 7}).instance_count == 7
