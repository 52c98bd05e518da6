"""Golden files: compare output with a file under tests/gold once what may legitimately vary is scrubbed.

Scrubbed on both sides, so a gold file stays valid across releases of reporter and its libraries:
the reporter version, build timestamps, content hashes in asset names, Pygments' escaping of quotes and
its whitespace tokens, and plotly's figure JSON. A mismatch writes the actual output to tests/actual/
and fails with a unified diff; `pytest --update-gold` accepts it.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest

GOLD = Path(__file__).resolve().parent / "gold"
ACTUAL = Path(__file__).resolve().parent / "actual"
DIFF_LIMIT = 6000

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


def check(name: str, actual: str, update: bool = False) -> None:
    """Fail with a unified diff unless `actual` matches tests/gold/NAME after scrubbing both."""
    gold = GOLD / name
    got = scrub(actual)
    if update or not gold.is_file():
        if not update:
            pytest.fail(f"{gold} does not exist; run pytest --update-gold to create it")
        gold.parent.mkdir(parents=True, exist_ok=True)
        gold.write_text(got, encoding="utf-8")
    expected = scrub(gold.read_text(encoding="utf-8"))
    if got == expected:
        return
    out = ACTUAL / name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(got, encoding="utf-8")
    diff = "".join(difflib.unified_diff(expected.splitlines(True), got.splitlines(True), str(gold), str(out), n=2))
    more = f"\n… ({len(diff) - DIFF_LIMIT} more characters in the diff)" if len(diff) > DIFF_LIMIT else ""
    pytest.fail(f"{name} differs from {gold} (pytest --update-gold accepts it):\n{diff[:DIFF_LIMIT]}{more}", pytrace=False)
