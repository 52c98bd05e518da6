"""Full-text search over every transcript: each turn's reasoning, tool calls and results, and every kernel version,
indexed with Pagefind (`pagefind[bin]` on PyPI: its binary builds a static index split into chunks that the
browser loads on demand, so a 10,000-run site stays light).

Each run page's worker also writes the run's **search document** (`document`): plain HTML made of the published
(redacted) trace's text, every string escaped, each turn and kernel version under a heading whose id is that
turn's or version's anchor on the run page, so Pagefind's sub-results link to `runs/<slug>.html#turn-3`. The
documents live in the site's cache folder (never published) by run slug, so a kept run's document is kept with it.
After the listing pages, the runs are split into shards by a hash of their slug (`shards`: about `SHARD_RUNS`
runs each, a power of two of them, at most `MAX_SHARDS`), and `build_index` runs the binary over each shard's
documents, in a folder we made, with a clean environment and no configuration file: it reads nothing of DATA
and takes no setting from it. Shard NN's output goes to `SITE/pagefind/NN/`, less the UI bundles we do not use,
and `SITE/pagefind/shards.json` names the shards; the search page loads the first and merges the others
(Pagefind's multisite search: one WASM module, each shard's metadata and chunks fetched as a query needs them).
Indexing costs about 0.2 CPU-s per seed-sized run, so a rebuild keeps every shard whose documents are unchanged
(their hashes, the shard's `key`) and indexes again only the shards of changed, added or deleted runs
(`benchmarks/search_fulltext.txt` measures both). Without the binary (a machine without `pagefind[bin]`) the site
still builds: the search page then says full-text search is unavailable.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

from ..core import sitefiles
from ..core.interpreter import die_with_parent
from ..core.records import Trace
from .evolution import version_of_sends

log = logging.getLogger(__name__)

BUNDLE = "pagefind"  # the index's folder in the site
DOCS = f"{sitefiles.CACHE_DIR}/fulltext"  # the search documents, by run slug
STATE = f"{sitefiles.CACHE_DIR}/fulltext.json"  # the key and files of the index the site holds
# What the search page loads: the API, its worker and WASM, the entry, and the index's chunks. The UI bundles
# Pagefind also writes are left out (the page has its own list, like the run index's).
KEEP = ("pagefind.js", "pagefind-worker.js", "pagefind-entry.json")
KEEP_SUFFIXES = (".pagefind", ".pf_meta", ".pf_index", ".pf_fragment", ".pf_filter")
FILTERS = ("model", "benchmark", "level", "problem", "verdict", "flag")
TIMEOUT_S = 600  # per shard (about 128 runs, each at most MAX_DOC_CHARS: ~0.5 CPU-s a run); a binary stuck past this is stopped and that shard is left out
# One run's share of indexing. Pagefind costs ~0.5 CPU-s per MB of prose but ~3 CPU-s per MB of line-wrapped base64
# (every line a new word; benchmarks/search_bounds.txt), and nobody searches for the middle of a blob. So a line
# that is all base64 or hex is left out, a longer word keeps its first MAX_WORD_CHARS, and a run's text stops at
# MAX_DOC_CHARS. The run page says what its search entry leaves out (`SearchCut`); the page itself shows everything.
BLOB_LINE_CHARS = 40
MAX_WORD_CHARS = 64
MAX_DOC_CHARS = 1_000_000
SHARD_RUNS = 128  # runs per index shard, about: a changed run costs its shard's indexing, not the site's
MAX_SHARDS = 32  # a query fetches every shard's entry and metadata: the bound on that (above 4,096 runs shards grow)
MANIFEST = f"{BUNDLE}/shards.json"  # the shards the search page loads, first one first


@dataclass(frozen=True)
class Facets:
    """What a search result can be filtered by (`FILTERS`), as the run's pages show it."""

    title: str
    model: str
    benchmark: str
    level: str
    problem: str
    verdict: str
    flags: tuple[str, ...]


