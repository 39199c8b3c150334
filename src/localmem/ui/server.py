"""`localmem ui`: check the database, bind the port, print the URL, serve until Ctrl-C.

The database is opened once before anything listens, so a missing or unreadable
one is one sentence and exit status 1, not a page of errors later. The port is
bound here too (`--port 0` picks a free one): a port in use is one sentence.

The browser is never given the tokened address on its command line, which every
local user can read (`ps`, `/proc/PID/cmdline`): it is given a launch file, readable
by this user only, whose page moves on to the address; the file is removed as soon
as the token is spent, and at the latest when the view stops (decision 162).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import webbrowser
from pathlib import Path

import localmem
from localmem import paths
from localmem.listening import is_loopback, listen
from localmem.ui.html import escape

DEFAULT_PORT = 8740


class LaunchFile:
    """A one-time page in a private folder that sends the browser on to the view."""

    def __init__(self, url: str) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="localmem-ui-"))  # 0700, ours alone
        self.path = self.folder / "open.html"
        shown = escape(url)
        page = (
            "<!doctype html><html lang=en><head><meta charset=utf-8>"
            f'<meta http-equiv="refresh" content="0; url={shown}"><title>localmem</title>'
            f'</head><body><a href="{shown}">Open localmem ui</a></body></html>'
        )
        descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.write(page)

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def run_ui(host: str, port: int, *, open_browser: bool, facts: bool) -> None:
    import anyio
    import uvicorn

    from localmem.ui.app import build_app
    from localmem.ui.layout import View
    from localmem.ui.security import Guard

    db: paths.Location = paths.memory_db()
    with localmem.open(db, create=False):  # missing, unreadable or too new: one sentence
        pass
    sock = listen(host, port, "pass another --port (0 picks a free one) or stop what is using it")
    guard = Guard(host=host, port=sock.getsockname()[1])
    if not is_loopback(host):
        print(
            f"localmem: warning: listening on {host}, which other machines can reach; "
            "anyone holding the token can read, change and forget memories"
            + (" and facts about you." if facts else "."),
            file=sys.stderr,
            flush=True,
        )
    app = build_app(View(guard=guard, db=db, facts=facts))
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="off")
    url = guard.url()
    print(f"localmem ui: {url}", flush=True)
    print("Open that address in your browser; Ctrl-C stops the view.", file=sys.stderr, flush=True)
    launch = None
    if open_browser:
        launch = LaunchFile(url)
        guard.on_token_spent = launch.remove
        webbrowser.open(launch.path.as_uri())
    try:
        anyio.run(uvicorn.Server(config).serve, [sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
        if launch is not None:
            launch.remove()
