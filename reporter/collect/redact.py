"""Secret redaction: API keys and tokens in a trace never reach a published page or download.

A trace is text a model and a harness wrote, and agents paste credentials into prompts, tool arguments
and logs. Every string of a trace (and of a cached validation result shown beside it) is scanned with
detect-secrets' regex plugins (maintained detectors for AWS, GitHub, Slack, Stripe, JWTs, ...; the
entropy and keyword plugins are left out, they flag ordinary kernel code) plus patterns for the key
shapes agents handle most (OpenAI/Anthropic `sk-`, GitHub `ghp_`/`github_pat_`, AWS `AKIA`, Hugging
Face `hf_`, Slack `xox?-`, `Bearer` headers, private key blocks), plus `.env`-style assignments whose key
names a secret (`DB_PASSWORD=...`, `api_key: "..."`, and a JSON object's value under such a key). Each hit
becomes `[redacted: <kind>]`; newlines inside it are kept, so line numbers on the page still match the
source. Results are cached by content (a trace repeats the same short strings many times).

Only what is published is redacted: `collect` keeps the original trace for validation, whose cache key
and executed kernel must not change. An allow-list (`DATA/redact-allow.txt`) keeps known non-secrets:
one entry per line, a literal that a detected secret must equal, or `re:PATTERN` that it must match in
full; blank lines and `#` comments are skipped.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..core.errors import CollectError
from ..core.records import ValidationResult
from ..core.safeio import read_bounded

ALLOW_FILE = "redact-allow.txt"
_ALNUM_TO_A = bytes(ord("a") if chr(b).isascii() and chr(b).isalnum() else ord(" ") for b in range(256))
_RUN = b"a" * 16  # a run of 16 letters or digits: every key's random part has one
_CONTEXT = 100  # characters around a candidate token that the detectors see
_MIN_GROUP = 8  # a capture group shorter than this is a prefix (e.g. "ghp"), not the secret: take the match
_RANDOM = r"(?=[A-Za-z0-9_-]*[0-9])(?=[A-Za-z0-9_-]*[A-Za-z])"  # a key body mixes letters and digits

# Ours first: on overlapping hits the longest wins, and on a tie the earlier kind names it.
KEY_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private-key", re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY-----|.*\Z)", re.S)),
    ("anthropic-key", re.compile(rf"\bsk-ant-{_RANDOM}[A-Za-z0-9_-]{{20,}}")),
    ("openai-key", re.compile(rf"\bsk-(?:proj-|svcacct-|admin-)?{_RANDOM}[A-Za-z0-9_-]{{20,}}")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b")),
    ("huggingface-token", re.compile(rf"\bhf_{_RANDOM}[A-Za-z0-9]{{30,}}")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("bearer-token", re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)")),
)
# detect-secrets plugins left out: entropy/keyword (not regex-based) and public IPs (not secrets).
_SKIPPED_PLUGINS = {"IPPublicDetector"}

# `KEY=VALUE` / `KEY: VALUE` lines (.env files, shell exports, YAML, JSON) whose key ENDS in a word naming a
# secret: `DB_PASSWORD=`, `GITHUB_TOKEN=`, `OPENAI_API_KEY:`, `"client_secret":`; not `max_tokens=` or
# `token_count =`, whose key names a count. Which values are secrets is `secret_value`'s rule.
ASSIGNMENT_KIND = "secret-assignment"
_SECRET_KEY = (r"[A-Za-z0-9_.-]*?(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|API[_-]?KEY|APIKEY|PRIVATE[_-]?KEY|"
               r"ACCESS[_-]?KEY|SECRET[_-]?KEY|CREDENTIALS?)")
_SECRET_KEY_NAME = re.compile(_SECRET_KEY, re.I)
_ASSIGNMENT = re.compile(rf"(?im)^[ \t]*(?:export[ \t]+|set[ \t]+)?[\"']?(?P<key>{_SECRET_KEY})[\"']?[ \t]*[:=][ \t]*"
                         r"(?P<value>[^\r\n]*?)[ \t]*[,;]?[ \t]*$")
_ASSIGNMENT_NEEDLES = ("passw", "passphrase", "secret", "token", "key", "credential")
_REFERENCE = re.compile(r"[$%{<(\[]|os\.|getenv|environ")  # a variable, template, placeholder or code, not a value
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_NOT_A_VALUE = {"", "none", "null", "nil", "true", "false", "undefined", "required", "optional", "str", "string"}


def secret_value(key: str, value: str) -> tuple[int, int] | None:
    """Where the secret is in `value`, assigned to a key that names one; None when it is not a value.

    Never a secret: an empty value, a reference (`$VAR`, `${...}`, `<your key>`, `os.environ[...]`, a call),
    a placeholder (`***`, `xxxx`) or a word such as `none`. An ALL-CAPS key (`.env`, shell) holds a secret
    whatever else it is; any other key (code, YAML, JSON) only a quoted string or a word with a digit or a
    symbol in it, so `pad_token = tokenizer.eos_token` and `token = 12` stay.
    """
    start, end = 0, len(value)
    quoted = end >= 2 and value[0] == value[-1] and value[0] in "\"'"
    if quoted:
        start, end = 1, end - 1
    inner = value[start:end]
    if inner.strip().lower() in _NOT_A_VALUE or _REFERENCE.match(inner) or set(inner) <= set("*xX.-_ ") \
            or ("(" in inner and not quoted):
        return None
    code_name = _IDENTIFIER.fullmatch(inner) and ("." in inner or not any(c.isdigit() for c in inner))
    if key.upper() != key and not quoted and (code_name or inner.lstrip("-").isdigit() or " " in inner):
        return None
    return start, end


@lru_cache(maxsize=1)
def detectors() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Our key shapes, then every regex plugin of detect-secrets as (kind, pattern)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector
    found = list(KEY_SHAPES)
    plugins: dict[str, type] = get_mapping_from_secret_type_to_class()
    for secret_type, plugin in sorted(plugins.items()):
        if issubclass(plugin, RegexBasedDetector) and plugin.__name__ not in _SKIPPED_PLUGINS:
            kind = re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")
            found.extend((kind, pattern) for pattern in plugin().denylist)
    return tuple(found)


def _span(m: re.Match[str]) -> tuple[int, int]:
    groups = [i for i in range(1, (m.re.groups or 0) + 1) if m.group(i) and len(m.group(i)) >= _MIN_GROUP]
    if groups:
        best = max(groups, key=lambda i: len(m.group(i)))
        return m.span(best)
    return m.span()


@dataclass(frozen=True)
class AllowList:
    literals: frozenset[str] = frozenset()
    patterns: tuple[re.Pattern[str], ...] = ()

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
                patterns.append(re.compile(entry[3:]))
            except re.error as exc:
                errors.append(CollectError(path, f"line {n}", f"not a valid regular expression: {exc}"))
        else:
            literals.add(entry)
    return AllowList(frozenset(literals), tuple(patterns)), errors


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
        if isinstance(key, str) and isinstance(value, str) and _SECRET_KEY_NAME.fullmatch(key) \
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
    hits = []
    for kind, pattern, offset, part in _scans(text):
        for m in pattern.finditer(part):
            start, end = _span(m)
            if end > start and not allow.allows(part[start:end]):
                hits.append((offset + start, offset + end, kind))
    hits.extend(h for h in _assignments(text) if not allow.allows(text[h[0]:h[1]]))
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


def _assignments(text: str) -> list[tuple[int, int, str]]:
    """`KEY=VALUE` lines whose key names a secret; the regular expression runs only where a key word occurs."""
    lowered = text.lower()
    if not any(n in lowered for n in _ASSIGNMENT_NEEDLES):
        return []
    found = []
    for m in _ASSIGNMENT.finditer(text):
        span = secret_value(m["key"], m["value"])
        if span is not None:
            found.append((m.start("value") + span[0], m.start("value") + span[1], ASSIGNMENT_KIND))
    return found


def _windows(text: str) -> list[tuple[int, int]]:
    """Stretches of `text` around every place a secret could be, merged; usually a small part of the text.

    Running ~50 detectors over all of a large trace costs about a second per MB. Every detector's secret
    is random enough to hold a run of 16+ letters and digits (identifiers are broken up by `_` and `.`),
    or follows a URL's `://` (basic auth) or `bearer`; private keys are searched apart. detect-secrets
    itself scans line by line, and its keyword detectors look only a few dozen characters back, so a
    window of the token's neighbourhood gives the same hits.
    """
    # One byte per character (anything not ASCII becomes "?"), so byte offsets are text offsets; the
    # C-level translate/find beat a regular expression over the text by about 20x.
    raw = text.encode("ascii", "replace")
    flat = raw.translate(_ALNUM_TO_A)
    spans: list[tuple[int, int]] = []
    i = flat.find(_RUN)
    while i >= 0:
        end = flat.find(b" ", i)
        end = len(flat) if end < 0 else end
        spans.append((i, end))
        i = flat.find(_RUN, end)
    for needle, haystack in ((b"://", raw), (b"bearer", raw.lower())):
        i = haystack.find(needle)
        while i >= 0:
            spans.append((i, i + len(needle)))
            i = haystack.find(needle, i + 1)
    windows: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        start, end = max(0, s - _CONTEXT), min(len(text), e + _CONTEXT)
        if windows and start <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(end, windows[-1][1]))
        else:
            windows.append((start, end))
    return windows


def _scans(text: str) -> Iterator[tuple[str, re.Pattern[str], int, str]]:
    """(kind, pattern, offset, part): each detector over each window; private key blocks over the whole text."""
    if "PRIVATE KEY" in text:
        yield KEY_SHAPES[0][0], KEY_SHAPES[0][1], 0, text
    for start, end in _windows(text):
        part = text[start:end]
        for kind, pattern in detectors()[1:]:
            yield kind, pattern, start, part


def _merge(hits: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Overlapping hits as one span each, named by the longest of them (the first listed on a tie); a key's
    shape always names it before an assignment does, so `HF_TOKEN=hf_...` counts as a Hugging Face token."""
    order = {kind: i for i, (kind, _) in enumerate(detectors())} | {ASSIGNMENT_KIND: len(detectors())}
    hits.sort(key=lambda h: (h[0], -(h[1] - h[0]), order[h[2]]))
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
