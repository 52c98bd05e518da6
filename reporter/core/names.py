"""Collision-free, file-name-safe slugs for anything that becomes a page or download name.

Public API (pure functions, no I/O):

- ``unique_slugs(names) -> dict[name, str]``: every distinct name mapped to a slug that no other name in
  the set shares. Use it for every family of names that shares a folder on the site: run ids, models,
  benchmark/configuration groups, problem files. A composite key (benchmark, configuration, model) is
  passed as a tuple, never a joined string, so that the whole key is unique (no character inside a
  part can move a boundary between parts); ``shown`` spells each part for the slug (e.g. an empty part
  as "unknown") without changing which key it is.
- ``path_id(text) -> str``: a path as printable text, reversibly: ``\\`` doubled, each byte that is not
  UTF-8 as ``\\xNN``; two different paths never give the same id.
- ``slug(name) -> str``: the slug of one name on its own (bounded length, never empty); used where no
  set of names is known. Two different names can share it; ``unique_slugs`` is what keeps them apart.

The rules:

- A slug is lowercase ASCII letters, digits, ``.`` and ``-``; it never starts with ``_`` or ``.``
  (GitHub Pages' Jekyll drops such files) and is never empty (``x``).
- When two different names give the same plain slug (after case-folding and replacing punctuation),
  each of them gets ``_`` plus a short hash of the name itself appended, except the one name (if any)
  that already *is* its plain slug. ``_`` never occurs in a plain slug, so a suffixed slug can never
  equal another name's plain slug. The parts of a composite key are joined with ``--`` in the slug,
  which a single part's slug never contains.
- Stable: a name's slug depends only on the names it collides with, never on input order, so adding an
  unrelated name renames nothing.
- Bounded: a slug is at most ``MAX_SLUG_BYTES`` bytes. A longer name is cut and always carries the
  hash suffix (the cut loses what told two long names apart), so a page name such as
  ``models/<slug>.html`` stays far below the 255-byte file name limit of common file systems.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import TypeVar

# The longest slug; three joined slugs plus ".kernel.py" still fit in a 255-byte file name.
MAX_SLUG_BYTES = 60
HASH_CHARS = 8
KEY_SEPARATOR = "\x1f"  # joins a composite key's parts, each escaped first, into the text that is hashed
_UNSAFE = re.compile(r"[^a-z0-9.]+")
_LONG_RUN = re.compile(r"[a-z0-9]{20,}")
Name = TypeVar("Name", str, tuple[str, ...])

__all__ = ["KEY_SEPARATOR", "MAX_SLUG_BYTES", "hidden_characters", "path_id", "slug", "unique_slugs", "visible"]


def path_id(text: str) -> str:
    """A path (as `os.fsdecode` gives it) as text safe to print and to write, reversibly: a backslash is
    doubled, each byte that is not UTF-8 shows as `\\xNN` (a folder named `\\xff` and one named with the byte
    0xff keep different ids), and each invisible or direction-changing character as `\\uXXXX` (`visible`)."""
    return visible(os.fsencode(text.replace("\\", "\\\\")).decode("utf-8", "backslashreplace"))


def _hidden(ch: str) -> bool:
    # Format characters (zero-width spaces and joiners, bidi overrides and isolates, the BOM, soft hyphens)
    # and control characters: a name holding one looks like another name, or reorders the text around it.
    return unicodedata.category(ch) in ("Cf", "Cc")


def visible(text: str) -> str:
    """`text` with every invisible or direction-changing character written as `\\uXXXX`, so `Kimi-K2.6` and
    `Kimi-K2.6` + U+200B read differently, and a right-to-left override reorders nothing."""
    return "".join(f"\\u{ord(ch):04x}" if _hidden(ch) else ch for ch in text) if any(map(_hidden, text)) else text


def hidden_characters(text: str) -> list[str]:
    """The invisible or direction-changing characters of `text`, named (`U+200B ZERO WIDTH SPACE`), once each."""
    return [f"U+{ord(ch):04X} {unicodedata.name(ch, 'control character')}" for ch in dict.fromkeys(filter(_hidden, text))]


def _identity(name: str | tuple[str, ...]) -> str:
    """The text a name's hash is taken of; a key's parts are escaped, so no two keys share it."""
    if isinstance(name, str):
        return name
    return KEY_SEPARATOR.join(p.replace("\\", "\\\\").replace(KEY_SEPARATOR, "\\x1f") for p in name)


def _digest(name: str | tuple[str, ...], chars: int) -> str:
    # surrogatepass: a lone surrogate (from a bad JSON escape or file name) must hash, not crash.
    return hashlib.sha256(_identity(name).encode("utf-8", "surrogatepass")).hexdigest()[:chars]


def _plain_part(part: str) -> str:
    """Case-folded ASCII with every run of other characters as one `-`; unbounded, possibly empty."""
    ascii_text = unicodedata.normalize("NFKD", part).encode("ascii", "ignore").decode()
    # A long run of letters and digits is broken every 16 characters: "Key <32 hex>" is no secret, but its slug "key-<32 hex>"
    # has a Mailgun key's shape, and the last pass then refused every page that links it (the whole build stopped).
    # Only a run that reads as a code (3 digits or more) is broken: words such as a problem's name stay whole.
    return _LONG_RUN.sub(_broken, _UNSAFE.sub("-", ascii_text.lower())).strip("-.")


def _broken(m: re.Match[str]) -> str:
    run = m.group()
    if sum(c.isdigit() for c in run) < 3:
        return run
    return "-".join(run[i:i + 16] for i in range(0, len(run), 16))


def _plain(name: str | tuple[str, ...], shown: Callable[[str], str] = str) -> str:
    """A name's plain slug; a composite key's parts joined with `--`, which no single part's slug contains."""
    if isinstance(name, str):
        return _plain_part(shown(name))
    return "--".join(_plain_part(shown(part)) or "x" for part in name)


