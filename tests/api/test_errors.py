"""Every error path answers RFC 9457 problem+json that names the failing parameter."""

from __future__ import annotations

import pytest

from wheretorun.api.inprocess import InProcessClient

PROBLEM = "application/problem+json"


def assert_problem(response, status: int, field: str | None = None) -> dict:  # type: ignore[no-untyped-def]
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    body = response.json()
    assert body["status"] == status
    assert body["title"]
    assert body["detail"]
    if field is not None:
        assert field in [error["field"] for error in body["errors"]], body
    return body


@pytest.mark.parametrize(
    "path",
    [
        "/v1/accelerators/no-such-gpu",
        "/v1/models/no-such-model",
        "/v1/cloud-offers/999999999",
        "/v1/api-prices/999999999",
        "/v1/no-such-collection",
    ],
)
def test_unknown_ids_are_404_problems(client: InProcessClient, path: str) -> None:
    assert_problem(client.get(path), 404)


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/v1/accelerators?limit=501", "query.limit"),
        ("/v1/accelerators?limit=0", "query.limit"),
        ("/v1/models?offset=-1", "query.offset"),
        ("/v1/cloud-offers?limit=abc", "query.limit"),
        ("/v1/cloud-offers?max_usd_per_hour=-1", "query.max_usd_per_hour"),
        ("/v1/cloud-offers?pricing_mode=reserved", "query.pricing_mode"),
        ("/v1/cloud-offers?accelerator=NoSuchGPU-9000", "query.accelerator"),
        ("/v1/cloud-offers?as_of=yesterday", "query.as_of"),
        ("/v1/cloud-offers?sort=price", "query.sort"),
        ("/v1/accelerators?kind=quantum", "query.kind"),
        ("/v1/accelerators?min_memory_gb=-5", "query.min_memory_gb"),
        ("/v1/api-prices?max_input_usd_per_million_tokens=x", "query.max_input_usd_per_million_tokens"),
        ("/v1/api-prices?sort=-nonsense", "query.sort"),
        ("/v1/models?min_params_b=100&max_params_b=10", "query.min_params_b"),
        ("/v1/cloud-offers/not-a-number", "path.offer_id"),
    ],
)
def test_bad_parameters_are_422_problems_naming_the_parameter(
    client: InProcessClient, path: str, field: str
) -> None:
    assert_problem(client.get(path), 422, field)


def test_wrong_method_is_a_405_problem(client: InProcessClient) -> None:
    assert_problem(client.delete("/v1/accelerators"), 405)
