"""Finding and comparing turns in a real browser: search, the latency chart, the difference.

The same server, turns and Chromium as :mod:`tests.ui.test_browser` (its
fixtures, in a server of this module's own).
"""

from __future__ import annotations

import pytest

from tests.ui.test_browser import (
    NARROW,
    WIDE,
    base,
    context,
    page,
    shoot,
    sign_in,
    turns,
    turns_db,
)
from tests.ui.turns import Turns

from playwright.sync_api import Page, expect  # isort: skip  (after the browser check)

pytestmark = pytest.mark.slow
__all__ = ["base", "context", "page", "turns", "turns_db"]


def search(page: Page, words: str) -> None:
    """Type ``words`` in the search box and filter, by keyboard."""
    page.get_by_label("Words said").fill(words)
    with page.expect_navigation():
        page.keyboard.press("Enter")


def test_a_word_of_an_input_finds_its_turn_and_no_other(
    page: Page, base: str, turns: Turns
) -> None:
    """Searching "payments" lists the one turn that said it; a word nobody said lists none."""
    sign_in(page, base)
    search(page, "Payments")
    rows = page.locator("table.turns tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(turns.launch[1])
    expect(page.get_by_label("Words said")).to_have_value("Payments")
    expect(page.locator("p.searched")).to_contain_text("Payments")
    search(page, "launch")
    expect(rows).to_have_count(2)
    listed = {rows.nth(i).locator("td").last.inner_text() for i in range(2)}
    assert listed == {turns.launch[0], turns.launch[2]}
    search(page, "secret")
    expect(page.locator("main")).to_contain_text("No turns match.")
    expect(page.locator("main")).not_to_contain_text("Orion")


def test_the_latency_chart_renders_and_reads_at_390_pixels(
    page: Page, base: str, turns: Turns
) -> None:
    """The chart draws a mark per listed turn (a triangle for the degraded one), legible narrow."""
    sign_in(page, base)
    chart = page.locator("svg.chart")
    expect(chart).to_be_visible()
    marks = chart.locator("g.mark")
    expect(marks).to_have_count(len(turns.launch) + 2)
    degraded = chart.locator('g.mark[data-status="degraded"]')
    expect(degraded.locator("polygon")).to_have_count(1)
    expect(degraded.locator("title")).to_contain_text(turns.degraded)
    expect(chart.locator("desc")).to_contain_text("turns from")
    page.set_viewport_size(NARROW)
    box = chart.bounding_box()
    assert box is not None and box["width"] <= NARROW["width"]
    label = chart.locator("text.tick").first.bounding_box()
    assert label is not None and label["height"] >= 9, label
    page.set_viewport_size(WIDE)
    shoot(page, "chart", narrow_at="svg.chart")


def test_compare_marks_the_removed_and_added_text(page: Page, base: str, turns: Turns) -> None:
    """Two turns' inputs side by side: A's words struck, B's underlined, markup shown as text."""
    sign_in(page, base)
    page.goto(f"{base}/ui/compare?a={turns.launch[0]}&b={turns.launch[1]}")
    said = page.locator("table.said-diff")
    expect(said.locator("td.side-a del.removed").first).to_contain_text("Can we still make")
    expect(said.locator("td.side-b ins.added").nth(1)).to_contain_text("<b>payments</b>")
    expect(said.locator("td.side-a ins")).to_have_count(0)
    expect(said.locator("td.side-b del")).to_have_count(0)
    sent = page.locator("table.sent-diff")
    expect(sent.locator("ins.added").first).to_be_visible()
    expect(page.locator("table.fragments-diff tbody tr").first).to_be_visible()
    shoot(page, "compare", narrow_at="table.said-diff")
