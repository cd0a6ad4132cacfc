"""Progress lines on sys.stderr for the long calls of the Python package (STYLE.md: any phase
longer than about 2 s shows its progress, in Python too).

The command line draws its progress with runners/progress.cpp on the process's stderr; from
Python the lines go to sys.stderr instead, so that a notebook shows them under the cell. As the
command line's plain lines: nothing for the first 2 s (a short call stays silent), then a line
every 5 s, and a last one when the work ends if any line was shown.
"""

from __future__ import annotations

import sys
import time

FIRST_AFTER = 2.0  # seconds before the first line
EVERY = 5.0        # seconds between lines


def _elapsed(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


class Progress:
    """Called as progress(done, total) as often as convenient; prints at most every 5 s."""

    def __init__(self, what: str, unit: str = "tasks", stream=None):
        self.what, self.unit = what, unit
        self.stream = stream
        self.start = time.monotonic()
        self.last = None  # when the last line was printed
        self.seen = (0, 0)

    def _print(self, text: str) -> None:
        stream = self.stream if self.stream is not None else sys.stderr
        try:
            print(text, file=stream, flush=True)
        except (OSError, ValueError):  # a closed or broken stderr never ends the work
            pass

    def __call__(self, done: int, total: int) -> None:
        self.seen = (done, total)
        now = time.monotonic()
        if now - self.start < FIRST_AFTER or (self.last is not None and now - self.last < EVERY):
            return
        self.last = now
        percent = 100.0 * done / total if total else 100.0
        self._print(f"{self.what}: {done}/{total} {self.unit} ({percent:.0f}%), "
                    f"{_elapsed(now - self.start)}")

    def finish(self) -> None:
        if self.last is not None:
            self._print(f"{self.what}: done in {_elapsed(time.monotonic() - self.start)}")
