"""The read API over the seeded catalog: filters, sorting, pagination, aliases, as-of."""

from __future__ import annotations

import csv
from decimal import Decimal
from typing import Any

import pytest

from tests.sources import CALIBRATION_DIR
from wheretorun.api.inprocess import InProcessClient


def all_pages(client: InProcessClient, path: str, **params: Any) -> list[dict[str, Any]]:
    """Every item of a listing, fetched 500 at a time; checks `total` on the way."""
    items: list[dict[str, Any]] = []
    offset = 0
    while True:
        body = client.get(path, params={**params, "limit": 500, "offset": offset}).raise_for_status().json()
        items.extend(body["items"])
        offset += 500
        if offset >= body["total"]:
            assert len(items) == body["total"]
            return items


def test_health_and_readiness(client: InProcessClient) -> None:
    assert client.get("/healthz").json()["status"] == "ok"
    ready = client.get("/readyz").json()
    assert ready["status"] == "ok"
    assert ready["database"] in {"sqlite", "postgresql"}


def test_pages_partition_the_result(client: InProcessClient) -> None:
    first = client.get("/v1/cloud-offers", params={"provider": "lambda", "limit": 7, "sort": "id"}).json()
    second = client.get(
        "/v1/cloud-offers", params={"provider": "lambda", "limit": 7, "offset": 7, "sort": "id"}
    ).json()
    assert first["total"] == second["total"] > 14
    assert (first["limit"], first["offset"], second["offset"]) == (7, 0, 7)
    first_ids = [item["id"] for item in first["items"]]
    second_ids = [item["id"] for item in second["items"]]
    assert len(first_ids) == len(second_ids) == 7
    assert not set(first_ids) & set(second_ids)
    assert max(first_ids) < min(second_ids)


def test_offset_past_the_end_is_an_empty_page(client: InProcessClient) -> None:
    body = client.get("/v1/accelerators", params={"offset": 100000}).json()
    assert body["items"] == []
    assert body["total"] > 0


@pytest.mark.parametrize(
    "column", ["on_demand_usd_per_hour", "on_demand_usd_per_accelerator_hour", "spot_usd_per_hour"]
)
def test_sorting_orders_prices_with_unknown_prices_last(client: InProcessClient, column: str) -> None:
    for descending in (False, True):
        sort = f"-{column}" if descending else column
        items = client.get("/v1/cloud-offers", params={"provider": "aws", "sort": sort, "limit": 500}).json()[
            "items"
        ]
        prices = [Decimal(i[column]) for i in items if i[column] is not None]
        assert prices == sorted(prices, reverse=descending)
        first_unknown = next((n for n, i in enumerate(items) if i[column] is None), len(items))
        assert all(i[column] is None for i in items[first_unknown:])


def test_price_cap_applies_to_the_chosen_pricing_mode(client: InProcessClient) -> None:
    everything = all_pages(client, "/v1/cloud-offers", provider="aws")
    cap = Decimal("3")
    on_demand = all_pages(client, "/v1/cloud-offers", provider="aws", max_usd_per_hour=str(cap))
    expected = {
        o["id"]
        for o in everything
        if o["on_demand_usd_per_hour"] and Decimal(o["on_demand_usd_per_hour"]) <= cap
    }
    assert {o["id"] for o in on_demand} == expected
    spot = all_pages(
        client, "/v1/cloud-offers", provider="aws", pricing_mode="spot", max_usd_per_hour=str(cap)
    )
    expected_spot = {
        o["id"] for o in everything if o["spot_usd_per_hour"] and Decimal(o["spot_usd_per_hour"]) <= cap
    }
    assert {o["id"] for o in spot} == expected_spot
    assert expected != expected_spot


def test_accelerator_filter_accepts_any_alias(client: InProcessClient) -> None:
    by_id = {}
    for spelling in ("A100-80GB", "a100 80gb", "NVIDIA A100 SXM4 80 GB"):
        items = all_pages(client, "/v1/cloud-offers", accelerator=spelling)
        assert items, spelling
        by_id[spelling] = {o["accelerator_id"] for o in items}
    assert len({frozenset(ids) for ids in by_id.values()}) == 1
    assert len(next(iter(by_id.values()))) == 1


