"""Starting the real `localmem ui` for tests: the installed console script as a subprocess,
its printed address parsed for the port and the per-start token."""

from __future__ import annotations

import re
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from conftest import script

URL_LINE = re.compile(r"localmem ui: (http://[^/]+)/\?token=(\S+)")


@dataclass
class Running:
    base: str  # http://127.0.0.1:PORT
    token: str
    process: subprocess.Popen[str]

    @property
    def url(self) -> str:
        return f"{self.base}/?token={self.token}"


@contextmanager
def running_ui(env: dict[str, str], cwd: Path, *args: str) -> Iterator[Running]:
    process = subprocess.Popen(
        [script("localmem"), "ui", "--no-browser", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        found = URL_LINE.search(line)
        if found is None:
            process.kill()
            raise AssertionError(f"no address printed: {line!r} {process.communicate()[1]!r}")
        yield Running(found.group(1), found.group(2), process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: str


def request(
    url: str,
    *,
    method: str = "GET",
    headers: dict[str, str] | None = None,
    data: bytes | None = None,
) -> Answer:
    """One HTTP request that neither follows redirects nor raises on an error status."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    deadline = time.monotonic() + 10
    while True:
        try:
            with opener.open(req, timeout=10) as reply:
                return Answer(
                    reply.status,
                    {k.lower(): v for k, v in reply.headers.items()},
                    reply.read().decode(),
                )
        except urllib.error.HTTPError as error:
            return Answer(
                error.code, {k.lower(): v for k, v in error.headers.items()}, error.read().decode()
            )
        except ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
