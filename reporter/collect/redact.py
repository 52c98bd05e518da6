"""Secret redaction: API keys and tokens in a trace never reach a published page or download.

A trace is text a model and a harness wrote, and agents paste credentials into prompts, tool arguments
and logs. Every string of a trace (and of a cached validation result shown beside it) is scanned in one
pass per text by the detectors of `secretrules.py` (our key shapes, gitleaks' token formats kept as data,
every regex plugin of detect-secrets; the entropy and keyword plugins are left out, they flag ordinary
kernel code) and the named assignments of `assign.py` (`DB_PASSWORD=...` anywhere on a line, JSON keys,
`--password`, Authorization headers, `os.environ['KEY'] = ...`), all compiled with RE2, so no text or pattern
can make it slower than linear. Two views of the text are scanned too: each base64 run that decodes to text
(the whole run is the hit, `base64-encoded-secret`), and the text around a backslash-newline or a string
concatenation (`"sk-proj-ab" "cd..."`) with the break taken out, for a key split over it. Each hit becomes
`[redacted: <kind>]`; newlines inside it are kept, so line numbers on the page still match the source.
Results are cached by content (a trace repeats the same short strings).

Only what is published is redacted: `collect` keeps the original trace for validation, whose cache key
and executed kernel must not change. An allow-list (`DATA/redact-allow.txt`) keeps known non-secrets:
one entry per line, a literal that a detected secret must equal, or `re:PATTERN` (RE2 syntax: a pattern
that needs backtracking is refused with a message) that it must match in full; blank lines and `#`
comments are skipped.
"""

from __future__ import annotations

import binascii
from bisect import bisect_right
from collections import Counter, OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import accumulate
from typing import Any

from ..core.errors import CollectError
from ..core.records import ValidationResult
from . import secretrules

# The allow-list lives in its own module; its names stay importable from here, where callers look for them.
from .allowlist import ALLOW_FILE as ALLOW_FILE
from .allowlist import AllowList as AllowList
from .allowlist import load_allow_list as load_allow_list
from .assign import ASSIGNMENT_KIND, SECRET_KEY_NAME, assignment_hits, secret_value
from .secretrules import linear, unseen_as_breaks

_ALNUM_TO_A = bytes(ord("a") if chr(b).isascii() and chr(b).isalnum() else ord(" ") for b in range(256))
_RUN = b"a" * 16  # a run of 16 letters or digits: most keys' random part has one
_CONTEXT = 100  # characters before a candidate (and after a run) that the detectors see
_AFTER_KEYWORD = 1100  # characters after a rule's keyword (a prefix): the longest token formats are ~1,000
_MIN_GROUP = 8  # a capture group shorter than this is a prefix (e.g. "ghp"), not the secret: take the match
ENCODED_KIND = "base64-encoded-secret"
# One line's run of base64, standard or URL-safe: 20 characters (15 bytes) or more, the shortest a secret decodes from.
_BASE64_TO_A = bytes(ord("a") if b in b"+/_-" or (chr(b).isascii() and chr(b).isalnum()) else ord(" ") for b in range(256))
_BASE64_RUN = b"a" * 20
_PEEK = 400  # base64 characters decoded first: a run whose start is not text is not decoded whole
_WRAPPED = 40  # a full line of base64 (a multiple of 4 characters, this many or more) goes on at the next line's start
_URL_SAFE = bytes.maketrans(b"-_", b"+/")
_TEXT_BYTES = bytes(range(32, 127)) + b"\t\n\r"
_TO_ASCII = bytes(b if b < 128 else ord("?") for b in range(256))
_DECODINGS = 2  # base64 inside base64 is decoded once more; deeper is not looked at
# Where a key may go on past a break: a backslash-newline, or one string literal closed and the next opened
# (`"abc" "def"`, `"abc" + "def"`, `'abc' \` and a newline, `"abc" +` and a newline); the next line may start
# a comment again (`#`, `//`). Quotes and newlines also as JSON escapes them (`\"`, `\n`) and a CSV cell doubles them.
_NL = rb"(?:\r?\n|\\n)[ \t]*(?:(?://|#)[ \t]*)?"
_Q = rb"(?:\"\"|\\\"|[\"'])"
_BREAK = linear(rb"\x01+|\\{1,2}" + _NL + rb"|" + _Q + rb"[ \t]*(?:\+[ \t]*)?(?:\\{0,2}" + _NL + rb"(?:\+[ \t]*)?)?" + _Q)
_KEY_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_ACROSS = 200  # characters either side of a break that a key joined over it is looked for in


