"""Secret redaction: API keys and tokens in a trace never reach a published page or download.

A trace is text a model and a harness wrote, and agents paste credentials into prompts, tool arguments
and logs. Every string of a trace (and of a cached validation result shown beside it) is scanned in one
pass per text by the detectors of `secretrules.py` (our key shapes, gitleaks' token formats kept as data,
every regex plugin of detect-secrets; the entropy and keyword plugins are left out, they flag ordinary
kernel code) and the named assignments of `assign.py` (`DB_PASSWORD=...` anywhere on a line, JSON keys,
`--password`, Authorization headers), all compiled with RE2, so no text or pattern can make it slower
than linear. Each hit becomes `[redacted: <kind>]`; newlines inside it are kept, so line numbers on the
page still match the source. Results are cached by content (a trace repeats the same short strings).

Only what is published is redacted: `collect` keeps the original trace for validation, whose cache key
and executed kernel must not change. An allow-list (`DATA/redact-allow.txt`) keeps known non-secrets:
one entry per line, a literal that a detected secret must equal, or `re:PATTERN` (RE2 syntax: a pattern
that needs backtracking is refused with a message) that it must match in full; blank lines and `#`
comments are skipped.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import re2

from ..core.errors import CollectError
from ..core.records import ValidationResult
from ..core.safeio import read_bounded
from . import secretrules
from .assign import ASSIGNMENT_KIND, SECRET_KEY_NAME, assignment_hits, secret_value
from .secretrules import linear

ALLOW_FILE = "redact-allow.txt"
_ALNUM_TO_A = bytes(ord("a") if chr(b).isascii() and chr(b).isalnum() else ord(" ") for b in range(256))
_RUN = b"a" * 16  # a run of 16 letters or digits: most keys' random part has one
_CONTEXT = 100  # characters before a candidate (and after a run) that the detectors see
_AFTER_KEYWORD = 1100  # characters after a rule's keyword (a prefix): the longest token formats are ~1,000
_MIN_GROUP = 8  # a capture group shorter than this is a prefix (e.g. "ghp"), not the secret: take the match


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
            except re2.error:
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
    return ("uses look-around or a back-reference, which only a backtracking engine runs (one line of text could "
            "then stall the build): patterns here run with RE2, so write it without them; the entry is skipped")


@dataclass(frozen=True)
class Redactor:
    """Finds secrets in text and replaces them; counts what it replaced by kind."""

    allow: AllowList = field(default_factory=AllowList)

    def text(self, text: str, counts: Counter[str]) -> str:
        out, found = _cached(self.allow, text) if len(text) <= _CACHED_CHARS else _redact(self.allow, text)
        counts.update(dict(found))
        return out

    def document(self, node: Any, counts: Counter[str]) -> Any:
        """A copy of a parsed JSON document with every string and key redacted, and every string value
        under a key that names a secret (`{"DB_PASSWORD": "..."}`) as if it were written `KEY: VALUE`."""
        if isinstance(node, str):
            return self.text(node, counts)
        if isinstance(node, dict):
            return {self.text(k, counts): self._value(k, v, counts) for k, v in node.items()}
        if isinstance(node, list | tuple):  # tuples: the frozen result records' sequences
            return [self.document(v, counts) for v in node]
        return node

    def _value(self, key: Any, value: Any, counts: Counter[str]) -> Any:
        if isinstance(key, str) and isinstance(value, str) and SECRET_KEY_NAME.fullmatch(key) \
                and (span := secret_value(key, value)) is not None and not self.allow.allows(value[span[0]:span[1]]):
            counts[ASSIGNMENT_KIND] += 1
            return f"{value[:span[0]]}[redacted: {ASSIGNMENT_KIND}]{value[span[1]:]}"
        return self.document(value, counts)

    def trace_document(self, doc: dict[str, Any], counts: Counter[str]) -> dict[str, Any]:
        """A trace document redacted everywhere but its attachments' paths (the files must still be found)."""
        out: dict[str, Any] = self.document({k: v for k, v in doc.items() if k != "attachments"}, counts)
        if "attachments" in doc:
            atts = doc["attachments"]
            out["attachments"] = [{**self.document({k: v for k, v in a.items() if k != "path"}, counts),
                                   **({"path": a["path"]} if "path" in a else {})} if isinstance(a, dict)
                                  else self.document(a, counts) for a in atts] if isinstance(atts, list) else atts
        return out

    def error(self, exc: CollectError, counts: Counter[str]) -> CollectError:
        """A problem's file, field and message as they may be shown: a path or a value can hold a secret."""
        return CollectError(self.text(exc.path, counts), self.text(exc.field, counts), self.text(exc.message, counts))

    def result(self, result: ValidationResult, counts: Counter[str]) -> ValidationResult:
        """A cached validation result with its text (log, reason, findings' source lines, ...) redacted."""
        before = sum(counts.values())
        doc = self.document(result.model_dump(mode="python"), counts)
        return result if sum(counts.values()) == before else ValidationResult.model_validate(doc)


_CACHED_CHARS = 4096  # texts up to this long are cached by content (keys, names, short values: most calls)


@lru_cache(maxsize=1 << 16)
def _cached(allow: AllowList, text: str) -> tuple[str, tuple[tuple[str, int], ...]]:
    return _redact(allow, text)