def test_memory_filter_uses_the_accelerator_spec(client: InProcessClient) -> None:
    items = all_pages(client, "/v1/cloud-offers", min_memory_gb=80)
    assert items
    assert all(o["accelerator_memory_gb"] is not None and o["accelerator_memory_gb"] >= 80 for o in items)
    accelerators = {o["accelerator_id"] for o in items}
    assert "h100-sxm" in {a.lower() for a in accelerators} or any("h100" in a.lower() for a in accelerators)


def test_suspect_offers_are_hidden_unless_asked_for(client: InProcessClient) -> None:
    shown = all_pages(client, "/v1/cloud-offers", provider="mithril")
    with_suspect = all_pages(client, "/v1/cloud-offers", provider="mithril", include_suspect=True)
    suspects = [o for o in with_suspect if o["suspect"]]
    assert suspects, "Mithril's $0.01-0.08/node A100/B200 prices must be flagged"
    assert all(o["suspect_reason"] for o in suspects)
    assert not any(o["suspect"] for o in shown)
    assert len(shown) + len(suspects) == len(with_suspect)


def test_gcp_rows_are_accelerator_only(client: InProcessClient) -> None:
    gcp = all_pages(client, "/v1/cloud-offers", provider="gcp")
    assert gcp
    assert all(o["accelerator_only"] for o in gcp)
    without = all_pages(client, "/v1/cloud-offers", provider="gcp", include_accelerator_only=False)
    assert without == []


def test_no_price_is_served_as_zero(client: InProcessClient) -> None:
    for item in all_pages(client, "/v1/cloud-offers", include_suspect=True):
        for key in ("on_demand_usd_per_hour", "spot_usd_per_hour"):
            assert item[key] is None or Decimal(item[key]) > 0, item
    for item in all_pages(client, "/v1/api-prices", include_suspect=True, provider="openai"):
        for key, value in item.items():
            if key.endswith("_usd_per_million_tokens") and value is not None:
                assert Decimal(value) > 0, item


def _vendor_bf16(accelerator_id: str, published: dict[str, str]) -> float:
    """The dense BF16 peak: the vendor whitepaper's FP32-accumulate rate where
    accelerator_tensor_peaks.csv corrects the calibration table (RTX 4090: 165.2, not the
    FP16-accumulate 330), else the calibration figure."""
    with (CALIBRATION_DIR.parent / "accelerator_tensor_peaks.csv").open(
        encoding="utf-8", newline=""
    ) as handle:
        for row in csv.DictReader(handle):
            if row["id"] == accelerator_id and row["field"] == "bf16_tflops":
                return float(row["value"])
    return float(published["fp16_bf16_dense_tflops"])


def _calibration_gpu(name: str) -> dict[str, str]:
    with (CALIBRATION_DIR / "gpus.csv").open(encoding="utf-8", newline="") as handle:
        return next(row for row in csv.DictReader(handle) if row["gpu"] == name)


@pytest.mark.parametrize(
    ("spelling", "calibration_name"),
    [
        ("H100", "NVIDIA H100 SXM"),
        ("A100-80GB", "NVIDIA A100 SXM 80GB"),
        ("L4", "NVIDIA L4"),
        ("RTX4090", "NVIDIA GeForce RTX 4090"),
    ],
)
def test_key_accelerators_have_their_published_specs(
    client: InProcessClient, spelling: str, calibration_name: str
) -> None:
    accelerator = client.get(f"/v1/accelerators/{spelling}").raise_for_status().json()
    published = _calibration_gpu(calibration_name)
    assert accelerator["memory_gb"] == pytest.approx(float(published["memory_gb"]))
    assert accelerator["memory_bandwidth_gb_s"] == pytest.approx(float(published["memory_bandwidth_gb_s"]))
    assert accelerator["bf16_tflops"] == pytest.approx(_vendor_bf16(accelerator["id"], published))
    assert accelerator["tdp_w"] == pytest.approx(float(published["tdp_w"]))
    assert (
        spelling.lower() in [alias.lower() for alias in accelerator["aliases"]]
        or accelerator["id"] == spelling
    )