@dataclass(frozen=True)
class Redactor:
    """Finds secrets in text and replaces them; counts what it replaced by kind."""

    allow: AllowList = field(default_factory=AllowList)

    def text(self, text: str, counts: Counter[str]) -> str:
        out, found = _cached(self.allow, text) if len(text) <= _CACHED_CHARS else _large(self.allow, text)
        counts.update(dict(found))
        return out

    def document(self, node: Any, counts: Counter[str]) -> Any:
        """A copy of a parsed JSON document with every string and key redacted, and every string value
        under a key that names a secret (`{"DB_PASSWORD": "..."}`) as if it were written `KEY: VALUE`."""
        if isinstance(node, str):
            return self.text(node, counts)
        if isinstance(node, dict):
            return dict(self._item(k, v, counts) for k, v in node.items())
        if isinstance(node, list | tuple):  # tuples: the frozen result records' sequences
            return [self.document(v, counts) for v in node]
        return node

    def _item(self, key: Any, value: Any, counts: Counter[str]) -> tuple[Any, Any]:
        """A key and its value; a token split between them (`{"ghp_AAAA": "BBBB"}`) is redacted in both halves."""
        k, v = self.text(key, counts) if isinstance(key, str) else key, self._value(key, value, counts)
        if k == key and v == value and isinstance(key, str) and isinstance(value, str) and _random_looking(key):
            joined = key + value
            for start, end, kind in _hits(self.allow, joined.encode("ascii", "replace"), joined, _DECODINGS):
                if start < len(key) < end:
                    counts[kind] += 1
                    return f"{key[:start]}[redacted: {kind}]", f"[redacted: {kind}]{value[end - len(key):]}"
        return k, v

    def _value(self, key: Any, value: Any, counts: Counter[str]) -> Any:
        if isinstance(key, str) and isinstance(value, list | tuple) and SECRET_KEY_NAME.fullmatch(key):
            # {"API_KEY": ["...", "..."]}: each string of the list is the key's value, as one would be
            return [self._value(key, v, counts) for v in value]
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


# The long texts redacted last, and their results: a run's long value (a tool's 50 MB dump) is redacted when the
# trace is read and again when the last pass checks each file that holds it (`render.verify`), in the same worker.
# Redacting it costs ~1 CPU-s per MB of base64, so the second time is looked up (an exact match of the text, not a
# hash). A result is a fixed point (redacting it again changes nothing, which the last pass relies on), so it is
# kept as its own result too. Bounded by characters held, the oldest dropped first.
_LARGE_CHARS = 128 * 1024 * 1024
_large_results: OrderedDict[tuple[AllowList, str], tuple[str, tuple[tuple[str, int], ...]]] = OrderedDict()


def _large(allow: AllowList, text: str) -> tuple[str, tuple[tuple[str, int], ...]]:
    if (known := _large_results.get((allow, text))) is not None:
        _large_results.move_to_end((allow, text))
        return known
    out, found = _redact(allow, text)
    _large_results[(allow, text)] = (out, found)
    if out != text:
        _large_results[(allow, out)] = (out, ())
    while sum(len(t) for _, t in _large_results) > _LARGE_CHARS and len(_large_results) > 1:
        _large_results.popitem(last=False)
    return out, found


def _redact(allow: AllowList, text: str) -> tuple[str, tuple[tuple[str, int], ...]]:
    """`text` with its secrets replaced, and how many of each kind."""
    # One byte per character (anything not ASCII becomes "?"), so a match's byte offsets are the text's.
    hits = _hits(allow, unseen_as_breaks(text).encode("ascii", "replace"), text, _DECODINGS)
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


def _hits(allow: AllowList, raw: bytes, text: str, decodings: int) -> list[tuple[int, int, str]]:
    """Every secret's (start, end, kind) that the allow-list does not keep, base64 runs that decode to one included."""
    found = [*_token_hits(raw), *_joined_hits(raw), *assignment_hits(raw, text),
             *(_encoded_hits(allow, raw, decodings) if decodings else ())]
    return [h for h in found if not allow.allows(text[h[0]:h[1]])]


def _encoded_hits(allow: AllowList, raw: bytes, decodings: int) -> Iterator[tuple[int, int, str]]:
    """Each base64 run whose decoded text holds a secret, found by the same detectors: the whole run is the hit.
    Only a run of both cases (base64 of text always has both; a digest, a hex constant or a snake_case name has
    not) that decodes to text (binary data does not) is scanned: one RE2 pass, and a decode per such run."""
    for start, end in _base64_runs(raw):
        run = raw[start:end]
        if run == run.lower() or run == run.upper():
            continue
        for plain in _decoded_texts(run.replace(b"\r", b"").replace(b"\n", b"")):
            if _hits(allow, plain.translate(_TO_ASCII), plain.decode("latin-1"), decodings - 1):
                yield start, end, ENCODED_KIND
                break


