"""Secrets found by the name they are given: `DB_PASSWORD=...`, `"api_key":"..."`, `--password ...`,
`Authorization: token ...`, `os.environ['API_KEY'] = '...'`, `os.environ.setdefault('API_KEY', '...')`,
`<password>...</password>`, wherever on a line they stand (`cd /app && PGPASSWORD=... psql`,
`# SIGNING_KEY=...`, `INFO config: db_password: ...`, compact JSON). Which values are secrets is
`secret_value`'s rule; every pattern is RE2 (linear time), run over the one-byte-per-character form of the
text (`redact.py`). docs/security.md lists every form, and what is not found.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from .secretrules import linear

ASSIGNMENT_KIND = "secret-assignment"
# A key ENDS in a word naming a secret: `DB_PASSWORD`, `GITHUB_TOKEN`, `SIGNING_KEY`, `client_secret`, and
# `MYSQL_PWD`/`SMTP_PASS` after a separator (`PWD` alone is the shell's folder, `bypass` is no password);
# not `max_tokens` or `token_count`, whose key names a count.
_KEY_WORDS = (r"(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|API[_-]?KEY|APIKEY|CREDENTIALS?|DSN|"
              r"(?:PRIVATE|ACCESS|SECRET|SIGNING|ENCRYPTION|MASTER|CLIENT|SESSION|ACCOUNT|SERVICE|DEPLOY|WEBHOOK|HMAC|"
              r"JWT|LICENSE|AUTH)[_-]?KEY)")
SECRET_KEY = rf"(?:[A-Za-z0-9_.-]*?{_KEY_WORDS}|[A-Za-z0-9_.-]*[_.-](?:PWD|PASS))"
SECRET_KEY_NAME = re.compile(SECRET_KEY, re.I)  # a JSON object's key, matched whole (`Redactor.document`)
# A quote as text holds it: plain, doubled inside a CSV cell (`""`), or escaped inside a JSON string (`\"`).
_QUOTE = r"(?:\"\"|\\\"|\"|')"
_QUOTED = r"\"\"[^\"\r\n]*\"\"|\\\"[^\"\r\n\\]*\\\"|\"[^\"\r\n]*\"|'[^'\r\n]*'"  # one quoted value, as _QUOTE quotes it
_VALUE = "(" + _QUOTED + r"|[^\s\"'`=,;&)}\]\\][^\s\"'`,;&)}\]\\]*)"
# Anywhere on a line: an optionally quoted key (or a subscript, `os.environ['KEY']`), `=`, `:`, `:=` or `=>`,
# and one quoted or unquoted value.
_ANYWHERE = linear(rf"({SECRET_KEY}){_QUOTE}?\]?[ \t]*(?::=|=>|=|:)[ \t]*{_VALUE}".encode(), "i")
# A call that sets or reads a variable with a default: `os.environ.setdefault('KEY', '...')`, `os.putenv`,
# `monkeypatch.setenv`, `os.getenv('KEY', '...')`; only a quoted value (`setdefault('KEY', token)` is code).
_PAIR = linear(rf"(?:setdefault|putenv|setenv|getenv|get|pop)\([ \t]*{_QUOTE}({SECRET_KEY}){_QUOTE}[ \t]*,[ \t]*"
               rf"({_QUOTED})".encode(), "i")
# A `.env` or shell line: the whole rest of the line is the value (`DB_PASSWORD=correct horse battery`).
_LINE = linear(rf"(?m)^[ \t]*(?:export[ \t]+|set[ \t]+)?[\"']?({SECRET_KEY})[\"']?[ \t]*[:=][ \t]*"
               r"([^\r\n]*?)[ \t]*[,;]?[ \t]*$".encode(), "i")
# An XML element: `<password>...</password>`, `<apiToken>...</apiToken>` (a settings.xml, a SOAP body).
_ELEMENT = linear(rf"<({SECRET_KEY})>([^<\r\n]+)</".encode(), "i")
# A command-line option: `--password=...`, `--db-password ...`, `--api-key ...`.
_FLAG = linear(br"(?:--|(?:^|[^A-Za-z0-9_-])-)((?:[a-z0-9]+-)*(?:password|passwd|passphrase|pwd|token|secret|api-?key|"
               br"access-key|secret-key|auth-token|private-key))(?:=|[ \t]+)"
               br"(\"[^\"\r\n]*\"|'[^'\r\n]*'|[^\s\"'`,;&)}\]\\-][^\s\"'`,;&)}\]\\]*)", "i")
# An HTTP Authorization header of any scheme (`token <40 hex>`, the legacy GitHub form, included).
_HEADER = linear(br"authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:(?:basic|bearer|token|digest|apikey|api-key)[ \t]+)?"
                 br"([A-Za-z0-9._~+/=:-]{8,})", "i")
_NEEDLES = (b"passw", b"passphrase", b"secret", b"token", b"key", b"credential", b"pwd", b"pass", b"dsn", b"authorization")

_REFERENCE = re.compile(r"[$%{<(\[]|os\.|getenv|environ")  # a variable, template, placeholder or code, not a value
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*)\(")  # `getpass()`, `os.getenv(...)`: code, not a value
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+")
# A number, with a unit a log writes after it (`4096`, `12.5ms`, `8KB`, `2.1GB/s`, `1e-5`): a measure, not a value.
_MEASURE = re.compile(r"[~+-]?[0-9][0-9.,_]*(?:e[+-]?[0-9]+)?[ ]?(?:[kmgtp]?i?b(?:/s)?|[mun]?s|us|%|x|[kmgtp]?flops?|"
                      r"[kmgt]?hz|tok(?:ens)?/s|it/s)?", re.I)
_NOT_A_VALUE = {"", "none", "null", "nil", "true", "false", "undefined", "required", "optional", "str", "string"}


def secret_value(key: str, value: str) -> tuple[int, int] | None:
    """Where the secret is in `value`, assigned to a key that names one; None when it is not a value.

    Never a secret: an empty value, a reference (`$VAR`, `${...}`, `<your key>`, `os.environ[...]`, a call),
    a placeholder (`***`, `xxxx`) or a word such as `none`. An ALL-CAPS key (`.env`, shell) holds a secret
    whatever else it is; any other key (code, YAML, JSON) only a quoted string or a word with a digit or a
    symbol in it and no measure, so `pad_token = tokenizer.eos_token`, `token = 12` and `first_token: 12.5ms` stay.
    """
    start, end = 0, len(value)
    quoted = False
    for q in ('""', '\\"', '"', "'"):  # the outer quotes, as a CSV cell or a JSON string writes them
        if end >= 2 * len(q) and value.startswith(q) and value.endswith(q):
            start, end, quoted = len(q), end - len(q), True
            break
    inner = value[start:end]
    if inner.strip().lower() in _NOT_A_VALUE or _REFERENCE.match(inner) or set(inner) <= set("*xX.-_ ") \
            or (not quoted and (call := _CALL.match(inner)) and _code_name(call.group(1))):
        return None
    if key.upper() != key and not quoted and (_code_name(inner) or _MEASURE.fullmatch(inner) or " " in inner):
        return None
    return start, end


def _code_name(text: str) -> bool:
    """A name in code (`tokenizer.eos_token`, `getpass`, `apiToken`), not a key: dotted, or an identifier without
    a digit whose words (split at `_` and where case turns upper) are three letters long on average, or that is
    short; random letters (`xKqLmPzRtWvN`: words of one or two) are a key."""
    if not _IDENTIFIER.fullmatch(text) or ("." not in text and any(c.isdigit() for c in text)):
        return False
    words = _WORDS.findall(text)
    return "." in text or len(text) < 8 or len(text) >= 3 * len(words)


def assignment_hits(raw: bytes, text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, kind) of each value that a key, option or header names as a secret."""
    lowered = raw.lower()
    if not any(n in lowered for n in _NEEDLES):
        return
    # (pattern, its key group or 0: the header, which names no key, caps: the key's case does not
    # matter, as a shell option or header always holds a secret; a header value must have a digit, so
    # `authorization: completed` in prose stays)
    for pattern, key_group, caps in ((_LINE, 1, False), (_ANYWHERE, 1, False), (_PAIR, 1, False), (_ELEMENT, 1, False),
                                     (_FLAG, 1, True), (_HEADER, 0, True)):
        value_group = key_group + 1
        for m in pattern.finditer(raw):
            value_start, value_end = m.span(value_group)
            value = text[value_start:value_end]
            key = m.group(key_group).decode("ascii", "replace") if key_group else "AUTHORIZATION"
            if pattern is _ANYWHERE and _prose(raw, m, key, value):
                continue
            span = secret_value(key.upper() if caps else key, value)
            if span is not None and span[1] > span[0] and (key_group or any(c.isdigit() for c in value)):
                yield value_start + span[0], value_start + span[1], ASSIGNMENT_KIND


def _prose(raw: bytes, m: Any, key: str, value: str) -> bool:
    """`per token: 16*4=64` is a sentence, not YAML. Mid-line, an unquoted lower-case key and `:` make an
    assignment when the key is a name in code or config (`db_password: ...`, `api-key: ...`, `clientSecret:`);
    a plain word (`token`, `password`) only when its value reads as one: six characters or more, a digit among
    them and no arithmetic (`loaded password: hunter2-x` is one; `secret: warp-level`, `per token: 2*16` are not)."""
    between = raw[m.end(1):m.start(2)]
    quoted = raw[m.start(1) - 1:m.start(1)] in (b'"', b"'") or raw[m.start(2):m.start(2) + 1] in (b'"', b"'", b"\\")
    if b":" not in between or b"=" in between or key.upper() == key or quoted or not (key.isalpha() and key.islower()):
        return False
    return len(value) < 6 or not any(c.isdigit() for c in value) or any(c in "*/=+~<>" for c in value)