@dataclass(frozen=True)
class SearchCut:
    """What a run's search document leaves out of its text (`searchable`)."""

    blob_lines: int = 0
    long_words: int = 0
    chars_past_cap: int = 0

    def __add__(self, other: SearchCut) -> SearchCut:
        return SearchCut(self.blob_lines + other.blob_lines, self.long_words + other.long_words,
                         self.chars_past_cap + other.chars_past_cap)

    def __bool__(self) -> bool:
        return bool(self.blob_lines or self.long_words or self.chars_past_cap)

    def sentence(self) -> str | None:
        """What the run page says of it; None when nothing was left out."""
        parts = [f"{n:,} {what}" for n, what in (
            (self.blob_lines, f"line{'s' if self.blob_lines != 1 else ''} of base64 or hex ({BLOB_LINE_CHARS}+ characters, no space)"),
            (self.long_words, f"word{'s' if self.long_words != 1 else ''} past their first {MAX_WORD_CHARS} characters"),
            (self.chars_past_cap, f"characters past the run's {MAX_DOC_CHARS:,}-character search cap")) if n]
        if not parts:
            return None
        return (f"Full-text search leaves out {', '.join(parts)} of this run, so a search for them finds nothing here; "
                "this page shows every character.")


_BLOB_LINE = re.compile(rf"^[ \t]*[A-Za-z0-9+/=_-]{{{BLOB_LINE_CHARS},}}[ \t]*$\n?", re.M)
_LONG_WORD = re.compile(rf"(\S{{{MAX_WORD_CHARS}}})\S+")


def searchable(text: str, room: int) -> tuple[str, SearchCut]:
    """`text` as the search index gets it, in at most `room` characters, and what was left out."""
    text, blobs = _BLOB_LINE.subn("", text)
    text, words = _LONG_WORD.subn(r"\1…", text)
    past = max(0, len(text) - room)
    return text[:room], SearchCut(blobs, words, past)


def _section(anchor: str, heading: str, *parts: str) -> str:
    body = "".join(f"<pre>{escape(p)}</pre>" for p in parts if p)
    return f'<section><h2 id="{escape(anchor)}">{escape(heading)}</h2>{body}</section>\n'


def _call_text(tool: str, arguments: object, result: str | None) -> str:
    args = json.dumps(arguments, ensure_ascii=False, indent=1) if arguments else ""
    return f"{tool} {args}" + (f"\n→ {result}" if result is not None else "")


def document(trace: Trace, facets: Facets) -> tuple[str, SearchCut]:
    """A run's search document: every turn (reasoning, each call's arguments and result) under `turn-N`, every kernel
    version under `version-N`, the final kernel under `final`; the facets as Pagefind filters and metadata. Its text
    is bounded (`searchable`); what it leaves out is returned beside it."""
    meta = [f'<span data-pagefind-filter="{name}">{escape(value)}</span>'
            for name, value in (("model", facets.model), ("benchmark", facets.benchmark), ("level", facets.level),
                                ("problem", facets.problem), ("verdict", facets.verdict)) if value]
    meta += [f'<span data-pagefind-filter="flag">{escape(f)}</span>' for f in facets.flags]
    out = ['<!doctype html><html lang="en"><head><meta charset="utf-8">',
           f"<title>{escape(facets.title)}</title></head><body>",
           f'<div data-pagefind-ignore>{"".join(meta)}</div><main data-pagefind-body>',
           f'<h1 data-pagefind-meta="title">{escape(facets.title)}</h1>\n']
    room, cut = MAX_DOC_CHARS, SearchCut()

    def bounded(*parts: str) -> list[str]:
        nonlocal room, cut
        kept = []
        for part in parts:
            text, part_cut = searchable(part, room)
            room, cut = room - len(text), cut + part_cut
            kept.append(text)
        return kept

    versions = version_of_sends(trace)[1]
    for t in trace.turns:
        calls = [_call_text(c.tool, {k: v for k, v in c.arguments.items() if k != "kernel_code"}, c.result.text if c.result else None)
                 for c in t.calls]
        out.append(_section(f"turn-{t.index}", f"turn {t.index}", *bounded(t.reasoning, *calls)))
    out += [_section(f"version-{n}", f"kernel version {n}", *bounded(src)) for n, src in enumerate(versions, 1)]
    if trace.final_kernel is not None:
        out.append(_section("final", "final kernel", *bounded(trace.final_kernel.source)))
    out.append("</main></body></html>\n")
    return "".join(out), cut


