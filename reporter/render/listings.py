"""Every page and file above the run pages, drawn from digests alone: the index, group, model, grid and
problem pages, the leaderboards and their CSVs, `runs.csv`, the search page and its index.

The runs table behind leaderboards, grids and `runs.csv` is built from the rows the digests carry, in the
order `reporter.collect` reads traces (their paths), so it is the table `reporter.load` returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import pandas as pd

from ..core.errors import CollectError
from .digest import RunDigest
from .runpage import HOME, Page
from .urls import Urls


@dataclass(frozen=True)
class Listings:
    pages: list[Page]
    files: dict[str, str]  # path in the site -> text (CSVs, the search index)


def runs_table(digests: Sequence[RunDigest]) -> pd.DataFrame:
    """The runs table (`reporter.frames`) of these runs, one row each, in trace-path order."""
    from ..frames import from_records
    ordered = sorted(digests, key=lambda d: PurePosixPath(d.path).parts)
    return from_records([d.table_row() for d in ordered if d.row is not None])


def listings(digests: list[RunDigest], urls: Urls, errors: Sequence[CollectError]) -> Listings:
    """`digests` in page order; `errors` the traces that could not be read (the index lists them)."""
    from ..frames import export_bytes
    from .boards import leaderboards
    from .pages import listed, listing_pages
    from .search import index_js
    frame = runs_table(digests)
    boards, board_files, links = leaderboards(frame, urls)
    board_files["runs.csv"] = export_bytes(frame, "csv")
    rows = {d.run_id: listed(d, urls) for d in digests}
    search = Page("search.html", "search.html", {"title": "All runs · search", "crumbs": [HOME], "runs": len(digests)})
    pages = [*listing_pages(digests, rows, frame, urls, errors, links), search, *boards]
    files: dict[str, Any] = {path: blob.decode("utf-8") for path, blob in sorted(board_files.items())}
    files["search-index.js"] = index_js([d.index_row(urls) for d in digests])
    return Listings(pages, files)
