"""Issue 24's layout and chart items in a real browser: readable result links, long text
that neither widens nor lengthens the page, a 390 px window, and charts that say what
they show (the tallest value, by size, "no data", thousands, the weekly note, the
audit's histogram and its "and N more"). The screenshots of docs/ui are taken here too."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import ui_browser
from playwright.sync_api import Browser, Page, expect
from ui_support import Running, running_ui

import localmem

WORD = "x" * 20_000
TRACE = "\n".join(f"step {n}: ran the build, cache hit ratio {n % 97}%" for n in range(2_000))


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    yield from ui_browser.launch()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ui_browser.screenshot_folder(tmp_path_factory)


def _open(browser: Browser, ui: Running, width: int = 1100) -> Page:
    page = browser.new_context(viewport={"width": width, "height": 760}).new_page()
    ui_browser.open_view(page, ui.url)
    expect(page.locator("h1")).to_have_text("Overview")
    return page


@pytest.fixture
def long_text(tmp_path: Path, env: dict[str, str]) -> Iterator[Running]:
    path = tmp_path / "memory.db"
    env["LOCALMEM_DB"] = str(path)
    with localmem.open(path) as store:
        store.add("Deploy with fabric scripts to the staging hosts", workspace="zeta")  # 1
        store.add(f"a word with no spaces: {WORD}", workspace="alpha")  # 2
        store.add(TRACE, workspace="zeta", kind="trace")  # 3
        for n in range(3):
            store.add(f"Rotate the deploy keys of service {n} every quarter", workspace="zeta")
    assert 80_000 < len(TRACE) < 100_000
    with running_ui(env, tmp_path) as running:
        yield running


def _contrast(page: Page, selector: str) -> float:
    """WCAG contrast of the element's text colour against white (the card it sits on)."""
    rgb = page.eval_on_selector(selector, "e => getComputedStyle(e).color")
    r, g, b = (int(v) / 255 for v in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3])

    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    luminance = 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)
    return 1.05 / (luminance + 0.05)


def test_a_result_can_be_opened(browser: Browser, long_text: Running) -> None:
    page = _open(browser, long_text)
    page.goto(long_text.base + "/search?q=deploy+fabric+staging")
    link = "article.hit .hit-head a"
    assert _contrast(page, link) >= 4.5  # the header rule once made it #dfe6f3 on white
    page.click(link)
    expect(page.locator("h1")).to_have_text("Memory #1")


def test_long_text_neither_widens_nor_lengthens_a_page(
    browser: Browser, long_text: Running, shots: Path
) -> None:
    page = _open(browser, long_text)
    page.goto(long_text.base + "/browse")
    assert ui_browser.page_width(page) <= 1100
    lines = (
        page.locator("tr", has_text="no spaces")
        .locator("td.c-4")
        .evaluate(
            "e => { const r = document.createRange(); r.selectNodeContents(e);"
            " return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size; }"
        )
    )
    assert lines == 1  # the dates once wrapped onto three lines
    page.screenshot(path=shots / "long-word.png", full_page=True)
    page.goto(long_text.base + "/memory/2")
    assert ui_browser.page_width(page) <= 1100

    page.goto(long_text.base + "/memory/3")  # the 88 KB trace
    height = int(page.evaluate("document.documentElement.scrollHeight"))
    assert height < 2500, height
    curate = page.locator("section.curate h2").bounding_box()
    assert curate is not None and curate["y"] < 760  # the actions are in the first screen
    expect(page.locator("pre.content")).to_contain_text("step 1999")  # all of it, scrolling
    page.screenshot(path=shots / "trace.png", full_page=True)


def test_a_390_px_window(browser: Browser, long_text: Running, shots: Path) -> None:
    page = _open(browser, long_text, width=390)
    for path in ("/", "/browse", "/search?q=deploy+keys", "/memory/1", "/memory/2", "/audit"):
        page.goto(long_text.base + path)
        assert ui_browser.page_width(page) <= 390, path
    page.goto(long_text.base + "/memory/1")
    page.screenshot(path=shots / "narrow.png", full_page=True)


def test_charts_by_size_with_room_for_the_tallest_value(
    browser: Browser, long_text: Running
) -> None:
    page = _open(browser, long_text)
    per_workspace = page.locator("svg[aria-label='memories per workspace'] text.axis")
    expect(per_workspace.first).to_have_text("zeta")  # 5 memories before alpha's 1
    for chart in ("memories added per week", "age histogram"):
        values = page.locator(f"svg[aria-label='{chart}'] g.bar text:not(.axis)")
        tops = [float(v.get_attribute("y") or 0) for v in values.all() if v.text_content()]
        assert tops and min(tops) >= 10, (chart, tops)  # inside the frame, not cut off


@pytest.fixture
def many_old(tmp_path: Path, env: dict[str, str]) -> Iterator[Running]:
    path = tmp_path / "memory.db"
    env["LOCALMEM_DB"] = str(path)
    long_ago = datetime(2024, 3, 1, tzinfo=timezone.utc)
    with localmem.open(path) as store, store.transaction():
        for n in range(1_234):
            store.add(
                f"Memory number {n} about subject {n * 7919 % 1_000_003}",
                workspace="archive",
                kind="trace" if n % 3 == 0 else "note",
                created=long_ago + timedelta(hours=n),
            )
    with running_ui(env, tmp_path) as running:
        yield running


def test_counts_the_weekly_note_and_the_audit(browser: Browser, many_old: Running) -> None:
    page = _open(browser, many_old)
    expect(page.locator(".cards")).to_contain_text("1,234")
    expect(page.locator("table.counts")).to_contain_text("1,234")
    expect(page.locator("figure", has_text="added per week")).to_contain_text(
        "None of the 1,234 memories was added in the last 12 weeks; the newest is from 2024-04-21."
    )
    page.goto(many_old.base + "/audit")
    expect(page.locator("h1")).to_have_text("Audit (1,234 memories)")
    box = page.locator("svg[aria-label='trace similarity histogram']").bounding_box()
    assert box is not None and box["width"] <= 600  # drawn at about its own size, not 2x
    more = page.locator("section", has_text="Never recalled").locator("a", has_text="more")
    expect(more).to_have_text("… and 1,214 more")
    more.click()
    expect(page.locator("nav.pager").first).to_contain_text("page 1 of 25 · 1,234 memories")
    expect(page.locator("select[name=only]")).to_have_value("never_recalled")
    page.click("nav.pager >> nth=0 >> text=next →")
    expect(page.locator("nav.pager").first).to_contain_text("page 2 of 25")


def test_an_empty_store_says_there_is_nothing_yet(
    browser: Browser, tmp_path: Path, env: dict[str, str], shots: Path
) -> None:
    path = tmp_path / "memory.db"
    env["LOCALMEM_DB"] = str(path)
    with localmem.open(path):
        pass
    with running_ui(env, tmp_path) as ui:
        page = _open(browser, ui)
        expect(page.locator(".charts p.no-data")).to_have_count(5)
        expect(page.locator(".charts svg.chart")).to_have_count(0)
        page.screenshot(path=shots / "empty.png", full_page=True)
        page.goto(ui.base + "/search?q=anything")
        expect(page.locator("p.message")).to_contain_text("Nothing is stored yet")
