"""`localmem ui`: check the database, bind the port, print the URL, serve until Ctrl-C.

The database is opened once before anything listens, so a missing or unreadable
one is one sentence and exit status 1, not a page of errors later. The port is
bound here too (`--port 0` picks a free one): a port in use is one sentence.
"""

from __future__ import annotations

import sys
import webbrowser
from pathlib import Path

import localmem
from localmem import paths
from localmem.listening import is_loopback, listen

DEFAULT_PORT = 8740


def run_ui(host: str, port: int, *, open_browser: bool, facts: bool) -> None:
    import anyio
    import uvicorn

    from localmem.ui.app import build_app
    from localmem.ui.layout import View
    from localmem.ui.security import Guard

    db: Path = paths.memory_db()
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
    if open_browser:
        webbrowser.open(url)
    try:
        anyio.run(uvicorn.Server(config).serve, [sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
