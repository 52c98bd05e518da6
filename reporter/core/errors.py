"""One error hierarchy, one problem record, one logger.

A `ReporterError` stops a command: it is a `click.ClickException`, so click prints it and exits with the
kind's code. A `Problem` does not stop anything: it is one bad file (a trace, an attachment, a cache
entry) that is skipped, reported once in the build summary and counted by `ProblemCounter`, which is
what `--strict` reads.

Exit codes (documented in the README): 0 fine, 1 any other error, 2 usage or configuration,
3 problems found under `--strict`, 4 publishing failed, 5 the validation cache needs attention,
6 no GPU where one is needed, 7 the output folder may not be built into.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import click

from .names import visible

LOGGER = "reporter"
log = logging.getLogger(LOGGER)
_SURROGATES = re.compile("[\ud800-\udfff]")


def printable(text: str) -> str:
    """`text` safe to print and to write as UTF-8: bytes of a non-UTF-8 file name as `\\xNN`, other
    lone surrogates as U+FFFD. Distinct file names stay distinct."""
    try:
        return os.fsencode(text).decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that is not an escaped byte (e.g. from a JSON "\\ud800")
        return replace_surrogates(text)


_TOKEN_TAIL = re.compile(r"[^\s'\"`,;()\[\]{}<>]+\Z")


def excerpt(text: str, limit: int) -> str:
    """The start of `text` for a message, at most `limit` characters: when it is cut, the word the cut falls in goes
    too (the redactor runs over the message afterwards and finds a secret whole, never the half a cut left)."""
    if len(text) <= limit:
        return text
    return _TOKEN_TAIL.sub("", text[:limit]) + "…"


def replace_surrogates(text: str) -> str:
    """`text` with every lone surrogate (invalid in UTF-8) shown as U+FFFD instead of crashing a write."""
    return _SURROGATES.sub("\ufffd", text) if _SURROGATES.search(text) else text


class ReporterError(click.ClickException):
    """Base for errors the user can act on; the message names the file and the field to fix."""

    exit_code = 1


class ConfigError(ReporterError):
    """The configuration (`[tool.reporter]`, `--config`, an option) is invalid."""

    exit_code = 2


class StrictError(ReporterError):
    """`--strict` found problems (or logged warnings) in an otherwise finished command."""

    exit_code = 3


class PublishError(ReporterError):
    """The site could not be published."""

    exit_code = 4


class CacheError(ReporterError):
    """The validation cache is inconsistent (`reporter cache check`) or cannot be written."""

    exit_code = 5


class NoDeviceError(ReporterError):
    """A command that measures on a GPU found none."""

    exit_code = 6


class SiteError(ReporterError):
    """The output folder cannot be (re)built: it is not ours, or it overlaps the data."""

    exit_code = 7


ProblemKind = Literal["trace", "attachment", "cache", "config"]


@dataclass(frozen=True, order=True)
class Problem:
    """One file that could not be used; the build goes on without it."""

    path: str
    field: str
    message: str
    kind: ProblemKind = "trace"

    def __str__(self) -> str:
        return f"{self.path}: {self.field}: {self.message}"


class CollectError(ReporterError):
    """A trace or attachment could not be read: names the file and the field."""

    def __init__(self, path: Path | str, field: str, message: str) -> None:
        # Paths and fields come from file names and trace keys: make them printable and writable to a page, with
        # invisible and direction-changing characters written out (`names.visible`).
        self.path = visible(printable(str(path)))
        self.field = visible(printable(field))
        super().__init__(printable(message))

    def format_message(self) -> str:
        return f"{self.path}: {self.field}: {self.message}"

    def __str__(self) -> str:
        return self.format_message()

    def problem(self, kind: ProblemKind = "trace") -> Problem:
        return Problem(self.path, self.field, self.message, kind)

    def inside(self, data: Path) -> CollectError:
        """This error with its path relative to DATA, as a page shows it: the builder's absolute folders (a user
        name, a home folder) are no business of a site's readers. A path outside DATA is kept."""
        for root in dict.fromkeys((str(data.absolute()), str(data.resolve()))):
            if self.path.startswith(root.rstrip("/") + "/"):
                return CollectError(self.path[len(root.rstrip("/")) + 1:], self.field, self.message)
        return self


class ProblemCounter(logging.Handler):
    """Counts what was logged at WARNING or above; `--strict` fails a command when the count is not 0."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.warnings = 0
        self.errors = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR:
            self.errors += 1
        else:
            self.warnings += 1

    @property
    def total(self) -> int:
        return self.warnings + self.errors


def report(problems: list[Problem]) -> None:
    """Log each distinct problem once, in a stable order (file, then field)."""
    for p in sorted(set(problems)):
        log.warning("could not read %s", p)
