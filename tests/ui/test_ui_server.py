"""`localmem ui` over plain HTTP against the real server: the guard (token, Host,
Origin, CSRF, headers, no CORS), the one-sentence failures at start, the facts
boundary, and that nothing of the UI is loaded by the cheap commands."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
from cli_support import modules_after
from conftest import script
from ui_support import URL_LINE, Running, request, running_ui

import localmem


@pytest.fixture
def db(tmp_path: Path, env: dict[str, str]) -> Path:
    path = tmp_path / "memory.db"
    env["LOCALMEM_DB"] = str(path)
    with localmem.open(path) as store:
        store.add("Deploy with fabric scripts", workspace="api")
    return path


def _cookie(ui: Running) -> str:
    first = request(ui.url)
    # A page that moves on by itself (a Strict cookie would not follow a redirect that
    # began on another site), to the same page without the token.
    assert first.status == 200 and 'http-equiv="refresh" content="0; url=/"' in first.body
    set_cookie = first.headers["set-cookie"]
    assert "HttpOnly" in set_cookie and "SameSite=strict" in set_cookie.replace("Strict", "strict")
    assert ui.token not in set_cookie  # the session is not the token (issue 24)
    return set_cookie.split(";", 1)[0]


def _csrf(ui: Running, cookie: str) -> str:
    page = request(ui.base + "/memory/1", headers={"Cookie": cookie})
    found = re.search(r'name="csrf" value="([^"]+)"', page.body)
    assert found is not None
    return found.group(1)


def test_token_host_origin_csrf_and_headers(db: Path, env: dict[str, str], tmp_path: Path) -> None:
    with running_ui(env, tmp_path) as ui:
        assert request(ui.base + "/").status == 401
        assert request(ui.base + "/static/style.css").status == 401  # assets too
        assert request(ui.base + "/?token=wrong").status == 401
        cookie = _cookie(ui)
        page = request(ui.base + "/", headers={"Cookie": cookie})
        assert page.status == 200
        csp = page.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src 'none'" in csp
        assert "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
        assert page.headers["x-frame-options"] == "DENY"

        # DNS rebinding: a page of evil.example resolving to 127.0.0.1 sends its own Host.
        port = ui.base.rsplit(":", 1)[1]
        rebound = request(ui.base + "/", headers={"Cookie": cookie, "Host": f"evil.example:{port}"})
        assert rebound.status == 400
        assert "localmem.invalid" not in rebound.body

        # No CORS: a cross-origin read gets no Access-Control header, a preflight no yes.
        cross = request(ui.base + "/", headers={"Cookie": cookie, "Origin": "http://evil.example"})
        assert not any(k.startswith("access-control") for k in cross.headers)
        preflight = request(
            ui.base + "/memory/1/promote",
            method="OPTIONS",
            headers={"Cookie": cookie, "Origin": "http://evil.example"},
        )
        assert preflight.status in (403, 405)
        assert not any(k.startswith("access-control") for k in preflight.headers)

        csrf = _csrf(ui, cookie)
        form = urllib.parse.urlencode({"csrf": csrf, "kind": "core"}).encode()
        posted = {"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"}
        url = ui.base + "/memory/1/promote"
        assert (
            request(
                url, method="POST", data=form, headers={**posted, "Origin": "http://evil.example"}
            ).status
            == 403
        )
        assert (
            request(
                url, method="POST", data=form, headers={**posted, "Sec-Fetch-Site": "cross-site"}
            ).status
            == 403
        )
        no_csrf = urllib.parse.urlencode({"kind": "core"}).encode()
        assert (
            request(url, method="POST", data=no_csrf, headers={**posted, "Origin": ui.base}).status
            == 403
        )
        wrong = urllib.parse.urlencode({"csrf": "x" + csrf, "kind": "core"}).encode()
        assert (
            request(url, method="POST", data=wrong, headers={**posted, "Origin": ui.base}).status
            == 403
        )
        assert request(url, method="POST", data=form).status == 401  # no cookie, no token
        with localmem.open(db) as store:
            assert store.get(1).kind == "note"
        done = request(url, method="POST", data=form, headers={**posted, "Origin": ui.base})
        assert done.status == 303
        with localmem.open(db) as store:
            assert store.get(1).kind == "core"

        missing = request(ui.base + "/memory/424242", headers={"Cookie": cookie})
        assert missing.status == 404 and "No memory has id 424242" in missing.body
        assert "Traceback" not in missing.body
        assert request(ui.base + "/nowhere", headers={"Cookie": cookie}).status == 404
        huge = request(ui.base + f"/memory/{2**70}", headers={"Cookie": cookie})
        assert huge.status == 404 and "Traceback" not in huge.body
        bad_page = request(ui.base + "/browse?page=x", headers={"Cookie": cookie})
        assert bad_page.status == 400 and "whole number" in bad_page.body


def _start(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [script("localmem"), "ui", "--no-browser", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=30,
    )


def _one_sentence(err: str) -> None:
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err


def test_port_in_use_missing_and_unreadable_database(
    db: Path, env: dict[str, str], tmp_path: Path
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = str(taken.getsockname()[1])
        done = _start(env, tmp_path, "--port", port)
    assert done.returncode == 1 and f"port {port}" in done.stderr
    _one_sentence(done.stderr)

    env["LOCALMEM_DB"] = str(tmp_path / "absent.db")
    done = _start(env, tmp_path, "--port", "0")
    assert done.returncode == 1 and "no memory database yet" in done.stderr
    _one_sentence(done.stderr)
    assert not (tmp_path / "absent.db").exists()

    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not sqlite" * 100)
    env["LOCALMEM_DB"] = str(garbage)
    done = _start(env, tmp_path, "--port", "0")
    # The sentence itself is the store's (issue 21 is rewording it): one line, naming the file.
    assert done.returncode == 1 and str(garbage) in done.stderr
    _one_sentence(done.stderr)


def test_another_host_warns(db: Path, env: dict[str, str], tmp_path: Path) -> None:
    process = subprocess.Popen(
        [script("localmem"), "ui", "--no-browser", "--port", "0", "--host", "0.0.0.0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        assert URL_LINE.search(process.stdout.readline())
        assert "warning: listening on 0.0.0.0" in process.stderr.readline()
    finally:
        process.terminate()
        process.wait(timeout=10)


# Runs `localmem ui` under an audit hook that records every file-system event touching
# the facts folder (as the MCP server's facts test does).
WATCHED_UI = """
import os, sys
facts = os.path.realpath(os.environ["LOCAL_MEMORY_DIR"])
log = open(os.environ["FACTS_ACCESS_LOG"], "a", buffering=1)
def hook(event, args):
    if event in {"open", "os.listdir", "os.scandir", "os.mkdir", "os.stat", "os.chmod",
                 "os.rename", "os.remove", "os.walk", "pathlib.Path.glob", "os.chdir",
                 "os.lstat", "os.access", "os.utime", "subprocess.Popen", "os.exec"}:
        for arg in args:
            if isinstance(arg, (list, tuple)):
                arg = " ".join(map(str, arg))
            if isinstance(arg, (str, bytes, os.PathLike)):
                path = os.fsdecode(arg)
                if facts in path or os.path.realpath(path).startswith(facts):
                    log.write(event + " " + path + "\\n")
