"""Undoing a merge of near duplicates in the web view (issue 24, item 5): over plain HTTP
against the real server (the Undo is a POST with the CSRF field, a GET changes nothing,
a refusal is one sentence), and in a real browser (merge, then Undo, and the pair is
back in the queue)."""

from __future__ import annotations

import re
import sqlite3
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
import ui_browser
from playwright.sync_api import Browser, Page, expect
from ui_support import Running, request, running_ui

import localmem
from localmem.memory.maintenance import doctor

KEEP, DROP = 2, 3


@pytest.fixture
def db(tmp_path: Path, env: dict[str, str]) -> Path:
    path = tmp_path / "memory.db"
    env["LOCALMEM_DB"] = str(path)
    with localmem.open(path) as store:
        store.add("Deploy with fabric scripts", workspace="api")
        store.add("The staging database lives on port 5433 behind the vpn", workspace="api")
        store.add(
            "The staging database lives on port 5433 behind the vpn gateway",
            workspace="api",
            kind="lesson",
            keywords=["postgres"],
        )
    return path


def _rows(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row a merge touches. Not the stamp of the credential rules that last read a
    row: an undo's rows were read (and masked) by the server's rules, which may be newer
    than those of the write (decision 182)."""
    conn = sqlite3.connect(db)
    try:
        columns = [r[1] for r in conn.execute("PRAGMA table_info(memories)")]
        shown = ", ".join(c for c in columns if c != "checked_with")
        return {
            table: sorted(
                conn.execute(
                    f"SELECT {shown if table == 'memories' else '*'} FROM {table}"
                ).fetchall(),
                key=repr,
            )
            for table in ("memories", "near_duplicates", "term_df", "memory_entities")
        }
    finally:
        conn.close()


def _index_agrees(db: Path) -> None:
    report = doctor.examine(str(db), str(db.parent / "facts"))
    index = next(c for c in report.checks if c.name == "index")
    assert index.status == "ok", index.message


def _session(ui: Running) -> tuple[str, str]:
    first = request(ui.url)
    cookie = first.headers["set-cookie"].split(";", 1)[0]
    page = request(ui.base + "/duplicates", headers={"Cookie": cookie})
    found = re.search(r'name="csrf" value="([^"]+)"', page.body)
    assert found is not None
    return cookie, found.group(1)


def _post(ui: Running, cookie: str, path: str, **fields: object) -> tuple[int, str, str]:
    answer = request(
        ui.base + path,
        method="POST",
        headers={
            "Cookie": cookie,
            "Origin": ui.base,
            "Content-Type": "application/x-www-form-urlencoded",
        },
        data=urllib.parse.urlencode(fields).encode(),
    )
    return answer.status, answer.headers.get("location", ""), answer.body


def test_undo_over_http(db: Path, env: dict[str, str], tmp_path: Path) -> None:
    before = _rows(db)
    with running_ui(env, tmp_path) as ui:
        cookie, csrf = _session(ui)
        assert (
            "Recent merges" not in request(ui.base + "/duplicates", headers={"Cookie": cookie}).body
        )
        status, location, _ = _post(
            ui, cookie, "/duplicates/merge", csrf=csrf, keep=KEEP, drop=DROP, text="drop"
        )
        assert status == 303 and "Undo" in urllib.parse.unquote_plus(location)
        merged = _rows(db)
        assert merged != before

        # The queue lists the merge with its Undo form; looking changes nothing.
        listing = request(ui.base + "/duplicates", headers={"Cookie": cookie}).body
        assert "Recent merges" in listing
        assert re.search(
            r'<form method="post" action="/duplicates/undo"[^>]*>'
            r'<input type="hidden" name="csrf" value="[^"]+"><input type="hidden" name="merge"'
            r' value="1">',
            listing,
        ), listing
        assert request(ui.base + "/duplicates/undo", headers={"Cookie": cookie}).status == 405
        assert _rows(db) == merged

        # Without the CSRF field, or from another origin: refused, nothing undone.
        status, _, _ = _post(ui, cookie, "/duplicates/undo", merge=1)
        assert status == 403
        assert _rows(db) == merged

        status, location, _ = _post(ui, cookie, "/duplicates/undo", csrf=csrf, merge=1)
        assert status == 303
        assert "Undid the merge of memory 3 into memory 2" in urllib.parse.unquote_plus(location)
        assert _rows(db) == before  # both memories, the queue, the index and the entities
        _index_agrees(db)
        page = request(ui.base + "/duplicates", headers={"Cookie": cookie}).body
        assert 'data-pair="2-3"' in page and "Recent merges" not in page

        status, _, body = _post(ui, cookie, "/duplicates/undo", csrf=csrf, merge=1)
        assert status == 409 and "was already undone" in body
        assert 'href="/duplicates"' in body or "← Back" in body

        # A merge whose survivor changed since: refused with the sentence, nothing changes.
        _post(ui, cookie, "/duplicates/merge", csrf=csrf, keep=KEEP, drop=DROP, text="keep")
        _post(ui, cookie, f"/memory/{KEEP}/keywords", csrf=csrf, keywords="vpn, staging")
        changed = _rows(db)
        listing = request(ui.base + "/duplicates", headers={"Cookie": cookie}).body
        assert "has changed since memory 3 was merged into it (its keywords" in listing
        assert 'action="/duplicates/undo"' not in listing  # no button for what would fail
        status, _, body = _post(ui, cookie, "/duplicates/undo", csrf=csrf, merge=2)
        assert status == 409 and "undoing the merge would lose that change" in body
        assert _rows(db) == changed


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    yield from ui_browser.launch()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ui_browser.screenshot_folder(tmp_path_factory)


@pytest.fixture
def page(browser: Browser, db: Path, env: dict[str, str], tmp_path: Path) -> Iterator[Page]:
    with running_ui(env, tmp_path) as ui:
        context = browser.new_context(viewport={"width": 1100, "height": 760})
        opened = context.new_page()
        ui_browser.open_view(opened, ui.url)
        yield opened
        context.close()


def test_merge_then_undo_in_a_browser(page: Page, db: Path, shots: Path) -> None:
    before = _rows(db)
    page.click("header nav >> text=Duplicates")
    expect(page.locator("article.pair")).to_have_count(1)
    page.click("text=Merge…")
    expect(page.locator("p.notice")).to_contain_text("Undo")
    page.click("text=Merge, keep B's text")
    expect(page.locator(".flash")).to_contain_text("Merged memory 3 into memory 2")
    expect(page.locator("article.pair")).to_have_count(0)
    merge = page.locator("section.merges li[data-merge='1']")
    expect(merge).to_contain_text("#3 merged into #2")
    expect(merge).to_contain_text("vpn gateway")
    page.screenshot(path=shots / "undo.png", full_page=True)
    merge.locator("button", has_text="Undo").click()
    expect(page.locator(".flash")).to_contain_text("Undid the merge of memory 3 into memory 2")
    expect(page.locator("article.pair[data-pair='2-3']")).to_have_count(1)
    expect(page.locator("section.merges")).to_have_count(0)
    assert _rows(db) == before
    _index_agrees(db)
    page.goto(page.url.split("/duplicates")[0] + "/memory/3")
    expect(page.locator("pre.content")).to_contain_text("vpn gateway")
    expect(page.locator("main")).to_contain_text("lesson")
