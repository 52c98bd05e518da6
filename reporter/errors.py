"""One error hierarchy; only the CLI turns these into messages and exit codes."""

from __future__ import annotations

import os
import re
from pathlib import Path

_SURROGATES = re.compile("[\ud800-\udfff]")


def printable(text: str) -> str:
    """`text` safe to print and to write as UTF-8: bytes of a non-UTF-8 file name as `\\xNN`, other
    lone surrogates as U+FFFD. Distinct file names stay distinct."""
    try:
        return os.fsencode(text).decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that is not an escaped byte (e.g. from a JSON "\\ud800")
        return _SURROGATES.sub("\ufffd", text)


class ReporterError(Exception):
    """Base for errors the user can act on."""

    exit_code = 1


class CollectError(ReporterError):
    """A trace or attachment could not be read: names the file and the field."""

    def __init__(self, path: Path | str, field: str, message: str) -> None:
        self.path = printable(str(path))
        self.field = printable(field)
        self.message = printable(message)
        super().__init__(f"{self.path}: {field}: {message}")


class PublishError(ReporterError):
    """The site could not be published."""

    exit_code = 2
