"""Every page and file above the run pages, drawn from digests alone: the index, group, model, grid and
problem pages, the leaderboards and their CSVs, `runs.csv`, the search page and its index (a manifest and
one shard per model, `search`).

The runs table behind leaderboards, grids and `runs.csv` is built from the rows the digests carry, in the
order `reporter.collect` reads traces (their paths), so it is the table `reporter.load` returns.

What depends on what: the leaderboards depend on the runs table and the site's URLs only, so when
neither changed since the last build (an edited reasoning string changes neither) they are not ranked
again and their files are kept (`Boards`, in the build status). A search shard is kept, and its rows are
not indexed again, when its key (its rows and the global inputs) equals the last build's. Every other
page is kept when its fingerprint (template, data, asset names) equals the last build's (`fingerprint`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, overload

import pandas as pd

from ..core.errors import CollectError
from .digest import RunDigest
from .runpage import HOME, Deferred, Page
from .search import MANIFEST, Shard
from .status import Boards
from .urls import GroupKey, Urls

Links = dict[GroupKey, list[tuple[str, str]]]  # per group, the leaderboard links the index shows


@dataclass(frozen=True)
class Listings:
    pages: list[Page | Deferred]  # to render (or keep, when their fingerprint is unchanged)
    files: dict[str, str]  # path in the site -> text (CSVs, the search manifest)
    kept: list[str]  # leaderboard files kept from the last build as they are
    boards: Boards
    shards: list[Shard]  # the search index's, each written only when its key changed


def runs_table(digests: Sequence[RunDigest]) -> pd.DataFrame:
    """The runs table (`reporter.frames`) of these runs, one row each, in trace-path order."""
    from ..frames import from_records
    ordered = sorted(digests, key=lambda d: PurePosixPath(d.path).parts)
    return from_records([d.table_row() for d in ordered if d.row is not None])


def _table_hash(digests: Sequence[RunDigest], urls: Urls, g: str) -> str:
    rows = sorted((d.path, d.row) for d in digests)
    blob = json.dumps([g, rows, repr(dataclasses.astuple(urls))], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def _boards(frame: pd.DataFrame, urls: Urls, h: str, prev: Boards | None, exists: Callable[[str], bool],
            space: pd.DataFrame | None = None) -> tuple[list[Page], dict[str, str], Links, Boards]:
    """The leaderboard pages and CSVs to write, and their links; none to write when `prev` made them from the same table."""
    if prev is not None and prev.inputs == h and all(exists(f) for f in prev.files):
        return [], {}, {k: list(v) for k, v in prev.links}, prev
    from .boards import leaderboards
    pages, blobs, links = leaderboards(frame, urls, space)
    files = {path: blob.decode("utf-8") for path, blob in sorted(blobs.items())}
    made = Boards(h, tuple([p.path for p in pages] + list(files)), tuple((k, tuple(v)) for k, v in links.items()))
    return pages, files, links, made


def listings(digests: list[RunDigest], urls: Urls, errors: Sequence[CollectError], g: str = "",
             prev: Boards | None = None, exists: Callable[[str], bool] = lambda path: False,
             space: pd.DataFrame | None = None) -> Listings:
    """`digests` in page order; `errors` the traces that could not be read (the index lists them); `prev`
    the last build's leaderboards and `exists` whether a file of the live site is there to keep; `space`
    the recorded problem sets (`aggregates.load_universe`), the leaderboards' denominators (`g` must then
    name their fingerprint, so a changed set makes the boards again)."""
    from ..frames import export_bytes
    from .pages import listed, listing_pages
    from .search import manifest_js, shards
    frame = runs_table(digests)
    board_pages, files, links, boards = _boards(frame, urls, _table_hash(digests, urls, g), prev, exists, space)
    rows = {d.run_id: listed(d, urls) for d in digests}
    search = Page("search.html", "search.html", {"title": "All runs · search", "crumbs": [HOME], "runs": len(digests)})
    pages = [*listing_pages(digests, rows, frame, urls, errors, links), search, *board_pages]
    files["runs.csv"] = export_bytes(frame, "csv").decode("utf-8")
    index = shards(((d.model, d.index_row(urls)) for d in digests), g)
    files[MANIFEST] = manifest_js(index)
    kept = [f for f in boards.files if not board_pages and f not in files]
    return Listings(pages, dict(sorted(files.items())), kept, boards, index)


class _Unstable(Exception):
    """A page's data holds a value whose text does not show all of it (a table): it is always rendered."""


def _text(value: Any) -> str:
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
