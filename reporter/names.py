"""Collision-free, file-name-safe slugs for anything that becomes a page or download name.

Public API (pure functions, no I/O):

- ``unique_slugs(names) -> dict[str, str]``: every distinct name mapped to a slug that no other name in
  the set shares. Use it for every family of names that shares a folder on the site: run ids, models,
  benchmark/configuration groups, problem files. For a composite key (benchmark, configuration, model)
  join the parts with ``KEY_SEPARATOR`` and pass the joined strings, so that the whole key is unique,
  not each part on its own.
- ``slug(name) -> str``: the slug of one name on its own (bounded length, never empty); used where no
  set of names is known. Two different names can share it; ``unique_slugs`` is what keeps them apart.

The rules:

- A slug is lowercase ASCII letters, digits, ``.`` and ``-``; it never starts with ``_`` or ``.``
  (GitHub Pages' Jekyll drops such files) and is never empty (``x``).
- When two different names give the same plain slug (after case-folding and replacing punctuation),
  each of them gets ``_`` plus a short hash of the name itself appended, except the one name (if any)
  that already *is* its plain slug. ``_`` never occurs in a plain slug, so a suffixed slug can never
  equal another name's plain slug.
- Stable: a name's slug depends only on the names it collides with, never on input order, so adding an
  unrelated name renames nothing.
- Bounded: a slug is at most ``MAX_SLUG_BYTES`` bytes. A longer name is cut and always carries the
  hash suffix (the cut loses what told two long names apart), so a page name such as
  ``models/<slug>.html`` stays far below the 255-byte file name limit of common file systems.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable

# The longest slug; three joined slugs plus ".kernel.py" still fit in a 255-byte file name.
MAX_SLUG_BYTES = 60
HASH_CHARS = 8
KEY_SEPARATOR = "\x1f"  # cannot occur in a name typed by a person; see unique_slugs
_UNSAFE = re.compile(r"[^a-z0-9.]+")

__all__ = ["KEY_SEPARATOR", "MAX_SLUG_BYTES", "slug", "unique_slugs"]


def _digest(name: str, chars: int) -> str:
    # surrogatepass: a lone surrogate (from a bad JSON escape or file name) must hash, not crash.
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:chars]


def _plain(name: str) -> str:
    """Case-folded ASCII with every run of other characters as one `-`; unbounded, possibly empty.

    The parts of a composite key are joined with `--`, which a single part never contains.
    """
    parts = []
    for part in name.split(KEY_SEPARATOR):
        ascii_text = unicodedata.normalize("NFKD", part).encode("ascii", "ignore").decode()
        parts.append(_UNSAFE.sub("-", ascii_text.lower()).strip("-.") or ("x" if KEY_SEPARATOR in name else ""))
    return "--".join(parts)


def _bounded(plain: str, name: str, chars: int = HASH_CHARS) -> str:
    """`plain` cut to fit with a hash suffix of `name`."""
    room = MAX_SLUG_BYTES - chars - 1
    return f"{plain[:room].rstrip('-.') or 'x'}_{_digest(name, chars)}"


def slug(name: str) -> str:
    """The slug of one name: plain when it fits, cut and hash-suffixed when it is too long."""
    plain = _plain(name)
    if len(plain) > MAX_SLUG_BYTES:
        return _bounded(plain, name)
    return plain or "x"


def unique_slugs(names: Iterable[str]) -> dict[str, str]:
    """Map every distinct name to a slug no other name in `names` has (see the module docstring)."""
    groups: dict[str, list[str]] = defaultdict(list)
    for name in sorted(set(names)):
        groups[slug(name)].append(name)
    out: dict[str, str] = {}
    for base, members in groups.items():
        if len(members) == 1:
            out[members[0]] = base
            continue
        for name in members:
            # The name that is exactly its own slug keeps it: e.g. a run folder "seed-000" beside "Seed 000".
            out[name] = base if name == base else _bounded(_plain(name), name)
    return _resolve_hash_clashes(out)


def _resolve_hash_clashes(out: dict[str, str]) -> dict[str, str]:
    """Give longer hashes to the (astronomically rare) names whose short hashes clash."""
    by_slug: dict[str, list[str]] = defaultdict(list)
    for name, s in out.items():
        by_slug[s].append(name)
    for clashing in (ns for ns in by_slug.values() if len(ns) > 1):
        for name in clashing:
            out[name] = _bounded(_plain(name), name, chars=32)
    return out