sys.addaudithook(hook)
from localmem.cli.main import main
sys.argv = ["localmem", "ui", *sys.argv[1:]]
main()
"""


def _visit_everything(ui: Running, cookie: str) -> list[int]:
    statuses = []
    for path in (
        "/",
        "/browse",
        "/search?q=deploy",
        "/memory/1",
        "/memory/1/forget",
        "/duplicates",
        "/audit",
        "/export",
        "/export/download",
        "/facts",
        "/facts/food",
        "/static/style.css",
    ):
        statuses.append(request(ui.base + path, headers={"Cookie": cookie}).status)
    csrf = _csrf(ui, cookie)
    form = urllib.parse.urlencode({"csrf": csrf, "topic": "food", "fact": "likes pho"}).encode()
    headers = {
        "Cookie": cookie,
        "Origin": ui.base,
        "Content-Type": "application/x-www-form-urlencoded",
    }
    statuses.append(
        request(ui.base + "/facts/remember", method="POST", data=form, headers=headers).status
    )
    return statuses


def test_without_facts_the_facts_folder_is_never_touched(
    db: Path, env: dict[str, str], tmp_path: Path
) -> None:
    facts = tmp_path / "facts"
    facts.mkdir()
    (facts / "food.md").write_text("- 2026-11-01: dislikes coriander\n")
    access_log = tmp_path / "facts-access.log"
    env["LOCAL_MEMORY_DIR"] = str(facts)
    env["FACTS_ACCESS_LOG"] = str(access_log)

    def serve(*args: str) -> list[int]:
        process = subprocess.Popen(
            [sys.executable, "-c", WATCHED_UI, "--no-browser", "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tmp_path,
        )
        try:
            assert process.stdout is not None
            found = URL_LINE.search(process.stdout.readline())
            assert found is not None, process.stderr.read() if process.stderr else ""
            ui = Running(found.group(1), found.group(2), process)  # type: ignore[arg-type]
            return _visit_everything(ui, _cookie(ui))
        finally:
            process.terminate()
            process.wait(timeout=10)

    statuses = serve()
    assert statuses[:9] == [200] * 9 and statuses[9:11] == [404, 404] and statuses[-1] == 404
    assert not access_log.exists() or access_log.read_text() == ""
    assert "likes pho" not in (facts / "food.md").read_text()

    # The same watch sees the folder once --facts asks for it: the test can fail.
    statuses = serve("--facts")
    assert statuses[9:11] == [200, 200] and statuses[-1] == 303
    assert str(facts) in access_log.read_text()
    assert "likes pho" in (facts / "food.md").read_text()


@pytest.mark.parametrize(
    "argv",
    [["search", "deploy", "--json"], ["add", "a new memory"], ["stats"]],
)
def test_cheap_commands_never_load_the_ui(
    db: Path, env: dict[str, str], tmp_path: Path, argv: list[str]
) -> None:
    report = (
        "sorted({m.split('.')[0] + ('.ui' if m.startswith('localmem.ui') else '') "
        "for m in sys.modules if m.startswith(('starlette', 'uvicorn', 'localmem.ui'))})"
    )
    assert modules_after(argv, report, env, tmp_path)[-1] == "[]"


def test_serve_and_local_memory_never_load_the_ui(env: dict[str, str], tmp_path: Path) -> None:
    python = str(Path(script("localmem")).parent / "python")
    loaded = "print(sorted(m for m in sys.modules if m.startswith('localmem.ui')))"
    serve = subprocess.run(  # stdin at its end: the stdio server starts and stops at once
        [
            python,
            "-c",
            "import sys; sys.argv = ['localmem', 'serve']\n"
            "from localmem.cli.entry import main\ntry:\n    main()\nexcept SystemExit: pass\n"
            + loaded,
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )
    assert serve.stdout.strip().splitlines()[-1] == "[]", serve.stderr
    facts_only = subprocess.run(
        [
            python,
            "-c",
            "import sys; sys.argv = ['local-memory', 'topics']\n"
            "from localmem.cli.facts import main\nmain()\n"
            "print(sorted(m for m in sys.modules if m.startswith(('starlette', 'uvicorn', "
            "'localmem.ui'))))",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert facts_only.stdout.strip().splitlines()[-1] == "[]", facts_only.stderr
