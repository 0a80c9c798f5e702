"""The "Compare scenarios" view in Chromium: open a saved scenario and its versions, evaluate it with
Monte Carlo, see the API's charts, download the cash-flow table, save a scenario with an API key."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser.conftest import Server, shoot

pytestmark = pytest.mark.browser


def _open_the_example(page: Any, server: Server) -> None:
    page.goto("/scenarios")
    page.locator(f'#scenario-items a[data-scenario="{server.scenario_id}"]').click()
    page.locator("#scenario-analyses").wait_for()


def test_evaluate_a_saved_scenario_with_monte_carlo(page: Any, server: Server, screenshots: Path) -> None:
    _open_the_example(page, server)
    assert page.url.endswith(f"/scenarios?id={server.scenario_id}")
    scenario_id = server.scenario_id
    versions = page.locator("#scenario-version option")
    assert versions.count() == 2
    assert "faster growth" in versions.nth(1).inner_text()
    page.locator("#scenario-evaluate").click()
    table = page.locator("#evaluation-table")
    table.wait_for()
    # The figures are the API's: the same request answered by the API directly.
    expected = httpx.post(
        f"{server.base_url}/v1/scenarios/{scenario_id}/evaluate",
        json={
            "version": 2,
            "monte_carlo": {
                "samples": 2000,
                "seed": 7,
                "metric": "total_usd",
                "distributions": [
                    {"input": "traffic", "kind": "lognormal", "low": 0.7, "high": 1.5},
                    {"input": "price", "kind": "triangular", "low": 0.85, "high": 1.2, "mode": 1},
                ],
            },
            "sensitivity": {},
            "break_even": {"plan_a": "hosted", "plan_b": "owned", "variable": "volume"},
        },
        timeout=60,
    ).json()
    rows = table.locator("tbody tr")
    assert rows.count() == len(expected["plans"]) == 2
    for index, plan in enumerate(expected["plans"]):
        text = rows.nth(index).inner_text()
        assert plan["name"] in text
        monte_carlo = next(p for p in expected["monte_carlo"]["plans"] if p["name"] == plan["name"])
        for figure in (plan["total_usd"], monte_carlo["p10_usd"], monte_carlo["p90_usd"]):
            assert f"${float(figure):,.2f}" in text
    # The API's four charts, drawn (an <img> of its SVG that the browser decoded).
    for chart in ("cost_stack", "break_even", "tornado", "monte_carlo"):
        image = page.locator(f'figure[data-chart="{chart}"] img')
        image.wait_for()
        assert image.evaluate("img => img.complete && img.naturalWidth") > 100
    shoot(page, screenshots, "scenarios")
    # The cash-flow table as CSV: its header and one row per plan and month.
    with page.expect_download() as download_info:
        page.locator("#download-csv").click()
    download = download_info.value
    assert download.suggested_filename == f"scenario-{scenario_id}-v2.csv"
    rows_read = list(csv.reader(io.StringIO(Path(download.path()).read_text())))
    assert rows_read[0][:4] == ["plan", "month", "tokens", "capex_usd"]
    horizon = expected["assumptions"]["horizon_months"]
    assert len(rows_read) - 1 == horizon * 2
    with page.expect_download() as xlsx_info:
        page.locator("#download-xlsx").click()
    assert Path(xlsx_info.value.path()).read_bytes()[:2] == b"PK"  # a zip: an XLSX workbook


def test_an_older_version_is_evaluated_as_it_was(page: Any, server: Server) -> None:
    _open_the_example(page, server)
    page.locator("#scenario-version").select_option("1")
    page.locator("#scenario-analyses").wait_for()
    assert "version 1" in (page.locator("#scenario-body-hint").text_content() or "")
    page.locator("#scenario-evaluate").click()
    page.locator("#evaluation-title").wait_for()
    assert "version 1" in page.locator("#evaluation-title").inner_text()


def test_a_bad_analysis_input_shows_next_to_its_field(page: Any, server: Server) -> None:
    _open_the_example(page, server)
    page.locator("#mc-samples").fill("0")
    page.locator("#scenario-evaluate").click()
    message = page.locator("#mc-samples ~ .field-error")
    message.wait_for()
    answer = httpx.post(
        f"{server.base_url}/v1/scenarios/{server.scenario_id}/evaluate",
        json={
            "monte_carlo": {
                "samples": 0,
                "distributions": [{"input": "traffic", "kind": "uniform", "low": 1, "high": 2}],
            }
        },
        timeout=60,
    )
    reasons = {error["field"]: error["reason"] for error in answer.json()["errors"]}
    assert message.inner_text() == reasons["body.monte_carlo.samples"]
    assert page.locator("#mc-samples").get_attribute("aria-invalid") == "true"


def test_saving_needs_the_key_and_works_with_it(page: Any, server: Server) -> None:
    page.goto("/scenarios")
    page.locator("#scenario-items a").first.wait_for()
    before = page.locator("#scenario-items a").count()
    page.locator("#api-key-panel > summary").click()
    page.locator("#api-key").fill(server.api_key)
    page.locator("#api-key-form button[type=submit]").click()
    assert "saved" in page.locator("#api-key-state").inner_text()
    page.locator("#scenario-new").click()
    page.locator("#scenario-analyses").wait_for()
    assert page.locator("#scenario-items a").count() == before + 1
    # The key was sent: the scenario exists on the server.
    scenario_id = int(page.url.rsplit("=", 1)[1])
    assert httpx.get(f"{server.base_url}/v1/scenarios/{scenario_id}", timeout=30).status_code == 200
    # A new version from the page: If-Match carries the version edited.
    page.locator("#scenario-edit").evaluate("form => form.closest('details').open = true")
    page.locator("#scenario-note").fill("renamed")
    body = page.locator("#scenario-body")
    body.fill(body.input_value().replace('"name": "70B serving"', '"name": "70B serving, renamed"', 1))
    page.locator("#scenario-edit button[type=submit]").click()
    page.locator("#scenario-title", has_text="renamed").wait_for()
    assert page.locator("#scenario-version option").count() == 2


def test_scenarios_side_by_side(page: Any, server: Server) -> None:
    example = httpx.get(f"{server.base_url}/openapi.json", timeout=30).json()["components"]["schemas"]
    second = {**example["ScenarioCreate"]["examples"][0], "name": "70B serving, slower growth"}
    second["traffic"] = {**second["traffic"], "growth_per_month": 0.02}
    headers = {"Authorization": f"Bearer {server.api_key}", "Idempotency-Key": "side-by-side"}
    assert httpx.post(f"{server.base_url}/v1/scenarios", json=second, headers=headers, timeout=60).is_success
    page.goto("/scenarios")
    boxes = page.locator("#scenario-compare-choices input")
    boxes.first.wait_for()
    boxes.first.check()
    page.locator("#scenario-compare button[type=submit]").click()
    # One scenario is not a comparison: the page says so next to the choices.
    assert "two or more" in page.locator("#scenario-compare .field-error").inner_text()
    boxes.nth(1).check()
    ids = [int(box.get_attribute("value") or 0) for box in boxes.all()[:2]]
    page.locator("#scenario-compare button[type=submit]").click()
    table = page.locator("table.comparison").first
    table.wait_for()
    compared = httpx.post(f"{server.base_url}/v1/scenarios/compare", json={"scenario_ids": ids}, timeout=60)
    expected = compared.json()
    assert [cell.inner_text() for cell in table.locator("thead th").all()[1:]] == expected["labels"]
    total = next(row for row in expected["summary"] if row["key"] == "total_usd")
    cells = table.locator("tbody tr").first.locator("td")
    for index, value in enumerate(total["usd"]):
        assert cells.nth(index).inner_text().startswith(f"${float(value):,.2f}")
