"""One digest per run: a rebuild parses only the traces that changed, and what it leaves equals a cold build.

The parent draws every listing page, leaderboard, grid, the search index and runs.csv from the digests
the build status keeps, so an unchanged trace is never opened again. Builds run in-process (`jobs=1`),
so every parse of a trace, in the parent or in a "worker", goes through the counted reader.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import SMALL_RUNS, small_copy
from reporter.collect import read, traces
from reporter.core import sitefiles
from reporter.render import fulltext, status
from reporter.render.digest import RunDigest
from reporter.render.incremental import build_incremental

RUNS = SMALL_RUNS
EDITED = "seed-000-l2-p10"
GROUP_000 = ("popcorn", "l12_default_gpt")  # seed 000's (benchmark, configuration)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return small_copy(tmp_path / "data")


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Each trace file parsed, by folder name: every reader of a trace document goes through `read_document`."""
    counts: Counter[str] = Counter()
    real = read.read_document

    def counted(path: Path, root: Path | None = None) -> dict[str, Any]:
        counts[path.parent.name] += 1
        return real(path, root)
    monkeypatch.setattr(read, "read_document", counted)
    monkeypatch.setattr(traces, "read_document", counted)
    return counts


def _edit_reasoning(data: Path, run: str, text: str) -> None:
    path = data / run / "trace.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["turns"][0]["reasoning"] = text
    path.write_text(json.dumps(doc), encoding="utf-8")


def test_a_rebuild_parses_only_the_changed_trace(data: Path, tmp_path: Path, parses: Counter[str]) -> None:
    site = tmp_path / "site"
    build_incremental(data, site, jobs=1)
    assert set(parses) == set(RUNS)  # the walk is counted: every run was read once, for its digest and its page
    assert all(n == 1 for n in parses.values()), parses
    # the pages written as the runs were read link their group, model, problem and neighbours: no stand-in is left
    assert not [p for p in site.rglob("*.html") if "\ue000" in p.read_text(encoding="utf-8")]
    parses.clear()
    assert build_incremental(data, site, jobs=1).up_to_date
    assert parses == Counter()  # nothing changed: no trace opened, not even for the leaderboards or runs.csv
    _edit_reasoning(data, EDITED, "an edited reasoning string")
    report = build_incremental(data, site, jobs=1)
    assert report.rendered == 1 and set(parses) == {EDITED}, parses


def _files(site: Path) -> dict[str, bytes]:
    # The build's own state names this build (its hashes, how many pages it wrote): everything else must match.
    skip = {*sitefiles.STATE, "build-info.json"}
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*"))
            if p.is_file() and p.name not in skip and sitefiles.CACHE_DIR not in p.parts
            and not fulltext.unstable(p.relative_to(site).as_posix())}


def _index_shape(site: Path) -> list[str]:
    # Pagefind names its chunks by a hash of bytes it writes in hash-map order: the same files, up to those hashes
    return sorted(re.sub(r"_[0-9a-f]{7,}\.", "_#.", p.relative_to(site).as_posix()) for p in (site / "pagefind").rglob("*")
                  if p.is_file())


def _assert_same_as_cold(data: Path, site: Path, tmp_path: Path, name: str) -> dict[str, bytes]:
    cold = tmp_path / f"cold-{name}"
    build_incremental(data, cold, jobs=1)
    got, want = _files(site), _files(cold)
    assert sorted(got) == sorted(want)
    assert _index_shape(site) == _index_shape(cold)
    assert [p for p in want if got[p] != want[p]] == []
    pages = [json.loads((s / "build-info.json").read_text())["pages"] for s in (site, cold)]  # the site's pages, not a build's
    assert pages[0] == pages[1] == sum(p.endswith(".html") for p in want), pages
    return got