def _bounded(plain: str, name: str | tuple[str, ...], chars: int = HASH_CHARS) -> str:
    """`plain` cut to fit with a hash suffix of `name`."""
    room = MAX_SLUG_BYTES - chars - 1
    return f"{plain[:room].rstrip('-.') or 'x'}_{_digest(name, chars)}"


def slug(name: str | tuple[str, ...], shown: Callable[[str], str] = str) -> str:
    """The slug of one name: plain when it fits, cut and hash-suffixed when it is too long."""
    plain = _plain(name, shown)
    if len(plain) > MAX_SLUG_BYTES:
        return _bounded(plain, name)
    return plain or "x"


def unique_slugs(names: Iterable[Name], shown: Callable[[str], str] = str) -> dict[Name, str]:
    """Map every distinct name (a string, or a composite key as a tuple) to a slug no other name has."""
    groups: dict[str, list[Name]] = defaultdict(list)
    for name in sorted(set(names)):
        groups[slug(name, shown)].append(name)
    out: dict[Name, str] = {}
    for base, members in groups.items():
        if len(members) == 1:
            out[members[0]] = base
            continue
        for name in members:
            # The name that is exactly its own slug keeps it: e.g. a run folder "seed-000" beside "Seed 000".
            out[name] = base if name == base else _bounded(_plain(name, shown), name)
    return _resolve_hash_clashes(out, shown)


def _resolve_hash_clashes(out: dict[Name, str], shown: Callable[[str], str]) -> dict[Name, str]:
    """Give longer hashes to the (astronomically rare) names whose short hashes clash."""
    by_slug: dict[str, list[Name]] = defaultdict(list)
    for name, s in out.items():
        by_slug[s].append(name)
    for clashing in (ns for ns in by_slug.values() if len(ns) > 1):
        for name in clashing:
            out[name] = _bounded(_plain(name, shown), name, chars=32)
    return out
