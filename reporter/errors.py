"""One error hierarchy, one problem record, one logger.

A `ReporterError` stops a command: it is a `click.ClickException`, so click prints it and exits with the
kind's code. A `Problem` does not stop anything: it is one bad file (a trace, an attachment, a cache
entry) that is skipped, reported once in the build summary and counted by `ProblemCounter`, which is
what `--strict` reads.

Exit codes (documented in the README): 0 fine, 1 any other error, 2 usage or configuration,
3 problems found under `--strict`, 4 publishing failed, 5 the validation cache needs attention,
6 no GPU where one is needed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import click

LOGGER = "reporter"
log = logging.getLogger(LOGGER)


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
        self.path = str(path)
        self.field = field
        super().__init__(message)

    def format_message(self) -> str:
        return f"{self.path}: {self.field}: {self.message}"

    def __str__(self) -> str:
        return self.format_message()

    def problem(self, kind: ProblemKind = "trace") -> Problem:
        return Problem(self.path, self.field, self.message, kind)


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
