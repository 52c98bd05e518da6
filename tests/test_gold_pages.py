"""Gold pages: a leaderboard, a grid, a problem page, a model page, the cross-GPU board, the search page and its index,
byte for byte.

They come from the shared `format4_site` (data/ with the committed format-4 validation results, so a
re-validation of data/ moves nothing here) and are compared with tests/gold/pages/ after normalising only
the reporter version and the content hashes in asset names. The plotly chart JSON is kept, not scrubbed:
a changed chart, number, label, link or attribute fails here with the first difference and a diff.

After an intended change (for example leaderboard charts built as hand-made figure dicts instead of plotly
graph_objs), regenerate them with one command and read the diff before committing it:

    REPORTER_REGEN_GOLD=1 python -m pytest -q tests/test_gold_pages.py     # or: pytest --update-gold
    git diff --stat tests/gold/pages
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import goldtest

PAGES = (
    "leaderboards/kernelbench--example-sweep.html",  # problem-set denominators, three bases, every chart
    "grids/kernelbench--example-sweep.html",
    "problems/l1-p94--94-mseloss.html",  # three models, re-validated, with the kernel comparison
    "models/kernelbench--example-sweep--demo-alpha.html",  # the run-table macro, a suspect run, the board row
    "cross-gpu.html",
    "search.html",
    "search-index.js",
    "variants/kernelbench--example-sweep.html",
    "404.html",
)
# Each page template and where its gold page is: a new template fails `test_every_page_kind_has_a_gold_page` until it
# is given one (issue 47, item 2). The index and a run page have theirs in tests/test_render.py.
GOLD_OF = {
    "leaderboard.html": "pages/leaderboards/kernelbench--example-sweep.html", "grid.html": "pages/grids/kernelbench--example-sweep.html",
    "problem.html": "pages/problems/l1-p94--94-mseloss.html", "model.html": "pages/models/kernelbench--example-sweep--demo-alpha.html",
    "crossgpu.html": "pages/cross-gpu.html", "search.html": "pages/search.html", "variant.html": "pages/variants/kernelbench--example-sweep.html",
    "404.html": "pages/404.html", "index.html": "index.html", "run.html": "runs_seed-003-l2-p8.html",
}


@pytest.mark.parametrize("page", PAGES)
def test_page_equals_its_gold_file(format4_site: Path, page: str, update_gold: bool) -> None:
    goldtest.check_exact(f"pages/{page}", (format4_site / page).read_bytes().decode("utf-8"), update_gold)


def test_every_page_kind_has_a_gold_page() -> None:
    templates = {p.name for p in (goldtest.GOLD.parents[1] / "templates").glob("*.html") if not p.name.startswith("_") and p.name != "base.html"}
    assert templates == set(GOLD_OF), f"page templates without a gold page: {sorted(templates - set(GOLD_OF))}"
    assert all((goldtest.GOLD / gold).is_file() for gold in GOLD_OF.values())


def test_the_gold_leaderboard_keeps_its_chart_data() -> None:
    """The gold file holds each chart's figure JSON as built, not a placeholder (what `goldtest.scrub` leaves)."""
    text = (goldtest.GOLD / "pages" / PAGES[0]).read_text(encoding="utf-8")
    figures = dict(re.findall(r'<script type="application/json" id="fig-([\w-]+)">(.*?)</script>', text, re.S))
    assert {"fastp-device", "dist-device", "scatter-device", "fastp-wall"} <= set(figures)
    fast_p = json.loads(figures["fastp-device"])
    assert fast_p["data"] and all(trace["x"] for trace in fast_p["data"])


def test_only_the_version_and_asset_hashes_are_normalised() -> None:
    page = '<script src="../static/app.c1017a80.js"></script><footer>reporter 0.1.0 · speedup 1.25x</footer>'
    assert goldtest.normalise(page) == '<script src="../static/app.HASH.js"></script><footer>reporter VERSION · speedup 1.25x</footer>'
    assert goldtest.normalise(page.replace("1.25x", "1.26x")) != goldtest.normalise(page)
    chart = '<script type="application/json" id="fig-x">{"y": [1.5]}</script>'
    assert goldtest.normalise(chart) == chart
