"""Two inputs never share an output file: ids are the escaped folder path, group keys are tuples, and a
missing name is not the name "unknown"."""

from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner

from conftest import minimal_trace, write_trace
from reporter.cli import main


def build(data: Path, site: Path) -> dict[str, dict]:
    res = CliRunner().invoke(main, ["build", str(data), str(site), "--no-validate"])
    assert res.exit_code == 0, res.output
    return json.loads((site / ".reporter-status.json").read_text())["runs"]


def test_a_trace_at_the_top_and_one_in_a_folder_named_trace_are_two_runs(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "trace.json").write_text(json.dumps(minimal_trace(model="top")))
    write_trace(data, "trace", minimal_trace(model="folder"))
    runs = build(data, tmp_path / "site")
    assert {r["digest"]["model"] for r in runs.values()} == {"top", "folder"}
    assert len({r["files"][0] for r in runs.values()}) == 2


def test_a_byte_named_folder_and_its_printable_spelling_are_two_runs(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_trace(data, os.fsdecode(b"caf\xe9"), minimal_trace(model="bytes"))
    write_trace(data, "caf\\xe9", minimal_trace(model="text"))
    runs = build(data, tmp_path / "site")
    assert sorted(runs) == ["caf\\\\xe9", "caf\\xe9"]
    assert {r["digest"]["model"] for r in runs.values()} == {"bytes", "text"}


def test_the_key_separator_inside_names_merges_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_trace(data, "r1", minimal_trace(benchmark="kb", configuration="a\x1fb", model="m"))
    write_trace(data, "r2", minimal_trace(benchmark="kb", configuration="a", model="b\x1fm"))
    write_trace(data, "r3", minimal_trace(benchmark="b", configuration="c", level=2))
    write_trace(data, "r4", minimal_trace(benchmark="b", configuration="c\x1fl2", model="taker"))
    site = tmp_path / "site"
    build(data, site)
    models = [p.read_text() for p in (site / "models").glob("*.html")]
    assert len(models) == 4
    board = (site / "leaderboards" / "b--c--l2.html").read_text()  # group (b, c), level 2
    assert "model-a" in board and "taker" not in board
    assert len(list((site / "leaderboards").glob("*.html"))) == 4 * 2 * 2  # 4 groups × (all, level) × (both, re-validated)


def test_a_model_named_unknown_is_not_a_missing_model(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_trace(data, "named", minimal_trace(model="unknown"))
    write_trace(data, "missing", minimal_trace(model=None))
    site = tmp_path / "site"
    runs = build(data, site)
    pages = {p.name: p.read_text() for p in (site / "models").glob("*.html")}
    assert len(pages) == 2, sorted(pages)
    named = [t for t in pages.values() if "/named.html" in t or "runs/named" in t]
    missing = [t for t in pages.values() if "runs/missing" in t]
    assert len(named) == 1 and len(missing) == 1 and named != missing
    assert "model not recorded" in missing[0] and "model not recorded" not in named[0]
    assert {r["digest"]["model"] for r in runs.values()} == {"unknown", ""}


def test_problem_files_that_differ_only_by_py_get_a_page_each_named_for_its_own_file() -> None:
    from reporter.render.urls import Urls
    urls = Urls.build([], [], [], [(1, 19, "19_ReLU.py"), (1, 19, "19_ReLU"), (1, 20, "20_GELU.py")])
    pages = {k: urls.problem(k) for k in urls.problems}
    assert len(set(pages.values())) == 3, pages
    assert pages[(1, 19, "19_ReLU.py")] != pages[(1, 19, "19_ReLU")]
    assert "py" in pages[(1, 19, "19_ReLU.py")] and pages[(1, 20, "20_GELU.py")] == "problems/l1-p20--20-gelu.html"


def test_two_runs_of_colliding_problem_files_are_both_shown(tmp_path: Path) -> None:
    data = tmp_path / "data"
    for n, name in enumerate(("19_ReLU.py", "19_ReLU")):
        doc = minimal_trace(model=f"m{n}", level=1, problem_id=19, problem_file=name)
        write_trace(data, f"r{n}", doc)
    build(data, tmp_path / "site")
    pages = sorted((tmp_path / "site" / "problems").glob("l1-p19*.html"))
    assert len(pages) == 2, pages
    assert [("19_ReLU.py" in p.read_text(), "m0" in p.read_text()) for p in pages].count((True, True)) == 1
