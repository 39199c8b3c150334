"""The web view's security gaps of issue 24, over plain HTTP against the real server: the
start token is spent once and the cookie holds another secret, no open redirect, other
sites' subresource requests refused, GETs change nothing, the browser never gets the
token on its command line, and a malformed or oversized form is a 400 with a sentence."""

from __future__ import annotations

import os
import re
import sqlite3
import stat
import subprocess
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
import ui_browser
from conftest import script
from playwright.sync_api import Browser, expect
from ui_support import URL_LINE, Answer, Running, request, running_ui

import localmem


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    yield from ui_browser.launch()


@pytest.fixture
def db(tmp_path: Path, env: dict[str, str]) -> Path:
    path = tmp_path / "memory.db"
    env["LOCALMEM_DB"] = str(path)
    with localmem.open(path) as store:
        store.add("Deploy with fabric scripts", workspace="api", keywords=["deploy"])
        store.add("Deploy with the release pipeline", workspace="api", supersedes=[1])
        store.add("The staging database lives on port 5433 behind the vpn", workspace="api")
        store.add("The staging database lives on port 5433 behind the vpn gateway", workspace="api")
    return path


def _session(ui: Running) -> str:
    first = request(ui.url)
    assert first.status == 200, first.body
    return first.headers["set-cookie"].split(";", 1)[0]


def _csrf(ui: Running, cookie: str) -> str:
    found = re.search(
        r'name="csrf" value="([^"]+)"',
        request(ui.base + "/memory/3", headers={"Cookie": cookie}).body,
    )
    assert found is not None
    return found.group(1)


def test_the_token_opens_one_session_and_the_cookie_is_not_the_token(
    db: Path, env: dict[str, str], tmp_path: Path
) -> None:
    with running_ui(env, tmp_path) as ui:
        port = ui.base.rsplit(":", 1)[1]
        cookie = _session(ui)
        name, value = cookie.split("=", 1)
        assert name == f"localmem_ui_{port}" and value != ui.token and ui.token not in value
        assert request(ui.base + "/", headers={"Cookie": cookie}).status == 200
        # What another server on 127.0.0.1 would be sent cannot be turned into the token,
        # and the token itself cannot be used twice.
        again = request(ui.url)
        assert again.status == 401 and "already used" in again.body
        forged = request(ui.base + "/", headers={"Cookie": f"{name}={ui.token}"})
        assert forged.status == 401
        # With a session, the printed address only drops its token.
        kept = request(ui.url, headers={"Cookie": cookie})
        assert kept.status == 303 and kept.headers["location"] == "/"
        assert request(ui.url, method="HEAD").status == 401  # a HEAD never spends it
    with running_ui(env, tmp_path) as second:  # a new start: a new token and session
        assert second.token != ui.token
        assert request(second.base + "/", headers={"Cookie": cookie}).status == 401
        assert _session(second) != cookie


def test_no_open_redirect(db: Path, env: dict[str, str], tmp_path: Path) -> None:
    with running_ui(env, tmp_path) as ui:
        first = request(f"{ui.base}//evil.example/?token={ui.token}")
        refresh = re.search(r'content="0; url=([^"]*)"', first.body)
        assert refresh is not None and refresh.group(1) == "/evil.example/", first.body
        cookie = first.headers["set-cookie"].split(";", 1)[0]
        for path in ("//evil.example/", "/\\evil.example/", "///evil.example/"):
            again = request(f"{ui.base}{path}?token={ui.token}", headers={"Cookie": cookie})
            assert again.status == 303, path
            # One leading slash only (urllib sends the backslash as %5C, kept as text).
            assert again.headers["location"] in ("/evil.example/", "/%5Cevil.example/")


def _with(cookie: str, **fetch: str) -> dict[str, str]:
    return {"Cookie": cookie, **{f"Sec-Fetch-{k.title()}": v for k, v in fetch.items()}}


def test_another_sites_subresource_is_refused(
    db: Path, env: dict[str, str], tmp_path: Path
) -> None:
    with running_ui(env, tmp_path) as ui:
        cookie = _session(ui)
        url = ui.base + "/search?q=deploy"
        # An <img> on a page of another 127.0.0.1 port: same-site, and the Strict cookie
        # goes along. Refused before anything runs, as from any other site.
        for site in ("same-site", "cross-site"):
            for mode, dest in (("no-cors", "image"), ("cors", "empty"), ("navigate", "iframe")):
                answer = request(url, headers=_with(cookie, site=site, mode=mode, dest=dest))
                assert answer.status == 403 and "Another site's page" in answer.body
        # A link followed from elsewhere, and the view's own requests, still work.
        link = _with(cookie, site="same-site", mode="navigate", dest="document")
        assert request(url, headers=link).status == 200
        own = _with(cookie, site="same-origin", mode="no-cors", dest="style")
        assert request(ui.base + "/static/style.css", headers=own).status == 200
        typed = _with(cookie, site="none", mode="navigate", dest="document")
        assert request(url, headers=typed).status == 200


