"""`WheretorunClient`: the blocking client. `_async.py` is the same API with `async def`."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal, Unpack, cast

import httpx

from wheretorun.client import _calls as calls
from wheretorun.client._core import (
    DEFAULT_TIMEOUT_S,
    Call,
    RetryPolicy,
    checked,
    default_headers,
    is_retryable_answer,
)
from wheretorun.client.errors import TransportError
from wheretorun.client.types import (
    AcceleratorFilters,
    ApiPriceFilters,
    AuditFilters,
    Body,
    CloudOfferFilters,
    EnergyPriceFilters,
    ImportFilters,
    JSONObject,
    ModelFilters,
    OverrideFilters,
    Page,
    PageParams,
    ScenarioFilters,
)

__all__ = ["WheretorunClient"]


class WheretorunClient:
    """A client of the wheretorun API. Method names are the OpenAPI operation ids.

    `retries` more attempts are made on a 5xx answer or a connection error/timeout, with
    exponential backoff (`backoff` seconds, doubling), for requests that are safe to repeat: GET,
    PUT, DELETE, POSTs that only compute, and creating POSTs (they carry an `Idempotency-Key`).
    Errors are raised as `wheretorun.client.errors.ClientError` subclasses.

    Use as a context manager, or call `close()`.
    """

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        *,
        api_key: str | None = None,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT_S,
        retries: int = 2,
        backoff: float = 0.5,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._retry = RetryPolicy(retries=retries, backoff=backoff)
        self._http = httpx.Client(
            base_url=base_url, headers=default_headers(api_key), timeout=timeout, transport=transport
        )

    def __enter__(self) -> WheretorunClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # --- sending ---------------------------------------------------------------------------------

    def _send(self, call: Call) -> httpx.Response:
        """Send `call`, retrying what is safe to retry; the response of a success, else raise."""
        last = self._retry.retries if call.retryable else 0
        for attempt in range(last + 1):
            try:
                response = self._http.send(call.request(self._http))
            except httpx.TransportError as exc:
                if attempt == last:
                    raise TransportError(f"{call.method} {call.path}: {exc!r}") from exc
            else:
                if attempt == last or not is_retryable_answer(call, response):
                    return checked(response)
            time.sleep(self._retry.delay(attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    def _json(self, call: Call) -> Any:
        return self._send(call).json()

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """Any request (an endpoint this client does not wrap yet), with the same retries and
        errors: retried when the method is idempotent or `headers` has an Idempotency-Key."""
        params = kwargs.pop("params", None) or {}
        headers = kwargs.pop("headers", None) or {}
        return self._send(Call(method.upper(), path, params=params, headers=headers, **kwargs))

    def paginate(self, list_operation: Callable[..., Page], /, **filters: Any) -> Iterator[JSONObject]:
        """Every item of a list operation, page after page:
        `for offer in client.paginate(client.list_cloud_offers, provider="aws"): ...`"""
        filters.setdefault("limit", 500)
        offset = filters.pop("offset", 0)
        while True:
            page = list_operation(**filters, offset=offset)
            yield from page["items"]
            offset += len(page["items"])
            if not page["items"] or offset >= page["total"]:
                return

    # --- catalog ---------------------------------------------------------------------------------

    def list_accelerators(self, **filters: Unpack[AcceleratorFilters]) -> Page:
        return cast(Page, self._json(calls.list_accelerators(filters)))

    def get_accelerator(self, accelerator_id: str) -> JSONObject:
        """By id or any alias (`A100-80GB`)."""
        return cast(JSONObject, self._json(calls.get_accelerator(accelerator_id)))

    def list_models(self, **filters: Unpack[ModelFilters]) -> Page:
        return cast(Page, self._json(calls.list_models(filters)))

    def get_model(self, model_id: str) -> JSONObject:
        return cast(JSONObject, self._json(calls.get_model(model_id)))

    def list_cloud_offers(self, **filters: Unpack[CloudOfferFilters]) -> Page:
        return cast(Page, self._json(calls.list_cloud_offers(filters)))

    def get_cloud_offer(self, offer_id: int) -> JSONObject:
        return cast(JSONObject, self._json(calls.get_cloud_offer(offer_id)))

    def list_api_prices(self, **filters: Unpack[ApiPriceFilters]) -> Page:
        return cast(Page, self._json(calls.list_api_prices(filters)))

    def get_api_price(self, price_id: int) -> JSONObject:
        return cast(JSONObject, self._json(calls.get_api_price(price_id)))

    def list_energy_prices(self, **filters: Unpack[EnergyPriceFilters]) -> Page:
        return cast(Page, self._json(calls.list_energy_prices(filters)))

    def get_catalog(self) -> JSONObject:
        return cast(JSONObject, self._json(calls.get_catalog()))

    def list_catalog_versions(self, **filters: Unpack[PageParams]) -> Page:
        return cast(Page, self._json(calls.list_catalog_versions(filters)))

    # --- estimates and recommendations -----------------------------------------------------------

    def estimate_inference(self, request: Body) -> JSONObject:
        return cast(JSONObject, self._json(calls.estimate_inference(request)))

    def estimate_training(self, request: Body) -> JSONObject:
        return cast(JSONObject, self._json(calls.estimate_training(request)))

    def create_recommendation(self, request: Body) -> JSONObject:
        return cast(JSONObject, self._json(calls.create_recommendation(request)))

    def list_recommendation_assumptions(self) -> dict[str, JSONObject]:
        return cast(dict[str, JSONObject], self._json(calls.list_recommendation_assumptions()))

    # --- scenarios -------------------------------------------------------------------------------

    def create_scenario(self, scenario: Body) -> JSONObject:
        """Save a scenario; the answer's `version` (1) is what `update_scenario` needs next."""
        return cast(JSONObject, self._json(calls.create_scenario(scenario)))

    def list_scenarios(self, **filters: Unpack[ScenarioFilters]) -> Page:
        return cast(Page, self._json(calls.list_scenarios(filters)))

    def get_scenario(self, scenario_id: int) -> JSONObject:
        return cast(JSONObject, self._json(calls.get_scenario(scenario_id)))

    def update_scenario(self, scenario_id: int, scenario: Body, *, if_match: int | str) -> JSONObject:
        """Save a new version. `if_match` is the `version` you read (or its ETag, `"v3"`); a stale
        one raises `ConflictError` (412)."""
        return cast(JSONObject, self._json(calls.update_scenario(scenario_id, scenario, if_match)))

    def delete_scenario(self, scenario_id: int, *, if_match: int | str) -> None:
        self._send(calls.delete_scenario(scenario_id, if_match))

    def list_scenario_versions(self, scenario_id: int) -> list[JSONObject]:
        return cast(list[JSONObject], self._json(calls.list_scenario_versions(scenario_id)))

    def get_scenario_version(self, scenario_id: int, version: int) -> JSONObject:
        return cast(JSONObject, self._json(calls.get_scenario_version(scenario_id, version)))

    def evaluate_unsaved_scenario(self, scenario: Body) -> JSONObject:
        """Cash flows, totals, NPV, and the analyses the body asks for (`monte_carlo`, ...)."""
        return cast(JSONObject, self._json(calls.evaluate_unsaved_scenario(scenario)))

    def evaluate_scenario(self, scenario_id: int, analyses: Body | None = None) -> JSONObject:
        """Evaluate a saved scenario; `analyses` may name a `version` and the analyses to run."""
        return cast(JSONObject, self._json(calls.evaluate_scenario(scenario_id, analyses)))

    def export_unsaved_scenario(self, scenario: Body, format: Literal["csv", "xlsx"] = "csv") -> bytes:
        """The monthly cash-flow table of an unsaved scenario as a CSV or XLSX file."""
        return self._send(calls.evaluate_unsaved_scenario(scenario, format)).content

    def export_scenario(
        self, scenario_id: int, format: Literal["csv", "xlsx"] = "csv", analyses: Body | None = None
    ) -> bytes:
        """The monthly cash-flow table of a saved scenario as a CSV or XLSX file."""
        return self._send(calls.evaluate_scenario(scenario_id, analyses, format)).content

    def chart_unsaved_scenario(
        self,
        chart: calls.Chart,
        scenario: Body,
        *,
        format: calls.ChartFormat = "svg",
        plan: str | None = None,
    ) -> bytes:
        """An SVG (or PNG) chart: `cost_stack`, `break_even`, `tornado` or `monte_carlo`."""
        return self._send(calls.chart_unsaved_scenario(chart, scenario, format, plan)).content

    def chart_scenario(
        self,
        scenario_id: int,
        chart: calls.Chart,
        *,
        analyses: Body | None = None,
        format: calls.ChartFormat = "svg",
        plan: str | None = None,
    ) -> bytes:
        return self._send(calls.chart_scenario(scenario_id, chart, analyses, format, plan)).content

    def compare_scenarios(
        self, *, scenario_ids: Iterable[int] = (), scenarios: Iterable[Body] = ()
    ) -> JSONObject:
        """Saved (`scenario_ids`) and unsaved scenarios side by side, deltas against the first."""
        return cast(JSONObject, self._json(calls.compare_scenarios(scenario_ids, scenarios)))

    # --- admin (API key) -------------------------------------------------------------------------

    def start_import(
        self,
        *,
        format: Literal["skypilot", "litellm", "canonical"],
        content: str | bytes | None = None,
        url: str | None = None,
        filename: str | None = None,
        provider: str | None = None,
        dry_run: bool = False,
        force: bool = False,
    ) -> JSONObject:
        """Import a price file: text `content` (sent as JSON), `bytes` (uploaded) or a `url`. The
        answer's `status` says what happened: dry_run, applied, unchanged, not_modified or held."""
        call = calls.start_import(
            format=format,
            content=content,
            url=url,
            filename=filename,
            provider=provider,
            dry_run=dry_run,
            force=force,
        )
        return cast(JSONObject, self._json(call))

    def list_imports(self, **filters: Unpack[ImportFilters]) -> Page:
        return cast(Page, self._json(calls.list_imports(filters)))

    def get_import(self, import_id: int) -> JSONObject:
        return cast(JSONObject, self._json(calls.get_import(import_id)))

    def list_overrides(self, **filters: Unpack[OverrideFilters]) -> Page:
        return cast(Page, self._json(calls.list_overrides(filters)))

    def create_override(self, override: Body) -> JSONObject:
        return cast(JSONObject, self._json(calls.create_override(override)))

    def end_override(self, override_id: int) -> JSONObject:
        return cast(JSONObject, self._json(calls.end_override(override_id)))

    def list_audit_entries(self, **filters: Unpack[AuditFilters]) -> Page:
        return cast(Page, self._json(calls.list_audit_entries(filters)))

    # --- probes ----------------------------------------------------------------------------------

    def healthz(self) -> JSONObject:
        return cast(JSONObject, self._json(calls.healthz()))

    def readyz(self) -> JSONObject:
        return cast(JSONObject, self._json(calls.readyz()))
