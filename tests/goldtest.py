"""Golden files: compare output with a file under tests/gold once what may legitimately vary is scrubbed.

Scrubbed on both sides, so a gold file stays valid across releases of reporter and its libraries:
the reporter version, build timestamps, content hashes in asset names, Pygments' escaping of quotes and
its whitespace tokens, and plotly's figure JSON. A mismatch writes the actual output to tests/actual/
and fails with a unified diff; `pytest --update-gold` (or REPORTER_REGEN_GOLD=1) accepts it.

`check_exact` is the strict form (tests/test_gold_pages.py): only the reporter version and the content hashes
of asset names are normalised, so chart JSON, numbers and markup are compared byte for byte.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

GOLD = Path(__file__).resolve().parent / "gold"
ACTUAL = Path(__file__).resolve().parent / "actual"
DIFF_LIMIT = 6000
REGEN_ENV = "REPORTER_REGEN_GOLD"  # =1: rewrite the gold files from the current output, as --update-gold does

# (pattern, replacement): each is something that changes without our output changing.
SCRUBS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(static/[\w.-]+?)\.[0-9a-f]{8}\.(\w+)"), r"\1.HASH.\2"),  # content-hashed asset names
    (re.compile(r"\breporter \d+(\.\d+)+[\w.+-]*"), "reporter VERSION"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC\b"), "BUILD-TIME"),  # build time (traces use ISO 8601 "T...Z")
    (re.compile(r"&#39;|&#x27;"), "'"),  # Pygments 2.21 changed how it escapes quotes
    (re.compile(r"&quot;|&#34;"), '"'),
    (re.compile(r'<span class="w">(\s*)</span>'), r"\1"),  # whitespace tokens come and go between lexer versions
    (re.compile(r'(<script type="application/json" id="[^"]+">).*?(</script>)', re.S), r"\1…\2"),  # plotly's JSON
]


def scrub(text: str) -> str:
    for pattern, replacement in SCRUBS:
        text = pattern.sub(replacement, text)
    return text


# What changes between two builds of the same data with the same templates and code: the version in the
# footer, and asset names, which carry a hash of static/ (changed by any edit to a script or the stylesheet).
NORMALISE: list[tuple[re.Pattern[str], str]] = SCRUBS[:2]


def normalise(text: str) -> str:
    for pattern, replacement in NORMALISE:
        text = pattern.sub(replacement, text)
    return text


def regenerate(update: bool) -> bool:
    return update or os.environ.get(REGEN_ENV) == "1"


def check(name: str, actual: str, update: bool = False) -> None:
    """Fail with a unified diff unless `actual` matches tests/gold/NAME after scrubbing both."""
    _compare(name, actual, regenerate(update), scrub, stored=scrub)


def check_exact(name: str, actual: str, update: bool = False) -> None:
    """Fail with a unified diff unless `actual` equals tests/gold/NAME byte for byte, once the version and the
    asset hashes are normalised in both. The gold file holds the page as built."""
    _compare(name, actual, regenerate(update), normalise, stored=lambda text: text)


def _compare(name: str, actual: str, update: bool, prepare: Callable[[str], str], stored: Callable[[str], str]) -> None:
    gold = GOLD / name
    got = prepare(actual)
    if update or not gold.is_file():
        if not update:
            pytest.fail(f"{gold} does not exist; run pytest --update-gold (or {REGEN_ENV}=1 pytest) to create it")
        gold.parent.mkdir(parents=True, exist_ok=True)
        gold.write_text(stored(actual), encoding="utf-8", newline="")
    expected = prepare(gold.read_bytes().decode("utf-8"))
    if got == expected:
        return
    out = ACTUAL / name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(got, encoding="utf-8", newline="")
    diff = "".join(difflib.unified_diff(expected.splitlines(True), got.splitlines(True), str(gold), str(out), n=2))
    more = f"\n… ({len(diff) - DIFF_LIMIT} more characters in the diff)" if len(diff) > DIFF_LIMIT else ""
    pytest.fail(f"{name} differs from {gold} (pytest --update-gold or {REGEN_ENV}=1 accepts it); {first_difference(expected, got)}"
                f"\n{diff[:DIFF_LIMIT]}{more}", pytrace=False)


def first_difference(expected: str, got: str, context: int = 60) -> str:
    """Where two texts first differ, with a little of each around it: a chart's JSON is one long line."""
    at = next((i for i, (a, b) in enumerate(zip(expected, got)) if a != b), min(len(expected), len(got)))
    line = expected.count("\n", 0, at) + 1
    column = at - (expected.rfind("\n", 0, at) + 1) + 1
    lo = max(0, at - context)
    return (f"first difference at line {line} column {column}: expected {expected[lo:at + context]!r}, "
            f"got {got[lo:at + context]!r}")
