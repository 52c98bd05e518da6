"""The build writes only what it owns: refusals, atomic swaps, recovery after kill -9, deterministic pages."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import DATA, ROOT, small_copy
from reporter.cli import main
from reporter.core import __version__
from reporter.core.errors import SiteError
from reporter.render import fulltext
from reporter.render.writer import BUILDING, MARKER, check_target, recover


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def build(data: Path, site: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`reporter build DATA SITE --no-validate` through the CLI, in this process: a fresh interpreter per build
    cost ~2.5 CPU-s of imports. The kill test starts real processes, since it kills them."""
    res = CliRunner().invoke(main, ["build", str(data), str(site), "--no-validate"], env=env)
    return subprocess.CompletedProcess(["reporter", "build"], res.exit_code, res.stdout, res.stderr)


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
    site, data = tmp_path / "site", small_copy(tmp_path / "data")
    site.mkdir()
    check_target(site, data)
    assert build(data, site).returncode == 0 and (site / MARKER).is_file()
    check_target(site, data)  # a previous build may be replaced
    (site / "extra.txt").write_text("left by hand")
    assert build(data, site).returncode == 0 and (site / "extra.txt").read_text() == "left by hand"


def test_leftovers_of_killed_builds_are_cleaned_but_nothing_else(tmp_path: Path) -> None:
    site = tmp_path / "site"
    token = "0123456789abcdef" * 2
    ours = tmp_path / f".site.tmp-{token}"
    ours.mkdir()
    (ours / BUILDING).write_text(f"reporter 0.1.0\n{token}\n")
    (ours / "index.html").write_text("half-built")
    # Named like ours but not ours: no token, a wrong token, an old reporter's name, a user's backups.
    theirs = {".site.tmp-dead": BUILDING, ".site.tmp-" + "f" * 32: BUILDING, ".site.building-abc": "static/x.css",
              ".site.old-backup": MARKER, ".site.tmp-2": MARKER, ".site.old-" + "e" * 32: MARKER}
    for name, inside in theirs.items():
        (tmp_path / name / inside).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name / inside).write_text("reporter 0.1.0\n")
        (tmp_path / name / "keep.txt").write_text("someone else's")
    assert build(small_copy(tmp_path / "data"), site).returncode == 0
    assert not ours.exists()
    for name in theirs:
        assert (tmp_path / name / "keep.txt").read_text() == "someone else's", name


def test_a_build_killed_between_making_its_folder_and_naming_it_leaves_nothing(tmp_path: Path) -> None:
    site = tmp_path / "site"
    empty, partial, whole = (tmp_path / f".site.tmp-{c * 32}" for c in "abc")
    empty.mkdir()
    partial.mkdir()
    (partial / BUILDING).write_text("reporter ")  # the kill came during the one write
    whole.mkdir()
    (whole / BUILDING).write_text(f"reporter {__version__}\n{'c' * 32}\n")
    # Not a beginning of what the name calls for, or not alone: someone else's.
    other = tmp_path / f".site.tmp-{'d' * 32}"
    other.mkdir()
    (other / BUILDING).write_text("notes\n")
    crowded = tmp_path / f".site.tmp-{'e' * 32}"
    crowded.mkdir()
    (crowded / BUILDING).write_text("")
    (crowded / "mine.txt").write_text("keep")
    recover(site)
    assert not empty.exists() and not partial.exists() and not whole.exists()
    assert (other / BUILDING).read_text() == "notes\n" and (crowded / "mine.txt").read_text() == "keep"


def test_a_site_caught_between_two_renames_is_restored(tmp_path: Path, site_copy: Path) -> None:
    site = site_copy  # a previous build (conftest)
    old = tmp_path / (".site.old-" + "a" * 32)
    site.rename(old)
    decoy = tmp_path / ".site.old-backup"  # a user's copy of an earlier site: never moved into place
    shutil.copytree(old, decoy)
    (decoy / "index.html").write_text("my backup")
    recover(site)
    assert (site / "index.html").read_text() != "my backup" and not old.exists()
    assert (decoy / "index.html").read_text() == "my backup"