def test_accelerator_filters(client: InProcessClient) -> None:
    consumer = all_pages(client, "/v1/accelerators", kind="consumer")
    assert consumer
    assert all(a["kind"] == "consumer" for a in consumer)
    big = all_pages(client, "/v1/accelerators", min_memory_gb=100, vendor="nvidia")
    assert big
    assert all(a["memory_gb"] >= 100 and a["vendor"] == "NVIDIA" for a in big)
    found = all_pages(client, "/v1/accelerators", q="4090")
    assert any("4090" in a["name"] for a in found)


def test_open_models_link_to_the_hosted_ids_that_serve_them(client: InProcessClient) -> None:
    open_models = all_pages(client, "/v1/models", open_weights=True)
    assert len(open_models) >= 20
    for model in open_models:
        assert model["layers"], model["id"]
        assert model["attention_heads"], model["id"]
        assert model["kv_heads"], model["id"]
        assert model["attention_heads"] % model["kv_heads"] == 0, model["id"]
    served = [m for m in open_models if m["hosted_model_ids"]]
    assert served, "at least some open models are served by hosted APIs"
    model = served[0]
    prices = all_pages(client, "/v1/api-prices", model=model["id"], include_suspect=True)
    assert set(model["hosted_model_ids"]) <= {p["model_id"] for p in prices}


def test_api_price_filters(client: InProcessClient) -> None:
    cap = Decimal("1")
    cheap = all_pages(client, "/v1/api-prices", mode="chat", max_input_usd_per_million_tokens=str(cap))
    assert cheap
    assert all(p["mode"] == "chat" and Decimal(p["input_usd_per_million_tokens"]) <= cap for p in cheap)
    anthropic = client.get(
        "/v1/api-prices", params={"provider": "anthropic", "sort": "-output_usd_per_million_tokens"}
    )
    outputs = [
        Decimal(p["output_usd_per_million_tokens"])
        for p in anthropic.json()["items"]
        if p["output_usd_per_million_tokens"]
    ]
    assert outputs == sorted(outputs, reverse=True)


def test_catalog_summary_matches_the_listings(client: InProcessClient) -> None:
    summary = client.get("/v1/catalog").json()
    assert summary["version"]["id"] >= 1
    assert summary["version"]["sources"], "the sources and their dates are listed"
    counts = summary["counts"]
    for collection, key in [("accelerators", "accelerators"), ("models", "models")]:
        assert client.get(f"/v1/{collection}", params={"limit": 1}).json()["total"] == counts[key]
    shown = client.get("/v1/cloud-offers", params={"limit": 1, "include_suspect": True}).json()["total"]
    assert shown == counts["cloud_offers"]
    assert len(summary["providers"]) >= 10


def test_as_of_before_the_catalog_sees_no_prices(client: InProcessClient) -> None:
    before = client.get("/v1/cloud-offers", params={"as_of": "2000-01-01T00:00:00Z"}).json()
    assert before["total"] == 0
    now = client.get("/v1/cloud-offers", params={"as_of": "2030-01-01T00:00:00"}).json()
    assert now["total"] == client.get("/v1/cloud-offers").json()["total"] > 0


def test_openapi_has_stable_operation_ids(client: InProcessClient) -> None:
    spec = client.get("/openapi.json").json()
    operation_ids = {op["operationId"] for path in spec["paths"].values() for op in path.values()}
    assert {
        "list_accelerators",
        "get_accelerator",
        "list_models",
        "get_model",
        "list_cloud_offers",
        "get_cloud_offer",
        "list_api_prices",
        "get_api_price",
        "get_catalog",
        "healthz",
        "readyz",
    } <= operation_ids
    assert all(path.startswith("/v1/") or path in {"/healthz", "/readyz"} for path in spec["paths"])


def test_an_accelerator_says_what_its_purchase_price_buys(client: InProcessClient) -> None:
    h100 = client.get("/v1/accelerators/h100-sxm").raise_for_status().json()
    assert (h100["purchase_price_basis"], h100["purchase_accelerators_per_unit"]) == ("system", 8)
    assert Decimal(h100["purchase_price_usd"]) / 8 == Decimal("33600")
    l40s = client.get("/v1/accelerators/l40s").raise_for_status().json()
    assert (l40s["purchase_price_basis"], l40s["purchase_accelerators_per_unit"]) == ("chip", 1)
    assert client.get("/v1/catalog").json()["counts"]["commitment_terms"] == 26
