"""Planning a rebuild without building: links, what a page or leaderboard is keyed on, the runs table's order,
and what a run page that failed to render leaves behind (render/plan.py, listings.py, write.py, incremental.py).

The digests are the shared sample site's own (its build status), read and never written, so no test here
builds a site.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from reporter.collect.redact import Redactor
from reporter.render import plan, status, write
from reporter.render.digest import RunDigest
from reporter.render.incremental import globals_of
from reporter.render.listings import _group_hash, runs_table
from reporter.render.urls import Urls

ALPHA = "kernelbench-sweep/kernelbench-level1_demo-alpha"


def digests(site: Path) -> list[RunDigest]:
    return sorted((r.digest for r in status.BuildStatus.load(site).runs.values()), key=lambda d: d.order())


def test_prev_and_next_link_runs_of_the_same_model_in_the_same_group_and_never_wrap(sample_site: Path) -> None:
    every = digests(sample_site)
    alpha = [d for d in every if d.run_id.startswith(ALPHA)]
    assert [d.run_id.rsplit("/", 1)[1] for d in alpha] == ["l1-p92-s0", "l1-p94-s0", "l1-p96-s0", "l1-p100-s0"]
    for group in (every, alpha):  # the whole site, and one model's runs alone (the first and last are neighbours)
        urls = plan.urls_of(group)
        nav = plan.navigation(group, urls)
        links = [(nav[d.run_id]["prev"], nav[d.run_id]["next"]) for d in alpha]
        pages = [f"runs/kernelbench-sweep-kernelbench-level1-demo-alpha-{p}.html" for p in ("l1-p92-s0", "l1-p94-s0", "l1-p96-s0", "l1-p100-s0")]
        assert links == [(None, pages[1]), (pages[0], pages[2]), (pages[1], pages[3]), (pages[2], None)]
    nav = plan.navigation(every, plan.urls_of(every))
    assert (nav["seed-003-l2-p8"]["prev"], nav["seed-003-l2-p8"]["next"]) == (None, "runs/seed-000-l2-p10.html")


def test_a_run_page_is_rendered_again_when_its_links_change_or_a_file_of_it_is_gone(sample_site: Path, tmp_path: Path) -> None:
    prev = status.BuildStatus.load(sample_site)
    every = sorted((r.digest for r in prev.runs.values()), key=lambda d: d.order())
    nav = plan.navigation(every, plan.urls_of(every))
    found = plan.Scan(prev.runs, [], set())
    keep, todo = plan.pages_to_render(sample_site, found, every, nav, prev.globals, prev)
    assert todo == [] and len(keep) == sum(len(r.files) for r in prev.runs.values())
    target = f"{ALPHA}/l1-p94-s0"
    moved = {**nav, target: {**nav[target], "next": "runs/elsewhere.html"}}  # a neighbour was added or renamed
    prev = status.BuildStatus.load(sample_site)
    _, todo = plan.pages_to_render(sample_site, plan.Scan(prev.runs, [], set()), every, moved, prev.globals, prev)
    assert [run_id for _, run_id, _ in todo] == [target]
    # a site missing one run's page: that run alone is made again
    site = tmp_path / "site"
    shutil.copytree(sample_site, site, symlinks=True)
    (site / nav[target]["self"]).unlink()
    prev = status.BuildStatus.load(site)
    _, todo = plan.pages_to_render(site, plan.Scan(prev.runs, [], set()), every, nav, prev.globals, prev)
    assert [run_id for _, run_id, _ in todo] == [target]


def test_the_runs_table_is_in_the_order_traces_are_read(sample_site: Path) -> None:
    """By path parts, as `reporter.load` reads them: "a/..." before "a-b/...", though "-" sorts before "/"."""
    some = digests(sample_site)[:3]
    renamed = [dataclasses.replace(d, path=p) for d, p in zip(some, ("a-b/trace.json", "a/trace.json", "a.b/trace.json"))]
    assert list(runs_table(renamed)["run_id"]) == [some[1].run_id, some[0].run_id, some[2].run_id]


def test_a_groups_leaderboards_key_names_the_global_inputs_its_rows_and_its_slugs(sample_site: Path) -> None:
    alpha = [d for d in digests(sample_site) if d.run_id.startswith(ALPHA)]
    urls = plan.urls_of(alpha)
    key = ("kernelbench", "level1_demo")

    def h(ds: list[RunDigest], g: str = "g", u: Urls = urls) -> str:
        return _group_hash(key, ds, u, g)
    # the global hash carries templates, static files, settings and the problem sets' fingerprint
    assert h(alpha, "templates A") == h(alpha, "templates A") != h(alpha, "templates B")
    assert h(alpha) != h(alpha[1:])  # a run fewer
    row = dict(alpha[0].row or ())
    edited = dataclasses.replace(alpha[0], row=tuple({**row, "tokens_total": 1}.items()))
    assert h(alpha) != h([edited, *alpha[1:]])  # a row changed
    moved = dataclasses.replace(urls, runs={**urls.runs, alpha[0].run_id: "elsewhere"})
    assert h(alpha) != h(alpha, u=moved)  # a run page moved: the charts link it
    assert h(alpha) == h(list(reversed(alpha)))  # in any order


def test_the_global_hash_covers_the_allow_list_and_the_reviews(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    seen = [globals_of(data, None, True)[0]]
    (data / "redact-allow.txt").write_text("sk-test-not-a-secret\n")
    seen.append(globals_of(data, None, True)[0])
    (data / "reviews.toml").write_text("")
    seen.append(globals_of(data, None, True)[0])
    seen.append(globals_of(data, None, False)[0])
    seen.append(globals_of(data, {"jobs": 1}, False)[0])
    assert len(set(seen)) == 5


def test_a_run_page_that_failed_to_render_leaves_the_site_and_the_status(sample_site: Path, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    prev = status.BuildStatus.load(sample_site)
    a, b, c = sorted(prev.runs)[:3]
    runs = {a: prev.runs[a], b: prev.runs[b], c: prev.runs[c]}
    todo: list[tuple[str, str, Any]] = [(runs[x].digest.path, x, {}) for x in (a, b, c)]
    trace_b, trace_c = (runs[x].digest.path for x in (b, c))  # as the index lists them: relative to DATA

    def rendered(job: object, items: list[Any], shared: object, jobs: object) -> list[Any]:
        return [["runs/a.html"], "TypeError: boom"]
    monkeypatch.setattr(write.parallel, "run_all", rendered)
    the_plan = write.Plan([], todo, plan.urls_of([r.digest for r in runs.values()]), "", "", prev)
    found = plan.Scan(runs, [], {c}, page_errors={c: "run page not built: ValueError: bad"})  # c failed as it was read
    shared = {"data": str(tmp_path), "redact": True, "allow": None, "tmp": str(tmp_path), "nonce": "0"}
    problems = write._render_runs(tmp_path, found, the_plan, shared, 1, None)
    assert problems == [(trace_c, "run page not built: ValueError: bad"), (trace_b, "TypeError: boom")]
    assert list(runs) == [a] and runs[a].files == ["runs/a.html"]  # b and c are listed nowhere and tried again next build


class Writer:
    """What `write._write_listings` asks of a SiteWriter: which files it keeps, renders and writes."""

    def __init__(self) -> None:
        self.kept: list[str] = []
        self.rendered: list[str] = []
        self.written: list[str] = []

    def seed(self, keep: list[str], folders: list[str]) -> None:
        self.kept += keep

    def render(self, pages: list[Any], progress: object) -> int:
        self.rendered += [p.path for p in pages]
        return len(pages)

    def write_text(self, path: str, text: str) -> None:
        self.written.append(path)


def test_only_the_index_is_written_again_when_nothing_but_the_build_time_changed(tmp_path: Path) -> None:
    from reporter.render.listings import Listings
    from reporter.render.runpage import Page
    site = tmp_path / "site"
    (site / "models").mkdir(parents=True)
    for name in ("index.html", "models/m.html", "runs.csv"):
        (site / name).write_text("as built")
    built = Listings([Page("index.html", "index.html", {"rows": [1]}), Page("models/m.html", "model.html", {"rows": [2]})],
                     {"runs.csv": "run_id\nr1\n"}, [], (status.Boards(("b", "c"), "h"),), [])
    first, second = Writer(), Writer()
    n, marks = write._write_listings(first, site, built, ["g", {"style.css": "style.1.css"}, "2026-01-01 10:00:00 UTC"], {}, None)
    assert n == 2 and first.rendered == ["index.html", "models/m.html"] and first.written == ["runs.csv"]
    n, again = write._write_listings(second, site, built, ["g", {"style.css": "style.1.css"}, "2026-01-01 11:00:00 UTC"], marks, None)
    assert (n, second.rendered, second.written) == (1, ["index.html"], [])  # the build time is on the index only
    assert sorted(second.kept) == ["models/m.html", "runs.csv"] and again["models/m.html"] == marks["models/m.html"]
    third = Writer()
    write._write_listings(third, site, built, ["g2", {"style.css": "style.1.css"}, "2026-01-01 11:00:00 UTC"], again, None)
    assert third.rendered == ["index.html", "models/m.html"]  # a changed global input: every page again


def test_the_status_redacts_each_run_entry_once(sample_site: Path, tmp_path: Path) -> None:
    # An entry the last status saved was redacted then: written as it is; a new or changed one goes through the
    # redactor (at 10,000 runs, redacting the whole status again was seconds of every rebuild).
    prev = status.BuildStatus.load(sample_site)
    assert prev.runs and all(rs.saved for rs in prev.runs.values())
    seen: list[str] = []

    def clean(text: str) -> str:
        seen.append(text)
        return text.replace("SECRET-VALUE", "[redacted: test]")
    (tmp_path / "same").mkdir()
    prev.save(tmp_path / "same", [], clean)
    assert seen and not any(rid in seen for rid in prev.runs)  # the head's values only: no saved entry is scanned
    assert json.loads((tmp_path / "same" / status.STATUS_FILE).read_text())["runs"] == \
        json.loads((sample_site / status.STATUS_FILE).read_text())["runs"]
    first = sorted(prev.runs)[0]
    prev.runs[first].files = [*prev.runs[first].files, "runs/SECRET-VALUE.txt"]  # changed since it was saved
    seen.clear()
    (tmp_path / "changed").mkdir()
    prev.save(tmp_path / "changed", [], clean)
    assert [rid for rid in prev.runs if rid in seen] == [first]  # each value of the changed entry, its id first
    text = (tmp_path / "changed" / status.STATUS_FILE).read_text()
    assert "SECRET-VALUE" not in text and "hex:" + b"runs/SECRET-VALUE.txt".hex() in text
    assert sorted(status.BuildStatus.load(tmp_path / "changed").runs) == sorted(prev.runs)
    assert "runs/SECRET-VALUE.txt" in status.BuildStatus.load(tmp_path / "changed").runs[first].files


def test_the_status_keeps_its_own_hashes_out_of_the_redactor(sample_site: Path, tmp_path: Path) -> None:
    # `4b1d` and 38 more characters is a ClickHouse key's shape; about 1 sha256 digest in 2,500 holds it. A redacted
    # page hash never matched again, so at 10,000 runs three run pages were rendered on every build.
    red = Redactor()

    def clean(text: str) -> str:
        return red.text(text, Counter())
    shaped = "7c46e3fe7eb2c9db4b1d" + "0123456789abcdef0123456789abcdef0123456789ab"
    assert clean(shaped) != shaped  # the redactor does call it a key
    prev = status.BuildStatus.load(sample_site)
    first = sorted(prev.runs)[0]
    rs = prev.runs[first]
    rs.page, rs.saved = shaped, ""
    path = sorted(rs.inputs)[0]
    rs.inputs[path] = [rs.inputs[path][0], rs.inputs[path][1], shaped]
    rs.files = [*rs.files, "runs/ghp_0123456789abcdefghijABCDEFGHIJ012345.txt"]  # a GitHub token in a name: redacted
    rs.inputs["traces/ghp_9876543210abcdefghijABCDEFGHIJ543210.json"] = [1, 2, "ab" * 32]  # and in an input's path
    rs.folders = [*rs.folders, "runs/ghp_5555543210abcdefghijABCDEFGHIJ543210"]
    prev.globals = prev.aggregates = prev.sources = shaped
    prev.listing = {**prev.listing, "index.html": shaped}
    prev.boards = tuple(dataclasses.replace(b, inputs=shaped) for b in prev.boards)
    prev.save(tmp_path, [], clean)
    again = status.BuildStatus.load(tmp_path)
    assert (again.globals, again.aggregates, again.sources, again.listing["index.html"]) == (shaped,) * 4
    assert again.runs[first].page == shaped and again.runs[first].inputs[path][2] == shaped
    assert again.boards and all(b.inputs == shaped for b in again.boards)
    text = (tmp_path / status.STATUS_FILE).read_text()
    # names holding a token are stored hex-encoded, never redacted: read back exactly, never in plain text
    assert not any(t in text for t in ("ghp_0123456789", "ghp_9876543210", "ghp_5555543210")) and "[redacted: " not in text
    assert "hex:" + b"runs/ghp_0123456789abcdefghijABCDEFGHIJ012345.txt".hex() in text
    assert "runs/ghp_0123456789abcdefghijABCDEFGHIJ012345.txt" in again.runs[first].files
    assert again.runs[first].inputs["traces/ghp_9876543210abcdefghijABCDEFGHIJ543210.json"] == [1, 2, "ab" * 32]
    assert "runs/ghp_5555543210abcdefghijABCDEFGHIJ543210" in again.runs[first].folders
