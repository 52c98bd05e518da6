"""One error hierarchy; only the CLI turns these into messages and exit codes."""

from __future__ import annotations

from pathlib import Path


class ReporterError(Exception):
    """Base for errors the user can act on."""

    exit_code = 1


class CollectError(ReporterError):
    """A trace or attachment could not be read: names the file and the field."""

    def __init__(self, path: Path | str, field: str, message: str) -> None:
        self.path = str(path)
        self.field = field
        self.message = message
        super().__init__(f"{self.path}: {field}: {message}")


class PublishError(ReporterError):
    """The site could not be published."""

    exit_code = 2


class SiteError(ReporterError):
    """The output folder cannot be (re)built: it is not ours, or it overlaps the data."""

    exit_code = 3
