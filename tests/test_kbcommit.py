"""`reporter import kernelbench --kernelbench-commit REV` reads each problem file as of the version the runs were
scored with, from the KernelBench checkout --problems is in, as data (issue 45, item 2): a commit id or prefix, a
branch or tag, or a date; the commit is recorded in the problem set and named on each run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import ROOT
from reporter.cli import main
from reporter.collect import collect

KB = ROOT / "tests" / "fixtures" / "kernelbench"
GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed (the test makes a repository with it)")
MATMUL = (KB / "problems" / "level1" / "1_Square_matrix_multiplication_.py").read_text()


def git(repo: Path, *args: str, when: str = "2025-01-15T12:00:00+00:00") -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when, "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    return subprocess.run([GIT or "git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=env).stdout.strip()


@pytest.fixture
def checkout(tmp_path: Path) -> tuple[Path, str, str]:
    """A KernelBench checkout (problems in KernelBench/KernelBench/level1) with two versions of problem 1."""
    repo = tmp_path / "KernelBench"
    level = repo / "KernelBench" / "level1"
    level.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (level / "1_Square_matrix_multiplication_.py").write_text(MATMUL.replace("N = 256", "N = 128"))
    shutil.copy(KB / "problems" / "level1" / "2_ReLU.py", level / "2_ReLU.py")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "early")
    first = git(repo, "rev-parse", "HEAD")
    git(repo, "tag", "v0.1")
    (level / "1_Square_matrix_multiplication_.py").write_text(MATMUL)  # N = 256, as the fixture
    git(repo, "commit", "-q", "-am", "bigger", when="2025-12-01T12:00:00+00:00")
    return repo / "KernelBench", first, git(repo, "rev-parse", "HEAD")


def _import(problems: Path, out: Path, *extra: str) -> str:
    res = CliRunner().invoke(main, ["import", "kernelbench", str(KB / "run_new"), "--problems", str(problems),
                                    "--out", str(out), "--no-work", *extra])
    assert res.exit_code == 0, res.output
    return res.output


def _reference(out: Path) -> str:
    ref = {r.trace.run.problem_id: r for r in collect(out).runs}[1].trace.reference_source
    assert ref is not None
    return ref


@pytest.mark.parametrize("rev", ["2025-06-01", "2025-01-15", "v0.1", "FIRST", "FIRST7"])  # a date: on or before it
def test_the_problem_files_as_of_a_commit(checkout: tuple[Path, str, str], tmp_path: Path, rev: str) -> None:
    problems, first, _ = checkout
    rev = {"FIRST": first, "FIRST7": first[:7]}.get(rev, rev)
    out = tmp_path / "data"
    _import(problems, out, "--kernelbench-commit", rev)
    assert "N = 128" in _reference(out)  # the early file, not the one on disk
    recorded = json.loads((out / "kernelbench-problems.json").read_text())
    assert (recorded["commit"], recorded["source"]) == (first, "KernelBench")
    note = {r.trace.run.problem_id: r for r in collect(out).runs}[1].trace.run.source_note or ""
    assert f"Problem files read from KernelBench commit {first[:12]} (2025-01-15) of KernelBench." in note


def test_without_a_commit_the_files_on_disk_and_the_checkouts_head(checkout: tuple[Path, str, str], tmp_path: Path) -> None:
    problems, _, head = checkout
    out = tmp_path / "data"
    _import(problems, out)
    assert "N = 256" in _reference(out)
    assert json.loads((out / "kernelbench-problems.json").read_text())["commit"] == head
    assert "Problem files read from" not in ({r.trace.run.problem_id: r for r in collect(out).runs}[1].trace.run.source_note or "")


@pytest.mark.parametrize(("rev", "says"), [("no-such-branch", "names no commit"), ("1999-01-01", "names no commit")])
def test_a_commit_that_is_not_there_writes_nothing(checkout: tuple[Path, str, str], tmp_path: Path, rev: str, says: str) -> None:
    problems, _, _ = checkout
    res = CliRunner().invoke(main, ["import", "kernelbench", str(KB / "run_new"), "--problems", str(problems),
                                    "--out", str(tmp_path / "data"), "--kernelbench-commit", rev])
    assert res.exit_code == 2 and says in res.output and "nothing was written" in res.output
    assert not (tmp_path / "data").exists()


def test_the_day_before_the_second_commit_is_the_first_and_its_day_the_second(checkout: tuple[Path, str, str], tmp_path: Path) -> None:
    problems, first, head = checkout
    _import(problems, tmp_path / "a", "--kernelbench-commit", "2025-11-30")
    _import(problems, tmp_path / "b", "--kernelbench-commit", "2025-12-01")
    assert [json.loads((tmp_path / d / "kernelbench-problems.json").read_text())["commit"] for d in ("a", "b")] == [first, head]


def test_messages_name_the_folder_given_at_its_commit_never_a_temporary_copy(checkout: tuple[Path, str, str], tmp_path: Path) -> None:
    problems, first, _ = checkout
    repo = problems.parent
    git(repo, "rm", "-q", "KernelBench/level1/2_ReLU.py")
    git(repo, "commit", "-q", "-m", "drop relu", when="2026-01-01T12:00:00+00:00")
    last = git(repo, "rev-parse", "HEAD")
    args = ["import", "kernelbench", str(KB / "run_new"), "--problems", str(problems), "--no-work", "--kernelbench-commit", last]
    refused = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "a")])
    assert refused.exit_code == 2 and f"{problems}@{last[:12]}/level1" in refused.output, refused.output
    kept = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "b"), "--allow-missing-reference"])
    assert kept.exit_code == 0 and f"no problem file 2_*.py under {problems}@{last[:12]}/level1" in kept.output, kept.output
    assert "reporter-kernelbench-" not in refused.output + kept.output
    assert first != last


def test_a_folder_outside_git_says_so(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["import", "kernelbench", str(KB / "run_new"), "--problems", str(KB / "problems"),
                                    "--out", str(tmp_path / "data"), "--kernelbench-commit", "main"])
    assert res.exit_code == 2 and "is not inside a git checkout" in res.output


def test_only_the_files_asked_for_are_read(checkout: tuple[Path, str, str]) -> None:
    from reporter.core.gitread import files_at
    problems, _, head = checkout
    (problems / "notes.txt").write_text("not a problem file\n")
    git(problems.parent, "add", ".")
    git(problems.parent, "commit", "-q", "-m", "notes", when="2026-02-01T12:00:00+00:00")
    seen: list[str] = []
    sha, when, files = files_at(problems.parent, "main", "KernelBench", 10**6, lambda p: seen.append(p) or p.endswith(".py"))
    assert sorted(files) == ["level1/1_Square_matrix_multiplication_.py", "level1/2_ReLU.py"] and "notes.txt" in seen
    assert when == "2026-02-01" and sha != head
    assert sorted(files_at(problems.parent, "main", "KernelBench", 10**6)[2]) == [*sorted(files), "notes.txt"]
