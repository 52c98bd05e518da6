"""The last pass over every file a build writes: it verifies, it never rewrites.

Secrets are redacted in the values a file is made from (trace fields, results, names, errors) before they
are serialised. A redactor run over a finished file's text once rewrote structure: a run folder named like
an HTTP header swallowed the quote and colon after it in the status file (the site was bricked), and a
password in a reference swallowed a search shard's punctuation (the search page hung for a whole model).
So this pass scans the whole text once (fast: linear-time patterns); only when something matches does it
parse the file (HTML with the standard parser, JSON and our JSONP chunks with `json`, CSV with `csv`) and
check each value on its own. A match that no single value holds is the format's punctuation around a name
(`"password",{"0":…`): nothing to do. A value that still holds a secret was missed where it was read: the
file is refused (`LeakError`, naming the file, its place and the kind), so a run page is left out and listed,
and a listing page stops the build with the live site untouched. Nothing is published with a secret in it.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from typing import Any

from ..core.errors import ReporterError

_MARK = re.compile(r"\[redacted: ([\w.-]+)\]")
_JSONP = re.compile(r"\A\s*[A-Za-z_$][\w$.]*\((.*)\);?\s*\Z", re.S)


class LeakError(ReporterError):
    """A value of a file the build was about to write still holds a secret."""

    def __init__(self, rel: str, where: str, kinds: list[str]) -> None:
        self.rel = rel
        super().__init__(f"{rel}: {where} holds what the redactor reads as a secret ({', '.join(kinds)}) that was not "
                         "redacted where its value was read, so the file is not written. If it is no secret, add it to "
                         "DATA/redact-allow.txt; otherwise please report this as a bug.")


class _Values(HTMLParser):
    """Every text run, attribute value and comment of an HTML document, unescaped, with its line and column."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, str]] = []

    def _at(self) -> str:
        line, col = self.getpos()
        return f"line {line} column {col + 1}"

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found += [(self._at(), v) for _, v in attrs if v]

    handle_startendtag = handle_starttag

    def handle_data(self, data: str) -> None:
        self.found.append((self._at(), data))

    def handle_comment(self, data: str) -> None:
        self.found.append((self._at(), data))


def _html(text: str, where: str = "") -> list[tuple[str, str]]:
    parser = _Values()
    parser.feed(text)
    parser.close()
    return [(f"{where}{at}", v) for at, v in parser.found]


def _json(node: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(node, str):
        yield from (_html(node, f"{where}, ") if "<" in node else [(where, node)])
    elif isinstance(node, dict):
        for k, v in node.items():
            yield f"{where}.{k}", str(k)
            yield from _json(v, f"{where}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _json(v, f"{where}[{i}]")


def values(rel: str, text: str) -> list[tuple[str, str]]:
    """(where, value) for each value a reader of `rel` sees; the whole text as one value where the format is
    not one of ours (a kernel download is one value: its source)."""
    suffix = rel.rsplit(".", 1)[-1]
    try:
        if suffix == "html":
            return _html(text)
        if suffix == "json":
            return list(_json(json.loads(text), "JSON"))
        if suffix == "js" and (m := _JSONP.match(text)):
            return list(_json(json.loads(f"[{m.group(1)}]"), "arguments"))
        if suffix == "csv":
            return [(f"row {r} column {c}", cell) for r, row in enumerate(csv.reader(io.StringIO(text)), 1)
                    for c, cell in enumerate(row, 1)]
    except ValueError:
        pass  # not the format its name says: judged whole
    return [("the file", text)]


def _new_marks(before: str, after: str) -> list[str]:
    had = _MARK.findall(before)
    return sorted(set(_MARK.findall(after)) - set(had)) or sorted(set(_MARK.findall(after)))


# A sha256 digest shown as itself (a kernel's hash, which reviews.toml names): ours, computed from the text. About 1
# in 1,500 holds a key's shape (ClickHouse's `4b1d` + 38 characters); a value from DATA that is a secret was redacted
# where it was read, so only the digests we print are spared here.
_DIGEST = re.compile(r"\b[0-9a-f]{64}\b")


def _ours_masked(value: str) -> str:
    return _DIGEST.sub("0" * 64, value) if len(value) >= 64 else value


# Above this size a file is checked value by value at once: its long values were redacted where they were read, and
# the redactor knows them again (`collect.redact._large`), while the whole file's text would be scanned anew.
_BY_VALUE_CHARS = 1024 * 1024


def check(rel: str, text: str, clean: Callable[[str], str]) -> str:
    """`text`, unchanged, when no value of it holds a secret; else a LeakError."""
    if len(text) <= _BY_VALUE_CHARS and clean(masked := _ours_masked(text)) == masked:
        return text
    for where, value in values(rel, text):
        if (shown := clean(masked := _ours_masked(value))) != masked:
            raise LeakError(rel, clean(where), _new_marks(masked, shown))  # a place may be named by a key that is the secret
    return text