def doc_path(slug: str) -> str:
    # not ".html": a search document is no page of the site (it becomes runs/<slug>.html only in the work folder
    # Pagefind indexes, so its results name the run page)
    return f"{DOCS}/{slug}.doc"


def binary() -> Path | None:
    """The Pagefind binary of `pagefind[bin]` (or `[extended]`), or one on PATH; None without it."""
    try:
        from pagefind.service import get_executable
    except ImportError:
        on_path = shutil.which("pagefind_extended") or shutil.which("pagefind")
        return Path(on_path) if on_path else None
    found = get_executable()
    return found if found is not None and found.is_file() else None


DocSigs = dict[str, list[Any]]  # run slug -> [size, mtime_ns, sha256 hex] of its search document


def key_of(root: Path, slugs: Iterable[str], known: DocSigs | None = None, seen: DocSigs | None = None) -> str | None:
    """The hash of the documents of these runs in the order given; None when one is missing. A document whose size and
    modification time (ns) are those `known` recorded keeps its recorded hash without being read, like git's index
    (a kept run's document is the live site's file, hard-linked: at 10,000 runs reading all of them to find the
    changed shard was 3.8 GB and 5 CPU-s of every rebuild); `seen` receives every signature used."""
    h = hashlib.sha256()
    for slug in slugs:
        path = root / doc_path(slug)
        try:
            st = path.stat()
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        sig = (known or {}).get(slug)
        if sig is None or sig[0] != st.st_size or sig[1] != st.st_mtime_ns:
            sig = [st.st_size, st.st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest()]
        if seen is not None:
            seen[slug] = sig
        h.update(slug.encode() + b"\0" + bytes.fromhex(sig[2]))
    return h.hexdigest()


def shard_count(runs: int) -> int:
    """How many shards `runs` runs are split into: a power of two near runs / SHARD_RUNS (so adding runs moves
    them between shards rarely), at most MAX_SHARDS."""
    want, count = max(1, math.ceil(runs / SHARD_RUNS)), 1
    while count < want and count < MAX_SHARDS:
        count *= 2
    return count


def shards(slugs: Sequence[str]) -> dict[str, list[str]]:
    """The runs of each shard by its name ("00", "01", ...), each in the order given; shards with no run left out."""
    count = shard_count(len(slugs))
    out: dict[str, list[str]] = {}
    for slug in slugs:
        n = int.from_bytes(hashlib.sha256(slug.encode("utf-8")).digest()[:8], "big") % count
        out.setdefault(f"{n:02d}", []).append(slug)
    return dict(sorted(out.items()))


Shards = dict[str, tuple[str, list[str]]]  # per shard name: its key and its files (relative to the site)


def previous(site: Path) -> Shards:
    """The shards of the index the live site holds, by name ({} for none, or a state of another format)."""
    try:
        doc = json.loads((site / STATE).read_text(encoding="utf-8"))
        return {str(name): (str(s["key"]), [str(f) for f in s["files"]]) for name, s in doc["shards"].items()
                if isinstance(s["key"], str)}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def previous_docs(site: Path) -> DocSigs:
    """The signatures of the search documents the live site's index was keyed by ({} when none are recorded)."""
    try:
        docs = json.loads((site / STATE).read_text(encoding="utf-8")).get("docs", {})
        return {str(k): list(v) for k, v in docs.items()
                if isinstance(v, list) and len(v) == 3 and isinstance(v[2], str) and len(v[2]) == 64}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}