def _redact(allow: AllowList, text: str) -> tuple[str, tuple[tuple[str, int], ...]]:
    """`text` with its secrets replaced, and how many of each kind."""
    # One byte per character (anything not ASCII becomes "?"), so a match's byte offsets are the text's.
    raw = text.encode("ascii", "replace")
    hits = [h for h in (*_token_hits(raw), *assignment_hits(raw, text)) if not allow.allows(text[h[0]:h[1]])]
    if not hits:
        return text, ()
    out, pos, counts = [], 0, Counter[str]()
    for start, end, kind in _merge(hits):
        if start < pos:
            continue
        counts[kind] += 1
        out.append(text[pos:start] + f"[redacted: {kind}]" + "\n" * text.count("\n", start, end))
        pos = end
    return "".join(out) + text[pos:], tuple(sorted(counts.items()))


def _token_hits(raw: bytes) -> Iterator[tuple[int, int, str]]:
    """(start, end, kind) of every detector's secret: key blocks over the whole text, the rest in windows."""
    if secretrules.block_needed(raw):
        for rule in secretrules.block_rules():
            for m in rule.pattern.finditer(raw):
                yield m.start(), m.end(), rule.kind
    for start, end in _windows(raw):
        part = raw[start:end]
        lowered = part.lower()
        for rule in secretrules.rules():
            if rule.kind in secretrules.KEY_BLOCKS or (rule.keywords and not any(k in lowered for k in rule.keywords)):
                continue
            for m in rule.pattern.finditer(part):
                s, e = _span(m)
                if e > s and rule.accepts(part[s:e]):
                    yield start + s, start + _extend(part, e), rule.kind


def _span(m: Any) -> tuple[int, int]:
    """The secret in a match: its longest capture group of `_MIN_GROUP`+ characters, else all of it."""
    spans: list[tuple[int, int]] = [m.span(i) for i in range(m.re.groups + 1)]
    groups = [s for s in spans[1:] if s[1] - s[0] >= _MIN_GROUP]
    return max(groups, key=lambda s: s[1] - s[0]) if groups else spans[0]


def _extend(part: bytes, end: int) -> int:
    """A hit's end moved past the letters and digits that follow it: the rest of a longer key."""
    while end < len(part) and _ALNUM_TO_A[part[end]] == 97:
        end += 1
    return end


def _windows(raw: bytes) -> list[tuple[int, int]]:
    """Stretches of the text around every place a secret could be, merged; usually a small part of it.

    Running ~170 detectors over all of a large trace would cost seconds per MB. Most detectors' secret
    holds a run of 16+ letters and digits (identifiers are broken up by `_` and `.`), or starts with or
    follows its rule's keyword (a vendor prefix such as `dop_v1_`, `sk-`, a URL's `://`, `bearer`: one
    RE2 pass finds them all); key blocks are searched apart. detect-secrets itself scans line by line, and its keyword
    detectors look only a few dozen characters back, so a window of the neighbourhood gives the same hits.
    """
    flat = raw.translate(_ALNUM_TO_A)
    spans: list[tuple[int, int]] = []
    i = flat.find(_RUN)
    while i >= 0:
        end = flat.find(b" ", i)
        end = len(flat) if end < 0 else end
        spans.append((i - _CONTEXT, end + _CONTEXT))
        i = flat.find(_RUN, end)
    spans.extend((m.start() - _CONTEXT, m.start() + _AFTER_KEYWORD) for m in secretrules.keyword_finder().finditer(raw))
    windows: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        start, end = max(0, s), min(len(raw), e)
        if windows and start <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(end, windows[-1][1]))
        else:
            windows.append((start, end))
    return windows


def _merge(hits: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Overlapping hits as one span each, named by the longest of them (the first listed on a tie); a key's
    shape always names it before an assignment does, so `HF_TOKEN=hf_...` counts as a Hugging Face token."""
    order = _kind_order()
    hits.sort(key=lambda h: (h[0], -(h[1] - h[0]), order.get(h[2], len(order))))
    merged: list[list[Any]] = []
    for start, end, kind in hits:
        if merged and start < merged[-1][1]:
            last = merged[-1]
            if (kind != ASSIGNMENT_KIND, end - start) > (last[2] != ASSIGNMENT_KIND, last[3]):
                last[2], last[3] = kind, end - start
            last[1] = max(last[1], end)
        else:
            merged.append([start, end, kind, end - start])
    return [(s, e, k) for s, e, k, _ in merged]


@lru_cache(maxsize=1)
def _kind_order() -> dict[str, int]:
    order: dict[str, int] = {}
    for rule in secretrules.rules():
        order.setdefault(rule.kind, len(order))
    return order


@dataclass(frozen=True)
class RedactionReport:
    """What was redacted, by run and kind; never the secrets themselves."""

    by_run: dict[str, dict[str, int]]

    @property
    def total(self) -> int:
        return sum(sum(kinds.values()) for kinds in self.by_run.values())

    def by_kind(self) -> dict[str, int]:
        totals: Counter[str] = Counter()
        for kinds in self.by_run.values():
            totals.update(kinds)
        return dict(sorted(totals.items(), key=lambda kv: (-kv[1], kv[0])))

    def line(self) -> str:
        """One line for the build summary, e.g. `redacted 3 secrets in 2 runs (openai-key 2, github-token 1)`."""
        if not self.total:
            return "redacted no secrets"
        kinds = ", ".join(f"{k} {n}" for k, n in self.by_kind().items())
        runs = len([r for r, kinds_ in self.by_run.items() if kinds_])
        return f"redacted {self.total} secret{'s' if self.total != 1 else ''} in {runs} run{'s' if runs != 1 else ''} ({kinds})"

    def lines(self) -> list[str]:
        """One line per run that had secrets, in run order."""
        return [f"{run}: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) for run, kinds in sorted(self.by_run.items()) if kinds]
