"""The build writes only what it owns: refusals, atomic swaps, recovery after kill -9, deterministic pages."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import DATA, ROOT
from reporter.cli import main
from reporter.errors import SiteError
from reporter.render.writer import BUILDING, MARKER, check_target, recover


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def build(data: Path, site: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reporter.cli", "build", str(data), str(site), "--no-validate"],
                          cwd=ROOT, capture_output=True, text=True, env={**os.environ, **env}, timeout=300)


def test_a_folder_that_is_not_a_site_is_refused_and_kept(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text("mine")
    res = CliRunner().invoke(main, ["build", str(DATA), str(project), "--no-validate"])
    assert res.exit_code != 0 and "not a reporter site" in res.output + str(res.exception)
    assert files(project) == {"README.md": b"mine"}


@pytest.mark.parametrize("where", ["same", "inside", "contains"])
def test_site_may_not_overlap_data(tmp_path: Path, sample_data: Path, where: str) -> None:
    site = {"same": sample_data, "inside": sample_data / "site", "contains": sample_data.parent}[where]
    before = files(sample_data)
    with pytest.raises(SiteError, match="overlap"):
        check_target(site, sample_data)
    res = CliRunner().invoke(main, ["build", str(sample_data), str(site), "--no-validate"])
    assert res.exit_code != 0 and files(sample_data) == before


def test_empty_folder_and_previous_site_are_accepted(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    check_target(site, DATA)
    assert build(DATA, site).returncode == 0 and (site / MARKER).is_file()
    check_target(site, DATA)  # a previous build may be replaced
    (site / "extra.txt").write_text("left by hand")
    assert build(DATA, site).returncode == 0 and not (site / "extra.txt").exists()


def test_leftovers_of_killed_builds_are_cleaned_but_nothing_else(tmp_path: Path) -> None:
    site = tmp_path / "site"
    ours_new, ours_old, theirs = (tmp_path / n for n in (".site.tmp-dead", ".site.building-abc", ".site.tmp-notours"))
    for d in (ours_new, ours_old / "static", theirs):
        d.mkdir(parents=True)
    (ours_new / BUILDING).write_text("")
    (theirs / "keep.txt").write_text("someone else's")
    assert build(DATA, site).returncode == 0
    assert not ours_new.exists() and not ours_old.exists()
    assert (theirs / "keep.txt").read_text() == "someone else's"


def test_a_site_caught_between_two_renames_is_restored(tmp_path: Path) -> None:
    site = tmp_path / "site"
    old = tmp_path / ".site.old-1234"
    old.mkdir()
    (old / MARKER).write_text("reporter\n")
    (old / "index.html").write_text("previous")
    recover(site)
    assert (site / "index.html").read_text() == "previous" and not old.exists()


def test_kill_at_any_point_leaves_the_previous_site_whole(tmp_path: Path) -> None:
    site = tmp_path / "site"
    assert build(DATA, site, SOURCE_DATE_EPOCH="1790000000").returncode == 0
    whole = files(site)
    for delay in (0.2, 0.6, 1.0, 1.4, 1.8, 2.4):
        proc = subprocess.Popen([sys.executable, "-m", "reporter.cli", "build", str(DATA), str(site), "--no-validate"],
                                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env={**os.environ, "SOURCE_DATE_EPOCH": "1790000000"})
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert files(site) == whole, f"site changed after a kill at {delay} s"
    assert build(DATA, site, SOURCE_DATE_EPOCH="1790000000").returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_only_the_index_and_build_info_carry_the_build_time(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert build(DATA, a, SOURCE_DATE_EPOCH="1790000000").returncode == 0
    assert build(DATA, b, SOURCE_DATE_EPOCH="1800000000").returncode == 0
    fa, fb = files(a), files(b)
    assert fa.keys() == fb.keys()
    # .reporter-status.json is build state (sizes and times of the files), never published
    assert sorted(k for k in fa if fa[k] != fb[k]) == [".reporter-status.json", "build-info.json", "index.html"]


def test_colliding_names_get_their_own_pages(tmp_path: Path) -> None:
    from conftest import minimal_trace, write_trace
    data = tmp_path / "data"
    for run_id, model in (("A", "GPT 4"), ("a", "gpt-4"), ("a-1", "GPT_4")):
        write_trace(data, run_id, minimal_trace(model=model, problem_file="x/1_Same.py"))
    res = CliRunner().invoke(main, ["build", str(data), str(tmp_path / "site"), "--no-validate"])
    assert res.exit_code == 0, res.output
    site = tmp_path / "site"
    models = sorted(p.name for p in (site / "models").iterdir())
    runs = sorted(p.name for p in (site / "runs").glob("*.html"))
    assert len(models) == 3 and len(runs) == 3, (models, runs)
    pages = {p.read_text() for p in (site / "models").iterdir()}
    assert all(any(f"<h1>{m} · " in page for page in pages) for m in ("GPT 4", "gpt-4", "GPT_4"))