def _clean_env() -> dict[str, str]:
    # Pagefind reads PAGEFIND_* variables as settings: none of ours, and none of the caller's, reach it.
    return {k: v for k, v in os.environ.items() if not k.startswith("PAGEFIND")}


def run_binary(exe: Path, docs: Path, out: Path, scratch: Path) -> None:
    """Index `docs` (our documents only) into `out`, from a folder we made in `scratch`: no pagefind.yml/toml/json
    is read."""
    with tempfile.TemporaryDirectory(prefix="pagefind-", dir=scratch) as cwd:
        subprocess.run([str(exe), "--site", str(docs), "--output-path", str(out), "--force-language", "en", "--silent"],
                       cwd=cwd, env=_clean_env(), check=True, capture_output=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL,
                       preexec_fn=die_with_parent)  # a killed build's indexer stops with it


def build_index(tmp: Path, slugs: Sequence[str], exe: Path | None, shard: str,
                known: DocSigs | None = None) -> tuple[str | None, list[str]]:
    """Index the documents of `slugs` (already in the new site's cache at `tmp`) into `tmp/pagefind/SHARD/`; the key
    and the files written (relative to `tmp`). (None, []) without the binary, or when it failed (logged)."""
    key = key_of(tmp, slugs, known)
    if exe is None or key is None or not slugs:
        if slugs and key is None:
            log.warning("full-text search: a run's search document is missing, so the site has no full-text index this time")
        return None, []
    # the work folder is inside the new site's cache: a build writes nowhere but beside its site, and the documents'
    # hard links stay on one file system
    scratch = tmp / sitefiles.CACHE_DIR
    scratch.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="fulltext-work-", dir=scratch) as work:
        docs = Path(work) / "site"
        for slug in slugs:
            dest = docs / "runs" / f"{slug}.html"
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.link(tmp / doc_path(slug), dest)
        out = Path(work) / "out"
        try:
            run_binary(exe, docs, out, Path(work))
        except (OSError, subprocess.SubprocessError) as exc:
            err = getattr(exc, "stderr", b"") or b""
            log.warning("full-text search: pagefind failed (%s%s); the site is built without a full-text index",
                        type(exc).__name__, f": {err.decode('utf-8', 'replace')[:300]}" if err else "")
            return None, []
        files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and _kept(p.name))
        for rel in files:
            dest = tmp / BUNDLE / shard / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(out / rel), dest)
    return key, [f"{BUNDLE}/{shard}/{rel}" for rel in files]


def unstable(rel: str) -> bool:
    """A file of the index whose bytes differ between two indexings of the same documents: Pagefind writes its filter
    chunks in hash-map order (not seeded, so every run differs; without filters its output is byte-for-byte the same),
    and the files naming them by hash follow. Search results are the same; only these files, and the state naming them,
    are exempt from the site's byte-for-byte determinism. A rebuild with unchanged documents keeps the index as it is."""
    return rel.startswith(BUNDLE + "/") or rel == STATE


def _kept(name: str) -> bool:
    return name in KEEP or name.endswith(KEEP_SUFFIXES)


def save_state(tmp: Path, made: Shards, docs: DocSigs | None = None) -> None:
    path = tmp / STATE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)  # a new inode: the seeded one is the live site's
    doc = {"shards": {name: {"key": key, "files": files} for name, (key, files) in sorted(made.items())},
           "docs": dict(sorted((docs or {}).items()))}
    path.write_text(json.dumps(doc, sort_keys=True) + "\n", encoding="utf-8")


def manifest(made: Shards) -> str | None:
    """`MANIFEST`'s text: the shards the search page loads; None when there is no index."""
    return json.dumps({"shards": sorted(made)}) + "\n" if made else None