def _random_looking(key: str) -> bool:
    """A key that could be the first part of a token: long, with a digit, no space (field names have neither)."""
    return len(key) >= 8 and " " not in key and any(c.isdigit() for c in key)


def _joined_hits(raw: bytes) -> Iterator[tuple[int, int, str]]:
    """Keys split by a break (`_BREAK`) between two of their characters: the text around the breaks is scanned
    with them taken out, and each key that spans one is a hit from its first character to its last."""
    groups: list[list[tuple[int, int]]] = []  # breaks near enough that one key could span them all
    if b"\\" not in raw and b'"' not in raw and b"'" not in raw and b"\x01" not in raw:
        return
    for m in _BREAK.finditer(raw):
        s, e = m.span()
        if (e - s > 2 or raw[s] in (1, 92)) and s > 0 and e < len(raw) and raw[s - 1] in _KEY_CHARS and raw[e] in _KEY_CHARS:
            if groups and s - groups[-1][-1][1] < 2 * _ACROSS:
                groups[-1].append((s, e))
            else:
                groups.append([(s, e)])
    for group in groups:
        cuts = [max(0, group[0][0] - _ACROSS), *(c for b in group for c in b), min(len(raw), group[-1][1] + _ACROSS)]
        pieces = [raw[a:b] for a, b in zip(cuts[::2], cuts[1::2], strict=True)]
        at = list(accumulate(map(len, pieces), initial=0))  # where each piece starts in the joined text
        for s, e, kind in _token_hits(b"".join(pieces)):
            if any(s < j < e for j in at[1:-1]):
                yield _unjoined(cuts, at, s), _unjoined(cuts, at, e - 1) + 1, kind


def _unjoined(cuts: list[int], at: list[int], j: int) -> int:
    """Offset `j` of the joined text as an offset of the text: piece i is `raw[cuts[2i]:cuts[2i+1]]`."""
    i = bisect_right(at, j) - 1
    return cuts[2 * i] + j - at[i]


def _base64_runs(raw: bytes) -> Iterator[tuple[int, int]]:
    """(start, end) of each base64 run; lines that a tool wrapped (`base64`, PEM: full lines of a multiple of 4
    characters, no padding) are one run over them, newlines and all."""
    start = end = last = -1
    for at, stop in _base64_lines(raw):
        if at - end in (1, 2) and raw[end:at] in (b"\n", b"\r\n") and (end - last) % 4 == 0 and end - last >= _WRAPPED \
                and raw[end - 1] != 61:  # 61: `=`, padding ends the encoded text
            end, last = stop, at
            continue
        if start >= 0:
            yield start, end
        start, end, last = at, stop, at
    if start >= 0:
        yield start, end


def _base64_lines(raw: bytes) -> Iterator[tuple[int, int]]:
    """(start, end) of each run of 20 or more base64 characters, its padding included (as `_windows` finds runs)."""
    flat = raw.translate(_BASE64_TO_A)
    i = flat.find(_BASE64_RUN)
    while i >= 0:
        end = flat.find(b" ", i)
        end = len(flat) if end < 0 else end
        stop = end + len(raw[end:end + 2]) - len(raw[end:end + 2].lstrip(b"="))
        yield i, stop
        i = flat.find(_BASE64_RUN, end)


def _decoded_texts(run: bytes) -> Iterator[bytes]:
    """What `run` decodes to at each of the four alignments (a run glued to a word starts mid-quantum), where
    that is text: 90% or more of it printable ASCII (its first `_PEEK` characters are looked at first)."""
    run = run.rstrip(b"=").translate(_URL_SAFE)
    for skip in range(4):
        body = run[skip:]
        body = body[:len(body) - 1] if len(body) % 4 == 1 else body
        if len(body) > _PEEK and not _text(_decoded(body[:_PEEK])):
            continue
        plain = _decoded(body)
        if _text(plain):
            yield plain


def _decoded(body: bytes) -> bytes:
    try:
        return binascii.a2b_base64(body + b"=" * (-len(body) % 4), strict_mode=True)
    except binascii.Error:
        return b""


def _text(plain: bytes) -> bool:
    return bool(plain) and len(plain.translate(None, _TEXT_BYTES)) * 10 <= len(plain)


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
