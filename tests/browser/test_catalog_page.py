"""The "Catalog" view in Chromium: tables with filters and sorting from the API's own parameters,
`catalog_version`, each row's source, and one row opened from a link."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Server, shoot

pytestmark = pytest.mark.browser


def _wait_rows(page: Any, table: str) -> Any:
    page.locator(f"#table-{table} tbody tr").first.wait_for()
    return page.locator(f"#table-{table} tbody tr")


def test_cloud_offers_filtered_and_sorted(page: Any, server: Server, screenshots: Path) -> None:
    page.goto("/catalog?table=cloud-offers")
    _wait_rows(page, "cloud-offers")
    page.locator("#cat-provider").fill("aws")
    page.locator("#cat-accelerator").fill("H100")
    page.locator("#cat-sort").select_option("on_demand_usd_per_accelerator_hour")
    page.locator("#catalog-form button[type=submit]").click()
    page.wait_for_url("**provider=aws**")
    expected = httpx.get(
        f"{server.base_url}/v1/cloud-offers",
        params={"provider": "aws", "accelerator": "H100", "sort": "on_demand_usd_per_accelerator_hour"},
        timeout=30,
    ).json()
    assert len(expected["items"]) >= 1
    rows = page.locator("#table-cloud-offers tbody tr")
    # The unfiltered rows stay on screen until the filtered answer arrives: wait for it to replace them.
    expect(rows).to_have_count(len(expected["items"]))
    shown_ids = [int(row.locator("th").inner_text()) for row in rows.all()]
    assert shown_ids == [offer["id"] for offer in expected["items"]]
    prices = [Decimal(o["on_demand_usd_per_accelerator_hour"]) for o in expected["items"]]
    assert prices == sorted(prices)
    # Every row names its source.
    for row in rows.all():
        assert row.locator("td").last.inner_text().strip() not in ("", "no source")
    shoot(page, screenshots, "catalog-cloud-offers")


def test_a_price_link_opens_its_row_with_the_source(page: Any, server: Server, screenshots: Path) -> None:
    price = httpx.get(f"{server.base_url}/v1/api-prices", params={"model": "llama-3.1-8b"}, timeout=30).json()
    row = price["items"][0]
    page.goto(f"/catalog?table=api-prices&id={row['id']}")
    card = page.locator(".row-card")
    card.wait_for()
    assert row["source"] in card.locator(".source-facts").inner_text()
    assert row["model_id"] in card.inner_text()
    assert page.locator('[role="tab"][aria-selected="true"]').inner_text() == "API prices"
    shoot(page, screenshots, "catalog-api-price-row")


def test_accelerators_as_of_a_catalog_version_and_tabs_by_keyboard(page: Any, server: Server) -> None:
    page.goto("/catalog")
    _wait_rows(page, "accelerators")
    page.locator("#cat-catalog_version").select_option("1")
    page.locator("#cat-kind").select_option("datacenter")
    page.locator("#catalog-form button[type=submit]").click()
    page.wait_for_url("**catalog_version=1**")
    page.locator("#catalog-status", has_text="catalog version 1").wait_for()
    kinds = {row.locator("td").nth(2).inner_text() for row in _wait_rows(page, "accelerators").all()}
    assert kinds == {"datacenter"}
    # Arrow keys move between the tables.
    page.locator("#tab-accelerators").focus()
    page.keyboard.press("ArrowRight")
    assert page.locator("#tab-cloud-offers").get_attribute("aria-selected") == "true"
    _wait_rows(page, "cloud-offers")


def test_a_bad_filter_shows_next_to_its_field(page: Any, server: Server) -> None:
    page.goto("/catalog?table=accelerators")
    _wait_rows(page, "accelerators")
    page.locator("#cat-min_memory_gb").fill("-5")
    page.locator("#catalog-form button[type=submit]").click()
    message = page.locator("#cat-min_memory_gb ~ .field-error")
    message.wait_for()
    answer = httpx.get(f"{server.base_url}/v1/accelerators", params={"min_memory_gb": -5}, timeout=30)
    assert message.inner_text() == answer.json()["errors"][0]["reason"]


def test_the_page_on_postgresql(browser: Any, postgres_server: Server) -> None:
    """The same page over PostgreSQL: a plan is ranked and a catalog table lists its rows."""
    context = browser.new_context(base_url=postgres_server.base_url)
    try:
        page = context.new_page()
        page.goto(
            "/?workload.kind=inference&workload.model=llama-3.1-8b&workload.requests_per_day=20000"
            "&workload.input_tokens=1000&workload.output_tokens=250"
        )
        page.locator("#ranked-title").wait_for()
        assert page.locator("ol.options > li").count() >= 1
        page.goto("/catalog?table=api-prices&provider=deepinfra")
        rows = _wait_rows(page, "api-prices")
        assert {row.locator("td").first.inner_text() for row in rows.all()} == {"deepinfra"}
    finally:
        context.close()