def _everything(db: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(db)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return [
            (table, *row)
            for table in sorted(tables)
            for row in sorted(conn.execute(f"SELECT * FROM {table}").fetchall(), key=repr)
        ]
    finally:
        conn.close()


def test_gets_change_nothing(db: Path, env: dict[str, str], tmp_path: Path) -> None:
    before = _everything(db)
    with running_ui(env, tmp_path) as ui:
        cookie = _session(ui)
        for path in (
            "/",
            "/browse?sort=last_recalled",
            "/search?q=deploy+fabric",
            "/search?q=staging+database&page=2",
            "/search?q=" + urllib.parse.quote("x " * 6000),
            "/memory/2",
            "/memory/1/forget",
            "/duplicates",
            "/duplicates/merge?keep=3&drop=4",
            "/audit",
            "/export",
            "/export/download",
        ):
            answer = request(ui.base + path, headers={"Cookie": cookie})
            assert answer.status == 200, (path, answer.body[:300])
    assert _everything(db) == before  # not one recall counted, not one row touched


def _watch_launch(env: dict[str, str], tmp_path: Path) -> tuple[subprocess.Popen[str], str, str]:
    """Start `localmem ui` with a BROWSER that writes down its command line and opens nothing."""
    argv_log = tmp_path / "browser-argv"
    fake = tmp_path / "fake-browser"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {argv_log}\n')
    fake.chmod(0o755)
    process = subprocess.Popen(
        [script("localmem"), "ui", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**env, "BROWSER": str(fake)},
        cwd=tmp_path,
    )
    assert process.stdout is not None
    found = URL_LINE.search(process.stdout.readline())
    assert found is not None
    deadline = time.monotonic() + 10
    while not argv_log.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return process, found.group(2), argv_log.read_text()


def test_the_browser_never_gets_the_token_on_its_command_line(
    db: Path,
    env: dict[str, str],
    tmp_path: Path,
    browser: Browser,
) -> None:
    process, token, argv = _watch_launch(env, tmp_path)
    try:
        assert token not in argv  # /proc/PID/cmdline is readable by every local user
        launch = Path(urllib.parse.unquote(urllib.parse.urlsplit(argv.strip()).path))
        assert argv.startswith("file://") and launch.is_file()
        assert stat.S_IMODE(launch.stat().st_mode) == 0o600
        assert stat.S_IMODE(launch.parent.stat().st_mode) == 0o700
        assert f"token={token}" in launch.read_text()
        # The file, opened in a real browser, lands on the view with a session...
        context = browser.new_context()
        page = context.new_page()
        page.goto(launch.as_uri())
        expect(page.locator("h1")).to_have_text("Overview")
        assert "token=" not in page.url
        context.close()
        # ...and is gone as soon as its token is spent.
        assert not launch.exists() and not launch.parent.exists()
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_launch_file_goes_when_the_view_stops(
    db: Path, env: dict[str, str], tmp_path: Path
) -> None:
    process, _token, argv = _watch_launch(env, tmp_path)
    launch = Path(urllib.parse.unquote(urllib.parse.urlsplit(argv.strip()).path))
    assert launch.exists()
    process.send_signal(2)  # Ctrl-C
    process.wait(timeout=10)
    assert not launch.exists()


def _post(ui: Running, cookie: str, path: str, body: bytes, kind: str, **extra: str) -> Answer:
    headers = {"Cookie": cookie, "Origin": ui.base, "Content-Type": kind, **extra}
    return request(ui.base + path, method="POST", data=body, headers=headers)


def _sentence(answer: Answer) -> str:
    assert answer.status == 400, (answer.status, answer.body[:400])
    assert "Traceback" not in answer.body and "Something went wrong" not in answer.body
    found = re.search(r'<p class="error">([^<]+)</p>', answer.body)
    assert found is not None, answer.body[:400]
    return found.group(1)


FORM = "application/x-www-form-urlencoded"


def test_malformed_and_oversized_forms_are_a_400_with_a_sentence(
    db: Path, env: dict[str, str], tmp_path: Path
) -> None:
    with running_ui(env, tmp_path) as ui:
        cookie = _session(ui)
        csrf = _csrf(ui, cookie)
        no_boundary = _post(ui, cookie, "/memory/3/correct", b"csrf=x", "multipart/form-data")
        assert "could not be read" in _sentence(no_boundary)
        many = "&".join([f"csrf={csrf}"] + [f"f{i}=x" for i in range(1001)]).encode()
        assert "more than 50 fields" in _sentence(
            _post(ui, cookie, "/memory/3/keywords", many, FORM)
        )
        bad_length = _post(ui, cookie, "/memory/3/keywords", b"x", FORM, **{"Content-Length": "x"})
        assert bad_length.status == 400
        huge = urllib.parse.urlencode({"csrf": csrf, "content": "a" * (5 * 1024 * 1024)}).encode()
        assert "over 4 MiB" in _sentence(_post(ui, cookie, "/memory/3/correct", huge, FORM))

        # A multipart field over Starlette's own 1 MiB: our sentence, from the write path.
        boundary = "localmemtest"
        parts = [("csrf", csrf), ("content", "b" * (1024 * 1024 + 10))]
        body = (
            "".join(
                f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'
                for k, v in parts
            )
            + f"--{boundary}--\r\n"
        )
        multipart = f"multipart/form-data; boundary={boundary}"
        over = _post(ui, cookie, "/memory/3/correct", body.encode(), multipart)
        assert "1 MiB" in _sentence(over)

        # 656 KB of Vietnamese, which `localmem add` accepts: saved as a correction.
        text = ("Triển khai bằng pipeline phát hành, không dùng fabric nữa. " * 10_000)[:560_000]
        assert 650_000 < len(text.encode()) < 1024 * 1024
        form = urllib.parse.urlencode({"csrf": csrf, "content": text}).encode()
        saved = _post(ui, cookie, "/memory/3/correct", form, FORM)
        assert saved.status == 303, saved.body[:300]
    with localmem.open(db) as store:
        assert store.get(5).content == text.strip() and store.get(3).superseded_by == 5
    assert os.path.exists(db)
