"""A line on the terminal while a long command works (SPEC 6: progress on a terminal,
nothing when piped).

`with working("auditing"):` writes `auditing… 3 s` to stderr and redraws it each
second, then clears it, so the report that follows starts on a clean line. It
says nothing when stderr is not a terminal (a script, a pipe, a test), which is
where a ticking line would only be noise.
"""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType

TICK = 1.0  # seconds between redraws


class working:  # noqa: N801 (used like a function: `with working("auditing"):`)
    def __init__(self, label: str) -> None:
        self.label = label
        self.shown = sys.stderr.isatty()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._start = 0.0

    def _draw(self) -> None:
        elapsed = int(time.monotonic() - self._start)
        sys.stderr.write(f"\r\033[K{self.label}… {elapsed} s")
        sys.stderr.flush()

    def _run(self) -> None:
        while not self._stop.wait(TICK):
            self._draw()

    def __enter__(self) -> working:
        if self.shown:
            self._start = time.monotonic()
            self._draw()
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
