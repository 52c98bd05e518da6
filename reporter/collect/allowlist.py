"""The allow-list (`DATA/redact-allow.txt`): what the redactor keeps although it looks like a secret. One entry per
line: a literal that a detected secret must equal, or `re:PATTERN` (RE2 syntax, so no line of text can stall the
build) that it must match in full; blank lines and `#` comments are skipped, a bad line is reported and skipped."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import re2

from ..core.errors import CollectError
from ..core.safeio import read_bounded
from .secretrules import linear

ALLOW_FILE = "redact-allow.txt"


@dataclass(frozen=True)
class AllowList:
    literals: frozenset[str] = frozenset()
    patterns: tuple[Any, ...] = ()  # RE2 patterns: linear time whatever the pattern and the text

    def allows(self, secret: str) -> bool:
        return secret in self.literals or any(p.fullmatch(secret) for p in self.patterns)


def load_allow_list(data: Path) -> tuple[AllowList, list[CollectError]]:
    """DATA/redact-allow.txt (absent: nothing allowed); a bad line is reported and skipped."""
    path = data / ALLOW_FILE
    if not path.exists() and not path.is_symlink():
        return AllowList(), []
    try:
        text = read_bounded(path, data, "(file)", "MAX_CONFIG_FILE_BYTES").decode("utf-8", errors="replace")
    except CollectError as exc:
        return AllowList(), [exc]
    literals, patterns, errors = set(), [], []
    for n, line in enumerate(text.splitlines(), start=1):
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        if entry.startswith("re:"):
            try:
                patterns.append(linear(entry[3:]))
            except (re2.error, RecursionError, MemoryError, OverflowError):
                errors.append(CollectError(path, f"line {n}", _bad_pattern(entry[3:])))
        else:
            literals.add(entry)
    return AllowList(frozenset(literals), tuple(patterns)), errors


def _bad_pattern(pattern: str) -> str:
    """Why an allow-list pattern was refused: RE2 (linear time) cannot run it, or it is no pattern at all."""
    try:
        re.compile(pattern)
    except re.error as exc:
        return f"not a valid regular expression: {exc}"
    except (RecursionError, MemoryError, OverflowError):  # nested too deep for Python's parser to say more
        return "too deeply nested to read; the entry is skipped"
    return ("uses look-around or a back-reference, which only a backtracking engine runs (one line of text could "
            "then stall the build): patterns here run with RE2, so write it without them; the entry is skipped")
