"""What a finished build left in SITE, read without the renderer: its status file, its own state files, the
files it wrote (`owned_files`) and those it did not (`foreign_files`).

The build (`render`) writes these; publishing reads them to commit only what the build wrote, and a new build
reads them to tell its own site from a folder it must not touch. Both floors read them from here, so
publishing imports nothing from the renderer.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import CollectError
from .hosts import SiteSize
from .marker import MARKER  # in every finished build; it names the hash of the status file beside it
from .safeio import read_bounded

STATUS_FILE = ".reporter-status.json"
CACHE_DIR = ".reporter-cache"  # content-addressed caches (highlighted code) that outlive one build
STATE = (MARKER, STATUS_FILE)  # the build's own state at the site's top, never listed as written
STATUS_PREFIX = "status: "  # the marker's line naming the status file's sha256


def sha256_bytes(blob: bytes) -> str:
    return hashlib.sha256(blob).hexdigest()


_HEX = "hex:"  # a stored string that held a secret (or began so): hex of its UTF-8 bytes


def encode_state(node: Any, clean: Callable[[str], str]) -> Any:
    """`node` with every string (keys too) that `clean` would change stored as `hex:<its UTF-8 in hex>`. Our own
    hashes are hex digits and never change; a digest that happens to hold a key's shape is encoded the same way."""
    if isinstance(node, str):
        return _HEX + node.encode("utf-8", "surrogatepass").hex() if node.startswith(_HEX) or clean(node) != node else node
    if isinstance(node, dict):
        return {encode_state(k, clean): encode_state(v, clean) for k, v in node.items()}
    if isinstance(node, list | tuple):
        return [encode_state(v, clean) for v in node]
    return node


def decode_state(node: Any) -> Any:
    if isinstance(node, str):
        return bytes.fromhex(node[len(_HEX):]).decode("utf-8", "surrogatepass") if node.startswith(_HEX) else node
    if isinstance(node, dict):
        return {decode_state(k): decode_state(v) for k, v in node.items()}
    if isinstance(node, list):
        return [decode_state(v) for v in node]
    return node


def owned_files(site: Path) -> frozenset[str] | None:
    """What the build that made `site` wrote there, when `site` is a finished build of ours: its marker
    names the sha256 of its status file, which lists every file written. None for anything else: a folder
    holding a stray marker (a home directory), a site whose state was edited, an older reporter's site."""
    try:
        marker = read_bounded(site / MARKER, site, "(file)", "MAX_CONFIG_FILE_BYTES", one_name=False).decode("utf-8", "replace")
        blob = read_bounded(site / STATUS_FILE, site, "(file)", "MAX_INDEX_BYTES", one_name=False)
        if STATUS_PREFIX + sha256_bytes(blob) not in marker.splitlines():
            return None
        written = decode_state(json.loads(blob).get("written"))
    except (CollectError, ValueError, AttributeError):
        return None
    if not isinstance(written, list) or not all(isinstance(w, str) for w in written):
        return None
    return frozenset(written)


def is_state(rel: str) -> bool:
    """The build's own bookkeeping in a site: the marker, the status and the caches."""
    return rel in STATE or rel == CACHE_DIR or rel.startswith(CACHE_DIR + "/")


def foreign_files(site: Path, written: frozenset[str]) -> list[str]:
    """Everything in `site` its build did not write (files, links, and empty folders as `name/`), sorted."""
    parents = {"/".join(w.split("/")[:i]) for w in written for i in range(1, w.count("/") + 1)}
    out: list[str] = []
    for folder, dirs, names in os.walk(site):
        dirs.sort()
        here = Path(folder).relative_to(site).as_posix()
        for name in [*names, *(d for d in dirs if os.path.islink(os.path.join(folder, d)))]:
            rel = f"{here}/{name}" if here != "." else name
            if rel not in written and not is_state(rel):
                out.append(rel)
        if here != "." and not dirs and not names and here not in parents and not is_state(here):
            out.append(here + "/")
    return sorted(out)


def published_paths(written: frozenset[str]) -> list[str]:
    """What `reporter publish` commits of a build: every file it wrote but its own state, and the marker (which names
    the commit the site was built from)."""
    return [*sorted(w for w in written if not is_state(w)), MARKER]


def published_size(site: Path) -> SiteSize | None:
    """The bytes and files `reporter publish` would commit from `site` (None: not a finished build of ours)."""
    written = owned_files(site)
    if written is None:
        return None
    total = files = largest_bytes = 0
    largest = ""
    for rel in published_paths(written):
        try:
            n = os.lstat(site / rel).st_size
        except OSError:
            continue
        total, files = total + n, files + 1
        if n > largest_bytes:
            largest_bytes, largest = n, rel
    return SiteSize(total, files, largest_bytes, largest)
