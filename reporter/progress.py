"""Counts for the long phases of a command (reading runs, rendering pages, importing), on stderr.

On a terminal the count is one line redrawn in place; elsewhere (a log file, CI, a test's captured output)
it is shown only under `-v`, as a debug line at each quarter and at the end, so nothing is printed that a
reader did not ask for. Stages call a plain `(phase, done, total)` callback and never know which.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import TextIO

from .core.errors import LOGGER

ProgressFn = Callable[[str, int, int], None]
BAR_WIDTH = 24
STEPS = 4  # count lines per phase when the output cannot be redrawn (each quarter)

log = logging.getLogger(LOGGER)


class Progress:
    """A `(phase, done, total)` callback that draws a bar on a terminal or logs counts under -v."""

    def __init__(self, *, quiet: bool, verbose: bool, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.mode = "off" if quiet else "bar" if tty else "log" if verbose else "off"
        self._logged: dict[str, int] = {}

    def __call__(self, phase: str, done: int, total: int) -> None:
        if self.mode == "bar":
            self._bar(phase, done, total)
        elif self.mode == "log":
            step = (done * STEPS) // total if total else STEPS
            if done == total or step > self._logged.get(phase, 0):
                self._logged[phase] = step
                log.debug("%s: %d/%d", phase, done, total)

    def _bar(self, phase: str, done: int, total: int) -> None:
        filled = (done * BAR_WIDTH) // total if total else BAR_WIDTH
        line = f"\r{phase} [{'#' * filled}{'-' * (BAR_WIDTH - filled)}] {done}/{total}"
        self.stream.write(line + ("\n" if done >= total else ""))
        self.stream.flush()
