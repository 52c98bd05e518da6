"""The secret detectors the redactor runs, every one compiled with google-re2 (linear time in the text).

Three sources, in the order that names a hit when two find the same span: our own key shapes (the
keys agents handle most, with the checks the shapes need), the token formats of gitleaks' rule list
(kept as data in `gitleaks-rules.toml`, its source and licence named there), then every regex plugin of
detect-secrets (rewritten where it used look-around, which RE2 does not have: the rewrite keeps what the
plugin matches and lets the capture group pick the secret).

Each pattern runs on bytes in which every character is one byte (see `redact.py`), so a match's offsets
are the text's. Two changes apply to every token rule, because an agent's text is not a source file:
a leading `\\b` is dropped (a key glued to a word, `run_sk-proj-...`, is still a key), and so is a
trailing "followed by a quote, space or end" group (a key followed by `.` or `)` is still a key); a hit
is then extended over the letters and digits that follow it, so no tail of a longer key is left shown.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import tomllib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import re2

GITLEAKS_RULES = Path(__file__).with_name("gitleaks-rules.toml")
_KEYWORD_MIN = 3  # shorter keywords ("ey", "sk") occur in every English line: those rules run on key-like runs only


@dataclass(frozen=True)
class Rule:
    """One detector: `kind` names what it found; the secret is the longest capture group of 8+ characters
    (else the whole match), kept only when `check` accepts it and its entropy reaches `entropy`."""

    kind: str
    pattern: Any  # a compiled re2 pattern over bytes
    keywords: tuple[bytes, ...] = ()  # lower-cased; empty: runs on every window
    entropy: float = 0.0
    allow: tuple[Any, ...] = ()  # re2 patterns over bytes: a secret one matches whole is a known example
    check: Callable[[bytes], bool] | None = None

    def accepts(self, secret: bytes) -> bool:
        if self.entropy and shannon(secret) < self.entropy:
            return False
        if any(p.fullmatch(secret) for p in self.allow):  # whole: gitleaks' search would let `hvs.<...s.ABC...>` pass
            return False
        return self.check is None or self.check(secret)


def linear(pattern: str | bytes, flags: str = "") -> Any:
    """`pattern` compiled with RE2 (no backtracking, so linear in the text); re2.error when it needs a
    feature only a backtracking engine has (look-around, back-references)."""
    options = re2.Options()
    options.log_errors = False  # the caller reports a bad pattern its own way
    options.max_mem = 64 << 20  # a larger DFA cache for the big alternations; a pattern past it falls back to the NFA
    if "i" in flags:
        options.case_sensitive = False
    return re2.compile(pattern, options)


def shannon(data: bytes) -> float:
    if not data:
        return 0.0
    n = len(data)
    return -sum(c / n * math.log2(c / n) for c in Counter(data).values())


def _mixed(secret: bytes) -> bool:
    """A key body mixes letters and digits (`sk-` followed by a word is prose, not a key)."""
    return any(48 <= b <= 57 for b in secret) and any(65 <= b <= 90 or 97 <= b <= 122 for b in secret)


def _mixed_body(secret: bytes) -> bool:
    """The random part after a vendor prefix (`gsk_`, `r8_`, `key-`) mixes letters and digits."""
    return _mixed(re.split(rb"[_-]", secret, maxsplit=1)[-1])


def _upper_hex(secret: bytes) -> bool:
    return any(65 <= b <= 70 for b in secret[7:])


def _basic_credentials(secret: bytes) -> bool:
    """`Basic X` is a credential when X is base64 of `user:password` (not the word after "basic"). Base64 holds
    `/`, so a path can run on after it (`.../Basic dTpw.../trace.json`): X may be any part that ends at a `/`."""
    cuts = [len(secret)] + [i for i in range(len(secret) - 1, 7, -1) if secret[i:i + 1] == b"/"]
    return any(_decodes_to_credentials(secret[:cut]) for cut in cuts)


def _decodes_to_credentials(part: bytes) -> bool:
    try:
        plain = base64.b64decode(part + b"=" * (-len(part) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in plain and all(32 <= b < 127 for b in plain)


# Ours: (kind, pattern, check, keywords). RE2 syntax; `(?s)` where a body spans lines. The keywords (a key's
# prefix) open a window wherever they occur, so a key whose random part has no 16-letter run is still seen.
_SHAPES: tuple[tuple[str, str, Callable[[bytes], bool] | None, tuple[str, ...]], ...] = (
    ("private-key", r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|\z)", None, ()),
    ("putty-private-key", r"PuTTY-User-Key-File-[0-9]+:(?s:.*?)(?:Private-(?:MAC|Hash):[ \t]*[0-9A-Fa-f]+|\z)", None, ()),
    ("anthropic-key", r"sk-ant-[A-Za-z0-9_-]{20,}", _mixed, ("sk-ant-",)),
    ("openai-key", r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", _mixed, ("sk-",)),
    ("github-token", r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})", None,
     ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    ("aws-access-key", r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}", None, ("akia", "asia", "abia", "acca")),
    ("huggingface-token", r"hf_[A-Za-z0-9]{30,}", _mixed, ("hf_",)),
    ("slack-token", r"xox[abposr]-[A-Za-z0-9-]{10,}", None, ("xox",)),
    ("google-api-key", r"AIza[0-9A-Za-z_-]{35}", None, ("aiza",)),
    ("npm-token", r"npm_[A-Za-z0-9]{36}", None, ("npm_",)),
    ("json-web-token", r"eyJ[A-Za-z0-9_-]{5,}\.ey[A-Za-z0-9_-]{5,}(?:\.[A-Za-z0-9_-]*)?", None, ("eyj",)),
    ("bearer-token", r"(?i)bearer[ \t]+([A-Za-z0-9._~+/-]{16,}=*)", None, ("bearer",)),
    ("basic-auth-header", r"(?i)basic[ \t]+([A-Za-z0-9+/]{8,}={0,2})", _basic_credentials, ("basic",)),
    ("url-credential", r"[A-Za-z][A-Za-z0-9+.-]*://([A-Za-z0-9._~%!$&'*+,;=-]{16,})@", _mixed, ("://",)),
    ("groq-api-key", r"gsk_[A-Za-z0-9]{52}", _mixed_body, ("gsk_",)),
    ("replicate-api-token", r"r8_[A-Za-z0-9]{37}", _mixed_body, ("r8_",)),
    ("mailgun-api-key", r"key-[0-9a-fA-F]{32}", _mixed_body, ("key-",)),  # gitleaks' rule wants "mailgun" before it
    # An Azure shared access signature: the URL-encoded base64 HMAC after `sig=` (the other fields are not secret).
    ("azure-sas-token", r"sig=([A-Za-z0-9%+/_-]{30,}=*)", _mixed, ("sig=",)),
    # gitleaks' three rules take lower-case hex and name the token by its prefix; this one takes the rest.
    ("digitalocean-token", r"do[opr]_v1_[0-9a-fA-F]{64}", _upper_hex, ("dop_v1_", "doo_v1_", "dor_v1_")),
    # A docker config.json: `"auths": {"registry": {"auth": "<base64 of user:password>"}}`
    # (quoted as JSON writes it, escaped inside a string, or doubled in a CSV cell).
    ("docker-config-auth", r'auth(?:\\?"|"")[ \t]*:[ \t]*(?:\\?"|"")([A-Za-z0-9+/]{8,}={0,2})', _decodes_to_credentials,
     ('auth"', 'auth\\"')),
)
KEY_BLOCKS = ("private-key", "putty-private-key")  # multi-line: searched over the whole text, not windows
_BLOCK_NEEDLES = (b"PRIVATE KEY", b"PuTTY-User-Key-File")

# detect-secrets plugins left out: entropy/keyword (not regex-based) and public IPs (not secrets).
_SKIPPED_PLUGINS = {"IPPublicDetector"}
# Look-around RE2 lacks, rewritten: a look-behind for a non-word character becomes that character,
# matched (the capture group still holds the secret); a look-ahead past the end of a key is dropped.
_REWRITES = ((r"(?:(?<=\W)|(?<=^))", r"(?:^|\W)"), ("{50,1024}", "{50,1000}"))
_LOOKAHEAD = re.compile(r"\(\?!(?:[^()\\]|\\.)*\)")  # `(?!\w)`, `(?![a-f0-9])`: dropped
# gitleaks' "followed by a quote, a space or the end" groups, and a word boundary, at a rule's end.
_TERMINATORS = (r"""(?:[\x60'"\s;]|\\[nr]|$|\b)""", r"""(?:[\x60'"\s;]|\\[nr]|$)""", r"(?:[^\w-]|\z)",
                r"(?:[^a-zA-Z0-9+/]|\z)", r"\b")


def loosen(pattern: str) -> str:
    """A token rule without its leading word boundary and trailing terminator (see the module's doc)."""
    for prefix in ("(?i)\\b", "\\b"):
        if pattern.startswith(prefix):
            pattern = prefix[:-2] + pattern[len(prefix):]
            break
    for end in _TERMINATORS:
        if pattern.endswith(end):
            return pattern[: -len(end)]
    return pattern


def _kind(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _detect_secrets() -> list[Rule]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector
    found = []
    plugins: dict[str, type] = get_mapping_from_secret_type_to_class()
    for secret_type, plugin in sorted(plugins.items()):
        if issubclass(plugin, RegexBasedDetector) and plugin.__name__ not in _SKIPPED_PLUGINS:
            for p in plugin().denylist:
                source = p.pattern
                for old, new in _REWRITES:
                    source = source.replace(old, new)
                source = _LOOKAHEAD.sub("", source)
                flags = "i" if p.flags & re.IGNORECASE else ""
                found.append(Rule(_kind(secret_type), linear(loosen(source).encode(), flags)))
    return found


def _gitleaks() -> list[Rule]:
    doc = tomllib.loads(GITLEAKS_RULES.read_text(encoding="utf-8"))
    return [Rule(str(r["id"]), linear(loosen(r["regex"]).encode()),
                 tuple(k.encode() for k in r.get("keywords", []) if len(k) >= _KEYWORD_MIN)
                 if all(len(k) >= _KEYWORD_MIN for k in r.get("keywords", [])) else (),
                 float(r.get("entropy", 0)),
                 tuple(linear(a.encode()) for al in r.get("allowlists", []) for a in al.get("regexes", [])))
            for r in doc["rules"]]


@lru_cache(maxsize=1)
def rules() -> tuple[Rule, ...]:
    """Every detector, ours first (the order names a hit two of them find)."""
    ours = [Rule(kind, linear(loosen(p).encode()), tuple(k.encode() for k in words), check=check) for kind, p, check, words in _SHAPES]
    return (*ours, *_gitleaks(), *_detect_secrets())


@lru_cache(maxsize=1)
def keyword_finder() -> Any:
    """One RE2 alternation of every rule's keywords: a single pass over a text finds where any could be."""
    words = sorted({k for r in rules() for k in r.keywords})
    return linear(b"|".join(re.escape(w.decode()).encode() for w in words), "i")


def block_rules() -> tuple[Rule, ...]:
    return tuple(r for r in rules() if r.kind in KEY_BLOCKS)


def block_needed(raw: bytes) -> bool:
    return any(n in raw for n in _BLOCK_NEEDLES)


# A character that shows as nothing or as U+FFFD (a lone surrogate, a zero-width or direction mark): the redactor
# reads it as a break a key may go on past (a key split by one is still found).
_UNSEEN = dict.fromkeys([*range(0xD800, 0xE000), 0xFFFD, *range(0x200B, 0x2010), 0x2060, 0xFEFF, 0xAD], "\x01")


def unseen_as_breaks(text: str) -> str:
    """`text` with each such character as byte 1. Looked for first: mapping every character costs ~0.2 s a MB."""
    if text.isascii():
        return text
    shown = any(chr(c) in text for c in (0xFFFD, *range(0x200B, 0x2010), 0x2060, 0xFEFF, 0xAD))
    lone = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace") != text  # a lone surrogate
    return text.translate(_UNSEEN) if shown or lone else text
