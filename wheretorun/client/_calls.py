"""Every `/v1` operation as a `Call`: its method, path, parameters and body, in one place.

The function names are the OpenAPI `operationId`s; both clients expose a method of the same name
that sends the call built here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal
from urllib.parse import quote

from wheretorun.client._core import Call, body, creating, if_match
from wheretorun.client.types import Body

Chart = Literal["cost_stack", "break_even", "tornado", "monte_carlo"]
ChartFormat = Literal["svg", "png"]
TableFormat = Literal["csv", "xlsx"]


def _id(value: str | int) -> str:
    return quote(str(value), safe="")


# --- catalog -------------------------------------------------------------------------------------


def list_accelerators(filters: Mapping[str, Any]) -> Call:
    return Call("GET", "/v1/accelerators", params=filters)


def get_accelerator(accelerator_id: str) -> Call:
    return Call("GET", f"/v1/accelerators/{_id(accelerator_id)}")


def list_models(filters: Mapping[str, Any]) -> Call:
    return Call("GET", "/v1/models", params=filters)


def get_model(model_id: str) -> Call:
    return Call("GET", f"/v1/models/{_id(model_id)}")


def list_cloud_offers(filters: Mapping[str, Any]) -> Call:
    return Call("GET", "/v1/cloud-offers", params=filters)


def get_cloud_offer(offer_id: int) -> Call:
    return Call("GET", f"/v1/cloud-offers/{_id(offer_id)}")


def list_api_prices(filters: Mapping[str, Any]) -> Call:
    return Call("GET", "/v1/api-prices", params=filters)


def get_api_price(price_id: int) -> Call:
    return Call("GET", f"/v1/api-prices/{_id(price_id)}")


def list_energy_prices(filters: Mapping[str, Any]) -> Call:
    return Call("GET", "/v1/energy-prices", params=filters)


def get_catalog() -> Call:
    return Call("GET", "/v1/catalog")


def list_catalog_versions(filters: Mapping[str, Any]) -> Call:
    return Call("GET", "/v1/catalog/versions", params=filters)


# --- estimates and recommendations ---------------------------------------------------------------


def estimate_inference(request: Body) -> Call:
    return Call("POST", "/v1/estimates/inference", json=body(request), side_effect_free=True)


def estimate_training(request: Body) -> Call:
    return Call("POST", "/v1/estimates/training", json=body(request), side_effect_free=True)


def create_recommendation(request: Body) -> Call:
    # Computes a recommendation; nothing is stored, so it needs no Idempotency-Key to be retried.
    return Call("POST", "/v1/recommendations", json=body(request), side_effect_free=True)


def list_recommendation_assumptions() -> Call:
    return Call("GET", "/v1/recommendations/assumptions")


# --- scenarios -----------------------------------------------------------------------------------


def create_scenario(scenario: Body) -> Call:
    return creating("POST", "/v1/scenarios", json=body(scenario))


def list_scenarios(filters: Mapping[str, Any]) -> Call:
    return Call("GET", "/v1/scenarios", params=filters)


def get_scenario(scenario_id: int) -> Call:
    return Call("GET", f"/v1/scenarios/{_id(scenario_id)}")


def update_scenario(scenario_id: int, scenario: Body, version_or_etag: int | str) -> Call:
    return Call(
        "PUT",
        f"/v1/scenarios/{_id(scenario_id)}",
        json=body(scenario),
        headers={"If-Match": if_match(version_or_etag)},
    )


def delete_scenario(scenario_id: int, version_or_etag: int | str) -> Call:
    return Call(
        "DELETE", f"/v1/scenarios/{_id(scenario_id)}", headers={"If-Match": if_match(version_or_etag)}
    )


def list_scenario_versions(scenario_id: int) -> Call:
    return Call("GET", f"/v1/scenarios/{_id(scenario_id)}/versions")


def get_scenario_version(scenario_id: int, version: int) -> Call:
    return Call("GET", f"/v1/scenarios/{_id(scenario_id)}/versions/{_id(version)}")


def evaluate_unsaved_scenario(scenario: Body, fmt: Literal["json"] | TableFormat = "json") -> Call:
    return Call(
        "POST", "/v1/scenarios/evaluate", params={"format": fmt}, json=body(scenario), side_effect_free=True
    )


def evaluate_scenario(
    scenario_id: int, analyses: Body | None, fmt: Literal["json"] | TableFormat = "json"
) -> Call:
    return Call(
        "POST",
        f"/v1/scenarios/{_id(scenario_id)}/evaluate",
        params={"format": fmt},
        json=body(analyses),
        side_effect_free=True,
    )


def chart_unsaved_scenario(chart: Chart, scenario: Body, fmt: ChartFormat, plan: str | None) -> Call:
    return Call(
        "POST",
        f"/v1/scenarios/charts/{_id(chart)}",
        params={"format": fmt, "plan": plan},
        json=body(scenario),
        side_effect_free=True,
    )


def chart_scenario(
    scenario_id: int, chart: Chart, analyses: Body | None, fmt: ChartFormat, plan: str | None
) -> Call:
    return Call(
        "POST",
        f"/v1/scenarios/{_id(scenario_id)}/charts/{_id(chart)}",
        params={"format": fmt, "plan": plan},
        json=body(analyses),
        side_effect_free=True,
    )


def compare_scenarios(scenario_ids: Iterable[int], scenarios: Iterable[Body]) -> Call:
    payload = {"scenario_ids": list(scenario_ids), "scenarios": [body(s) for s in scenarios]}
    return Call("POST", "/v1/scenarios/compare", json=payload, side_effect_free=True)


# --- admin (API key) -----------------------------------------------------------------------------


def start_import(
    *,
    format: Literal["skypilot", "litellm", "canonical"],
    content: str | bytes | None,
    url: str | None,
    filename: str | None,
    provider: str | None,
    dry_run: bool,
    force: bool,
) -> Call:
    """Text `content` (or a `url`) goes as JSON; `bytes` content is uploaded as a multipart file."""
    if isinstance(content, bytes):
        form = {"format": format, "provider": provider, "dry_run": dry_run, "force": force}
        return creating(
            "POST",
            "/v1/admin/imports",
            files={"file": (filename or "upload", content)},
            data={
                name: str(value).lower() if isinstance(value, bool) else value
                for name, value in form.items()
                if value is not None
            },
        )
    payload = {
        "format": format,
        "content": content,
        "url": url,
        "filename": filename,
        "provider": provider,
        "dry_run": dry_run,
        "force": force,
    }
    return creating("POST", "/v1/admin/imports", json={k: v for k, v in payload.items() if v is not None})


def list_imports(filters: Mapping[str, Any]) -> Call:
    return Call("GET", "/v1/admin/imports", params=filters)


def get_import(import_id: int) -> Call:
    return Call("GET", f"/v1/admin/imports/{_id(import_id)}")


def list_overrides(filters: Mapping[str, Any]) -> Call:
    return Call("GET", "/v1/admin/overrides", params=filters)


def create_override(override: Body) -> Call:
    return creating("POST", "/v1/admin/overrides", json=body(override))


def end_override(override_id: int) -> Call:
    # Not a creation: no Idempotency-Key, so never retried (a second end would be a 409).
    return Call("POST", f"/v1/admin/overrides/{_id(override_id)}/end")


def list_audit_entries(filters: Mapping[str, Any]) -> Call:
    return Call("GET", "/v1/admin/audit", params=filters)


# --- probes (outside /v1) ------------------------------------------------------------------------


def healthz() -> Call:
    return Call("GET", "/healthz")


def readyz() -> Call:
    return Call("GET", "/readyz")
