"""A recording pass-through between `local-memory trial` and llama-server, on 127.0.0.1.

    python bench/live_model/recorder.py --listen 8090 --upstream 8089 --log exchanges.jsonl

Forwards every request to the upstream server unchanged and appends one JSON line
per exchange to the log: the path, the request body, the status and the answer's
body as the server sent it (HTTP errors included). `live_model.py fixtures` turns
the log into the replies the trial's tests replay (tests/chat/live_replies/), so
the tests see what a real model answered rather than what we imagined it would.
Both ends are loopback addresses; nothing else is reached.
"""

from __future__ import annotations

import argparse
import json
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def serve(listen: int, upstream: int, log_path: str) -> None:
    lock = threading.Lock()
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    base = f"http://127.0.0.1:{upstream}"

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _forward(self, body: bytes | None) -> None:
            request = urllib.request.Request(
                base + self.path, data=body, method="GET" if body is None else "POST"
            )
            request.add_header("Content-Type", "application/json")
            try:
                with opener.open(request, timeout=3600) as answer:
                    status, raw = answer.status, answer.read()
            except urllib.error.HTTPError as error:
                status, raw = error.code, error.read()
            entry = {
                "path": self.path,
                "request": json.loads(body) if body else None,
                "status": status,
                "answer": raw.decode("utf-8", "replace"),
            }
            with lock, open(log_path, "a", encoding="utf-8") as log:
                log.write(json.dumps(entry, ensure_ascii=False) + "\n")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:
            self._forward(None)

        def do_POST(self) -> None:
            self._forward(self.rfile.read(int(self.headers["Content-Length"])))

    ThreadingHTTPServer(("127.0.0.1", listen), Handler).serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen", type=int, default=8090)
    parser.add_argument("--upstream", type=int, default=8089)
    parser.add_argument("--log", required=True)
    args = parser.parse_args()
    serve(args.listen, args.upstream, args.log)


if __name__ == "__main__":
    main()