@pytest.mark.slow  # minutes of builds on two cores: CI runs it (-m slow), the README's command leaves it out
@pytest.mark.fulltext
@pytest.mark.parametrize("change", ["edit", "add", "delete"])
def test_a_rebuild_equals_a_cold_build(data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    site = tmp_path / "site"
    build_incremental(data, site, jobs=1)
    if change == "edit":
        _edit_reasoning(data, EDITED, "reasoning edited between builds")
    elif change == "add":
        shutil.copytree(data / EDITED, data / "seed-900-added")
    else:
        shutil.rmtree(data / "seed-003-l2-p8")
    build_incremental(data, site, jobs=1)
    files = _assert_same_as_cold(data, site, tmp_path, change)
    assert "pagefind/00/pagefind.js" in _index_shape(site)  # the index was made again, as a cold build makes it
    text = "\n".join(b.decode("utf-8", "replace") for b in files.values())
    if change == "edit":
        assert "reasoning edited between builds" in files[f"runs/{EDITED}.turns.js"].decode()
    elif change == "add":
        assert "runs/seed-900-added.html" in files and "seed-900-added" in files["search/kimi-k2.6.js"].decode()
    else:
        assert not any("seed-003" in path for path in files) and "seed-003" not in text


def test_digests_round_trip_through_the_status(data: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    report = build_incremental(data, site, jobs=1)
    kept = status.BuildStatus.load(site).runs
    assert {d.run_id: d for d in report.digests} == {k: v.digest for k, v in kept.items()}
    d = kept[EDITED].digest
    assert isinstance(d, RunDigest) and RunDigest.from_json(json.loads(json.dumps(d.to_json()))) == d
    row = d.table_row()
    assert row["run_id"] == EDITED and row["level"] == 2 and row["problem_id"] == 10


def test_reporter_load_is_the_sites_runs_table(data: Path, tmp_path: Path, parses: Counter[str]) -> None:
    import pandas as pd

    import reporter
    from reporter import frames
    site = tmp_path / "site"
    build_incremental(data, site, jobs=1)
    parses.clear()
    table = reporter.load(data, site=site, jobs=1)
    assert parses == Counter()  # every row came from the site's digests
    assert frames.export_bytes(table, "csv") == (site / "runs.csv").read_bytes()
    assert sorted(table["run_id"]) == sorted(RUNS) and table.loc[table["run_id"] == EDITED, "level"].item() == 2
    fresh = reporter.load(data, jobs=1)  # no site: every trace is read, once
    assert parses == Counter(dict.fromkeys(RUNS, 1))
    pd.testing.assert_frame_equal(fresh, table)
    # the rows made from the collected records directly, with no digest in between, agree row for row
    from reporter.collect import collect
    from reporter.collect.redact import Redactor, load_allow_list
    from reporter.collect.validation import load_validations
    runs = collect(data).runs
    direct = frames.runs_frame(runs, load_validations(data, runs, Redactor(load_allow_list(data)[0]))[0])
    pd.testing.assert_frame_equal(fresh, direct)
    _edit_reasoning(data, EDITED, "changed after the build")
    parses.clear()
    reporter.load(data, site=site, jobs=1)
    assert parses == Counter({EDITED: 1})


@pytest.mark.slow  # minutes of builds on two cores: CI runs it (-m slow), the README's command leaves it out
def test_an_edited_reasoning_string_keeps_the_leaderboards_and_an_added_run_ranks_its_group_again(data: Path, tmp_path: Path) -> None:
    path = data / "seed-003-l2-p8" / "trace.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["run"]["configuration"] = "another_configuration"  # seeds 000 and 003 in two groups
    path.write_text(json.dumps(doc), encoding="utf-8")
    site = tmp_path / "site"
    build_incremental(data, site, jobs=1)
    boards = {b.group: b for b in status.BuildStatus.load(site).boards if b.files}  # the partial run's group has none
    assert sorted(boards) == [("popcorn", "another_configuration"), GROUP_000]
    files = [f for b in boards.values() for f in b.files]
    assert all(any(f.endswith(".html") for f in b.files) for b in boards.values())
    inodes = {f: (site / f).stat().st_ino for f in files}
    _edit_reasoning(data, EDITED, "a reasoning string is in no table")
    assert build_incremental(data, site, jobs=1).rendered == 1
    assert {f: (site / f).stat().st_ino for f in files} == inodes  # kept as they were, not ranked again
    shutil.copytree(data / EDITED, data / "seed-901-added")  # a run in seed 000's group
    build_incremental(data, site, jobs=1)
    again = {b.group: b for b in status.BuildStatus.load(site).boards}
    grown, other = boards[GROUP_000], next(b for k, b in boards.items() if k != GROUP_000)
    assert again[GROUP_000].inputs != grown.inputs
    assert any((site / f).stat().st_ino != inodes[f] for f in grown.files)  # that group was ranked again
    assert again[other.group] == other and all((site / f).stat().st_ino == inodes[f] for f in other.files)  # the other kept


@pytest.mark.slow  # minutes of builds on two cores: CI runs it (-m slow), the README's command leaves it out
def test_grid_and_problem_pages_are_made_only_where_their_runs_changed(data: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from reporter.render import pages
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")  # the index shows the build time
    made: Counter[str] = Counter()
    def counting(real: Any) -> Any:
        def counted(*args: Any, **kwargs: Any) -> Any:
            page = real(*args, **kwargs)
            made[page.path] += 1
            return page
        return counted
    for name in ("grid_page", "problem_page"):
        monkeypatch.setattr(pages, name, counting(getattr(pages, name)))
    site = tmp_path / "site"
    build_incremental(data, site, jobs=1)
    problems = sorted(p for p in made if p.startswith("problems/"))
    assert [p.split("--")[0] for p in problems] == ["problems/l2-p10", "problems/l2-p8"]
    assert any(p.startswith("grids/") for p in made)
    made.clear()
    _edit_reasoning(data, EDITED, "a reasoning string: no table row or listing row changes")
    assert build_incremental(data, site, jobs=1).rendered == 1
    assert made == Counter()  # neither a grid nor a problem page was made: their inputs are the last build's
    path = data / "seed-003-l2-p8" / "trace.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["run"]["tokens_total"] = 12345  # in seed 003's table row: its problem page and its group's grid change
    path.write_text(json.dumps(doc), encoding="utf-8")
    build_incremental(data, site, jobs=1)
    remade = sorted(made)
    assert [p.split("--")[0] for p in remade if p.startswith("problems/")] == ["problems/l2-p8"]
    assert [p for p in remade if p.startswith("grids/")] != []
    assert not [p for p in remade if not p.startswith(("problems/", "grids/"))]
    _assert_same_as_cold(data, site, tmp_path, "tokens")