def test_user_files_in_the_site_are_kept_and_listed_once(tmp_path: Path, site_copy: Path) -> None:
    site = site_copy  # a previous build (conftest)
    (site / "CNAME").write_text("report.example.org\n")
    (site / "runs" / "notes.md").write_text("my notes")
    (site / ".git" / "objects").mkdir(parents=True)
    (site / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (site / "empty").mkdir()
    (site / "link").symlink_to("CNAME")
    mine = {"CNAME", "runs/notes.md", ".git/HEAD", "link"}
    before = {rel: os.lstat(site / rel).st_ino for rel in mine}
    res = build(DATA, site, SOURCE_DATE_EPOCH="1790000000")
    assert res.returncode == 0, res.stderr
    assert {rel: os.lstat(site / rel).st_ino for rel in mine} == before  # the same files, not copies
    assert (site / ".git" / "objects").is_dir() and (site / "empty").is_dir() and os.readlink(site / "link") == "CNAME"
    (line,) = [x for x in res.stderr.splitlines() if "reporter did not write" in x]
    assert all(name in line for name in (".git/HEAD", "CNAME", "empty/", "runs/notes.md", "link"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # the replaced site is gone, nothing else


def test_a_build_that_would_write_over_a_user_file_is_refused(site_copy: Path) -> None:
    site = site_copy  # a previous build (conftest)
    (site / "404.html").unlink()
    (site / "404.html").write_text("my own 404 page")  # a new file: no longer the one the build wrote
    status = (site / ".reporter-status.json").read_text()
    (site / ".reporter-status.json").write_text(status.replace('"404.html",', ""))
    marker = (site / MARKER).read_text().splitlines()
    digest = hashlib.sha256((site / ".reporter-status.json").read_bytes()).hexdigest()
    (site / MARKER).write_text("\n".join([*marker[:-1], f"status: {digest}"]) + "\n")
    res = build(DATA, site)
    assert res.returncode == 7 and "404.html" in res.stderr
    assert (site / "404.html").read_text() == "my own 404 page"


def test_a_stray_marker_does_not_make_a_folder_ours(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    (home / "thesis.tex").write_text("\\chapter{One}")
    (home / MARKER).write_text("reporter 0.1.0\nsource: an uncommitted tree\n")
    (home / ".reporter-status.json").write_text('{"written": ["thesis.tex"]}')
    before = files(home)
    res = build(DATA, home)
    assert res.returncode == 7 and "not a reporter site" in res.stderr
    assert files(home) == before


def test_export_never_overwrites_without_force(tmp_path: Path) -> None:
    out = tmp_path / "runs.csv"
    out.write_text("mine")
    res = CliRunner().invoke(main, ["export", str(DATA), "--out", str(out)])
    assert res.exit_code == 2 and "--force" in res.output and out.read_text() == "mine"
    res = CliRunner().invoke(main, ["export", str(DATA), "--out", str(out), "--force"])
    assert res.exit_code == 0 and out.read_text().startswith("run_id,")


def test_kill_at_any_point_leaves_the_previous_site_whole(tmp_path: Path, site_copy: Path) -> None:
    site = site_copy  # a previous build (conftest)
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


def test_only_the_index_and_build_info_carry_the_build_time(tmp_path: Path, sample_site: Path) -> None:
    a, b = sample_site, tmp_path / "b"  # a: built at the time the run started (conftest), b: in 2027
    assert build(DATA, b, SOURCE_DATE_EPOCH="1800000000").returncode == 0
    fa, fb = ({k: v for k, v in files(x).items() if not fulltext.unstable(k)} for x in (a, b))  # Pagefind's filter chunks
    assert fa.keys() == fb.keys()
    # .reporter-status.json is build state (sizes and times of the files), never published; the marker names its hash
    assert sorted(k for k in fa if fa[k] != fb[k]) == [".reporter-site", ".reporter-status.json", "build-info.json", "index.html"]


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
