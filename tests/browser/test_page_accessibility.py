"""Every view, filled with an answer: each control has a label (or, for a button, its text), no id
is used twice, and the views work from the keyboard alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import Server

pytestmark = pytest.mark.browser

UNLABELLED = """() => [...document.querySelectorAll("input, select, textarea, button")]
  .filter((control) => control.type !== "hidden")
  .filter((control) => !(control.labels && control.labels.length))
  .filter((control) => !control.getAttribute("aria-label") && !control.getAttribute("aria-labelledby"))
  .filter((control) => !(control.tagName === "BUTTON" && control.textContent.trim()))
  .map((control) => control.outerHTML.slice(0, 160))"""
DUPLICATE_IDS = """() => {
  const ids = [...document.querySelectorAll("[id]")].map((element) => element.id);
  return ids.filter((id, index) => ids.indexOf(id) !== index);
}"""
PLAN = (
    "/?workload.kind=inference&workload.model=llama-3.1-8b&workload.requests_per_day=20000"
    "&workload.input_tokens=1000&workload.output_tokens=250"
)


def _check(page: Any) -> None:
    controls = page.evaluate("() => document.querySelectorAll('input, select, textarea, button').length")
    assert controls >= 5
    assert page.evaluate(UNLABELLED) == []
    assert page.evaluate(DUPLICATE_IDS) == []


def test_the_plan_view_with_its_answer(page: Any, server: Server) -> None:
    page.goto(PLAN)
    page.locator("#ranked-title").wait_for()
    _check(page)


def test_the_scenarios_view_with_an_evaluation(page: Any, server: Server) -> None:
    page.goto("/scenarios")
    page.locator(f'#scenario-items a[data-scenario="{server.scenario_id}"]').click()
    page.locator("#scenario-evaluate").click()
    page.locator("#evaluation-table").wait_for()
    _check(page)


def test_the_catalog_view_with_a_row(page: Any, server: Server) -> None:
    page.goto("/catalog?table=cloud-offers&id=1")
    page.locator(".row-card").wait_for()
    page.locator("#table-cloud-offers tbody tr").first.wait_for()
    _check(page)


def test_a_ranked_option_and_a_rejected_rule_open_from_the_keyboard(page: Any, server: Server) -> None:
    page.goto(PLAN)
    page.locator("#ranked-title").wait_for()
    first = page.locator("ol.options > li details").first
    first.locator("summary").focus()
    page.keyboard.press("Enter")
    assert first.get_attribute("open") is not None
    group = page.locator("ul.rejected > li details").first
    group.locator("summary").focus()
    page.keyboard.press("Space")
    assert group.get_attribute("open") is not None
    # The skip link is the first stop on a fresh page and leads to the content.
    page.goto("/catalog")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip-link"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
