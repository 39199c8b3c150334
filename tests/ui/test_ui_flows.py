"""Issue 24's usability items in a real browser: a search page people can read (weak
results, scores, neighbours, paging), flows that keep your place, corrections at the
end of a chain, and the facts page's forget and remember."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import ui_browser
from playwright.sync_api import Browser, Page, expect
from ui_support import Running, running_ui

import localmem


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    yield from ui_browser.launch()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ui_browser.screenshot_folder(tmp_path_factory)


@pytest.fixture
def db(tmp_path: Path, env: dict[str, str]) -> Path:
    path = tmp_path / "memory.db"
    env["LOCALMEM_DB"] = str(path)
    with localmem.open(path) as store, store.transaction():
        store.add("Deploy with fabric scripts", workspace="api")  # 1
        store.add("Deploy with the release pipeline", workspace="api", supersedes=[1])  # 2
        store.add("Deploy with the release pipeline from main", workspace="api", supersedes=[2])
        # 4..33: thirty memories that all name the same file, so each shares an entity.
        for n in range(30):
            store.add(
                f"Step {n} of the rollout edits settings/rollout.yaml for region {n}",
                workspace="ops",
            )
    return path


@pytest.fixture
def ui(db: Path, env: dict[str, str], tmp_path: Path) -> Iterator[Running]:
    with running_ui(env, tmp_path) as running:
        yield running


@pytest.fixture
def page(browser: Browser, ui: Running) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1100, "height": 760})
    opened = context.new_page()
    ui_browser.open_view(opened, ui.url)
    expect(opened.locator("h1")).to_have_text("Overview")
    yield opened
    context.close()


def test_a_question_with_no_answer_says_so_first(page: Page, ui: Running, shots: Path) -> None:
    page.goto(ui.base + "/search?q=what+is+the+rollout+plan+for+the+new+office+printers")
    message = page.locator("p.message.no-match")
    expect(message).to_contain_text("No good match")
    # Said before any result, and the guesses wait folded below it.
    first_hit = page.locator("details.weak-guesses")
    assert message.bounding_box()["y"] < first_hit.bounding_box()["y"]  # type: ignore[index]
    expect(page.locator("article.weak-hit").first).not_to_be_visible()
    expect(page.locator("details.weak-guesses summary")).to_contain_text("weak guess")
    expect(page.locator("p.help")).to_contain_text("Weak: found only by a loose match")
    page.screenshot(path=shots / "search-no-match.png", full_page=True)
    page.click("details.weak-guesses summary")
    weak = page.locator("article.weak-hit").first
    expect(weak).to_be_visible()
    expect(weak).not_to_contain_text("score")  # a guess's score is not comparable


def test_hits_show_their_chain_not_related_noise_and_page_on(page: Page, ui: Running) -> None:
    page.goto(ui.base + "/search?q=rollout+settings+region&workspace=ops")
    hits = page.locator("section.results > article.hit")
    expect(hits).to_have_count(10)
    expect(hits.first).to_contain_text("score")
    # Every one of them shares settings/rollout.yaml: no "related" lines any more.
    expect(page.locator("ul.neighbours")).to_have_count(0)
    expect(page.locator("nav.pager")).to_contain_text("results 1–10 of 20")
    page.click("nav.pager >> text=more →")
    expect(page.locator("nav.pager")).to_contain_text("results 11–20 of 20")
    expect(page.locator("section.results article.hit").first.locator(".rank")).to_have_text("11.")
    expect(page.locator("section.results")).to_contain_text("returns its 20 best results")

    page.goto(ui.base + "/search?q=deploy+release+pipeline&workspace=api")
    superseded = page.locator("article.hit[data-id='2']")
    expect(superseded.locator("ul.neighbours")).to_contain_text("superseded by #3")


def test_forget_brings_you_back_to_the_same_listing(page: Page, ui: Running, db: Path) -> None:
    listing = ui.base + "/browse?workspace=ops&sort=oldest&page=1"
    page.goto(listing)
    page.locator("table.memories tbody tr").nth(4).locator("td.c-0 a").click()
    expect(page.locator("h1")).to_have_text("Memory #8")
    page.click("text=Forget this memory…")
    page.click("text=Yes, forget it")
    expect(page.locator(".flash")).to_contain_text("Forgot memory 8.")
    assert "workspace=ops" in page.url and "sort=oldest" in page.url and "page=1" in page.url
    expect(page.locator("select[name=workspace]")).to_have_value("ops")


def test_a_page_past_the_end_shows_the_last_page(page: Page, ui: Running) -> None:
    page.goto(ui.base + "/browse?page=999")
    expect(page.locator("p.notice")).to_contain_text("There is no page 999; this is the last one.")
    expect(page.locator("table.memories tbody tr")).to_have_count(33)
    expect(page.locator("nav.pager").first).to_contain_text("page 1 of 1")


def test_error_pages_speak_the_views_words_and_lead_back(page: Page, ui: Running) -> None:
    page.goto(ui.base + "/memory/999")
    expect(page.locator("h1")).to_have_text("Not found")
    main = page.locator("main")
    expect(main).not_to_contain_text("localmem search")
    expect(main.locator("a", has_text="Search")).to_have_attribute("href", "/search")
    page.goto(ui.base + "/memory/3/forget")  # the current end of a chain: refused
    expect(main).not_to_contain_text("--supersedes")
    expect(main.locator("a.back")).to_have_attribute("href", "/memory/3")
    page.goto(ui.base + "/browse?kind=nonsense")
    expect(page.locator("p.error")).to_contain_text("Unknown kind")
    expect(main.locator("a.back")).to_be_visible()


def test_a_superseded_memory_is_corrected_at_the_end_of_its_chain(
    page: Page, ui: Running, db: Path
) -> None:
    page.goto(ui.base + "/memory/1")
    expect(page.locator("textarea[name=content]")).to_have_count(0)
    expect(page.locator("section.curate")).to_contain_text("correct #3")
    # A correction POSTed to the old memory anyway (an old tab): refused, text kept.
    page.goto(ui.base + "/memory/3")
    csrf = page.locator("input[name=csrf]").first.get_attribute("value") or ""
    answer = page.request.post(
        ui.base + "/memory/1/correct",
        form={"csrf": csrf, "content": "Deploy with the new release train"},
        headers={"Origin": ui.base},
        max_redirects=0,
    )
    assert answer.status == 409
    assert "current end of its chain is" in answer.text()
    assert "Deploy with the new release train</textarea>" in answer.text()
    assert 'action="/memory/3/correct"' in answer.text()
    with localmem.open(db) as store:
        assert store.get(1).superseded_by == 2 and store.get(2).superseded_by == 3
        assert store.get(3).superseded_by is None and not store.is_empty()
        assert store.browse(workspace="api").total == 3  # nothing was written


def test_facts_forget_is_exact_asks_first_and_refusals_are_red(
    browser: Browser, env: dict[str, str], tmp_path: Path, db: Path
) -> None:
    facts = tmp_path / "facts"
    facts.mkdir()
    (facts / "food.md").write_text("- 2026-11-01: likes tea with milk\n- 2026-11-02: likes tea\n")
    env["LOCAL_MEMORY_DIR"] = str(facts)
    with running_ui(env, tmp_path, "--facts") as ui:
        context = browser.new_context()
        page = context.new_page()
        ui_browser.open_view(page, ui.url)
        page.goto(ui.base + "/facts/food")
        page.locator("ul.facts li", has_text=re.compile(r"2026-11-02 likes tea\s")).locator(
            "text=Forget…"
        ).click()
        expect(page.locator("blockquote.fact")).to_contain_text("likes tea")
        page.click("text=Yes, forget it")
        expect(page.locator(".flash")).to_contain_text("Removed")
        assert (facts / "food.md").read_text() == "- 2026-11-01: likes tea with milk\n"

        # A stale Forget (the line went meanwhile) is a refusal, in red, not in green.
        page.goto(ui.base + "/facts/food")
        csrf = page.locator("input[name=csrf]").first.get_attribute("value") or ""
        stale = page.request.post(
            ui.base + "/facts/forget",
            form={"csrf": csrf, "topic": "food", "line": "- 2026-11-02: likes tea"},
            headers={"Origin": ui.base},
            max_redirects=0,
        )
        assert stale.status == 303 and "refused=" in stale.headers["location"]
        page.goto(ui.base + stale.headers["location"])
        expect(page.locator("p.error")).to_contain_text("Nothing in food matches")
        expect(page.locator(".flash")).to_have_count(0)

        # A bad topic name keeps the typed fact.
        page.goto(ui.base + "/facts")
        page.fill("input[name=topic]", "Food!")
        page.fill("input[name=fact]", "dislikes coriander")
        page.click("button:text('Remember')")
        expect(page.locator("p.error")).to_be_visible()
        expect(page.locator("input[name=fact]")).to_have_value("dislikes coriander")
        expect(page.locator("input[name=topic]")).to_have_value("Food!")
        context.close()
