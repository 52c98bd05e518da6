"""Every page and file above the run pages, drawn from digests alone: the index, group, model, grid and
problem pages, the leaderboards and their CSVs, `runs.csv`, the search page and its index (a manifest and
one shard per model, `search`).

The runs table behind leaderboards, grids and `runs.csv` is built from the rows the digests carry, in the
order `reporter.collect` reads traces (their paths), so it is the table `reporter.load` returns.

What depends on what: a (benchmark, configuration) group's leaderboards depend on its rows of the runs
table and its URLs only, so a group whose rows and URLs did not change since the last build (an edited
reasoning string changes neither; a run added elsewhere changes another group's) is not ranked again and
its files are kept (`Boards`, one per group in the build status). A search shard is kept, and its rows are
not indexed again, when its key (its rows and the global inputs) equals the last build's. Grid and problem
pages are kept when their runs' rows and URLs are the last build's (`Deferred`), without making their
data. Every other page is kept when its fingerprint (template, data, asset names) equals the last build's
(`fingerprint`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, overload

from ..core.audit import DEFAULT_OPTIONS, PageOptions
from ..core.errors import CollectError
from ..core.vocab import MISSING_KEY
from .digest import Row, RunDigest
from .runpage import HOME, Deferred, Page
from .search import MANIFEST, Shard
from .status import Boards
from .urls import GroupKey, Urls

if TYPE_CHECKING:  # pandas is imported where a table is made: an up-to-date build never needs it
    import pandas as pd

Links = dict[GroupKey, list[tuple[str, str]]]  # per group, the leaderboard links the index shows


@dataclass(frozen=True)
class Listings:
    pages: list[Page | Deferred]  # to render (or keep, when their fingerprint is unchanged)
    files: dict[str, str]  # path in the site -> text (CSVs, the search manifest)
    kept: list[str]  # leaderboard files kept from the last build as they are
    boards: tuple[Boards, ...]  # each group's
    shards: list[Shard]  # the search index's, each written only when its key changed


def runs_table(digests: Sequence[RunDigest]) -> pd.DataFrame:
    """The runs table (`reporter.frames`) of these runs, one row each, in trace-path order."""
    from ..frames import from_records
    ordered = sorted(digests, key=lambda d: PurePosixPath(d.path).parts)
    return from_records([d.table_row() for d in ordered if d.row is not None])


def _group(row: Row) -> GroupKey:
    """The (benchmark, configuration) group a table row is ranked in (`aggregates.comparable`'s labels)."""
    r = dict(row)
    return (str(r.get("benchmark") or MISSING_KEY), str(r.get("configuration") or MISSING_KEY))


def _group_hash(key: GroupKey, digests: Sequence[RunDigest], urls: Urls, g: str) -> str:
    # what a group's boards read: its runs' table rows, their slugs (the charts link run pages), its own slug
    rows = sorted((d.path, d.row, urls.runs[d.run_id]) for d in digests)
    blob = json.dumps([g, key, urls.groups.get(key), rows], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def _boards(digests: Sequence[RunDigest], urls: Urls, g: str, prev: Sequence[Boards], exists: Callable[[str], bool],
            space: pd.DataFrame | None = None, options: PageOptions = DEFAULT_OPTIONS) -> tuple[list[Page], dict[str, str], Links, tuple[Boards, ...], list[str]]:
    """Each group's leaderboard pages and CSVs to write, and their links; a group whose rows, URLs and global
    inputs are those `prev` made its boards from keeps its files (the last value: the files kept)."""
    from .boards import leaderboards
    by_group: dict[GroupKey, list[RunDigest]] = {}
    for d in digests:
        if d.row is not None:
            by_group.setdefault(_group(d.row), []).append(d)
    before = {b.group: b for b in prev}
    pages: list[Page] = []
    files: dict[str, str] = {}
    links: Links = {}
    made: list[Boards] = []
    kept: list[str] = []
    for key, ds in sorted(by_group.items()):
        h = _group_hash(key, ds, urls, g)
        old = before.get(key)
        if old is not None and old.inputs == h and all(exists(f) for f in old.files):
            made.append(old)
            kept += old.files
            if old.links:
                links[key] = list(old.links)
            continue
        # one group's runs alone: no board ranks runs of two groups, so its pages are those of the whole table
        p, blobs, group_links = leaderboards(runs_table(ds), urls, space, options)
        texts = {path: blob.decode("utf-8") for path, blob in sorted(blobs.items())}
        pages += p
        files.update(texts)
        links.update(group_links)
        made.append(Boards(key, h, tuple([x.path for x in p] + list(texts)), tuple(group_links.get(key, []))))
    return pages, files, links, tuple(made), kept


def listings(digests: list[RunDigest], urls: Urls, errors: Sequence[CollectError], g: str = "",
             prev: Sequence[Boards] = (), exists: Callable[[str], bool] = lambda path: False,
             space: pd.DataFrame | None = None, options: PageOptions = DEFAULT_OPTIONS) -> Listings:
    """`digests` in page order; `errors` the traces that could not be read (the index lists them); `prev`
    the last build's leaderboards and `exists` whether a file of the live site is there to keep; `space`
    the recorded problem sets (`frames.load_universe`), the leaderboards' denominators (`g` must then
    name their fingerprint, so a changed set makes the boards again)."""
    from ..frames import export_bytes
    from .pages import listed, listing_pages
    from .search import manifest_js, shards
    frame = runs_table(digests)
    board_pages, files, links, boards, kept = _boards(digests, urls, g, prev, exists, space, options)
    rows = {d.run_id: listed(d, urls) for d in digests}
    search = Page("search.html", "search.html", {"title": "All runs · search", "crumbs": [HOME], "runs": len(digests),
                                                   "wasm": True})
    pages = [*listing_pages(digests, rows, frame, urls, errors, links, space, options), search, *board_pages]
    files["runs.csv"] = export_bytes(frame, "csv").decode("utf-8")
    index = shards(((d.model, d.index_row(urls)) for d in digests), g)
    files[MANIFEST] = manifest_js(index)
    return Listings(pages, dict(sorted(files.items())), kept, boards, index)


class _Unstable(Exception):
    """A page's data holds a value whose text does not show all of it (a table): it is always rendered."""


def _text(value: Any) -> str:
    import pandas as pd
    if isinstance(value, pd.DataFrame | pd.Series):
        raise _Unstable
    return repr(value)


@overload
def fingerprint(page: Deferred, extra: Any) -> str: ...
@overload
def fingerprint(page: Page, extra: Any) -> str | None: ...
def fingerprint(page: Page | Deferred, extra: Any) -> str | None:
    """A hash of everything a page's file is made from (with `extra`: globals, asset names, build time
    where the page shows it); None when the page's data cannot be fingerprinted, so it is rendered. A
    `Deferred` page's is made from its inputs' hash, so its data need not be made to know it."""
    if isinstance(page, Deferred):
        return hashlib.sha256(json.dumps([extra, page.path, page.template, "inputs", page.inputs], sort_keys=True,
                                         default=_text).encode()).hexdigest()
    try:
        blob = json.dumps([extra, page.path, page.template, dict(page.context)], sort_keys=True, default=_text)
    except (_Unstable, TypeError, ValueError):
        return None
    return hashlib.sha256(blob.encode()).hexdigest()
