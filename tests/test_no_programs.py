"""No program runs from DATA: a data folder's git configuration (core.fsmonitor, hooks), a repository above
it, or a `.git` file pointing out of it must never make a build run anything (issue 32, item 1).

Each trap runs a script that writes a file; the build (or the marker's commit reader it calls) must leave
no such file, and still say what it can of the data's commit.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import small_copy
from reporter.cli import main
from reporter.core.gitread import head_commit, source_commit
from reporter.core.marker import MARKER

# git must not read the test machine's own settings while the test makes its repositories.
_CLEAN = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"}


def git(repo: Path, *args: str) -> str:
    env = {"PATH": "/usr/bin:/bin", **_CLEAN}
    return subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@example.org", "-c", "user.name=t", *args],
                          check=True, capture_output=True, text=True, env=env).stdout.strip()


def committed_repo(folder: Path) -> str:
    """`folder` made a repository with everything in it committed; its HEAD."""
    git(folder, "init", "-q", "-b", "main")
    git(folder, "add", ".")
    git(folder, "commit", "-qm", "data")
    return git(folder, "rev-parse", "HEAD")


def trap(repo_gitdir: Path, out: Path) -> Path:
    """Set every way a repository's own config can run a program: an fsmonitor command and a hooks folder."""
    script = out.parent / f"{out.name}.sh"
    script.write_text(f"#!/bin/sh\ntouch {out}\n")
    script.chmod(0o755)
    hooks = out.parent / f"{out.name}-hooks"
    hooks.mkdir()
    for hook in ("post-checkout", "pre-commit", "post-index-change", "reference-transaction"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {out}\n")
        (hooks / hook).chmod(0o755)
    with (repo_gitdir / "config").open("a") as fh:
        fh.write(f"[core]\n\tfsmonitor = {script}\n\thooksPath = {hooks}\n")
    return out


def test_a_data_repository_configured_to_run_programs_builds_without_running_them(tmp_path: Path) -> None:
    data = small_copy(tmp_path / "data")
    head = committed_repo(data)
    pwned = trap(data / ".git", tmp_path / "pwned-data")
    # What the build used to run is a real trap: plain `git status` there runs the script.
    subprocess.run(["git", "-C", str(data), "status", "--porcelain"], capture_output=True, env={"PATH": "/usr/bin:/bin", **_CLEAN})
    assert pwned.exists()
    pwned.unlink()
    res = CliRunner().invoke(main, ["build", str(data), str(tmp_path / "site"), "--no-validate"])
    assert res.exit_code == 0, res.output
    assert not pwned.exists()
    assert f"source: {head[:12]}\n" in (tmp_path / "site" / MARKER).read_text()


def test_a_repository_above_data_is_never_consulted(tmp_path: Path) -> None:
    outer = tmp_path / "tarball"
    data = outer / "runs" / "data"
    data.mkdir(parents=True)
    (data / "trace.json").write_text("{}")
    committed_repo(outer)
    pwned = trap(outer / ".git", tmp_path / "pwned-above")
    assert head_commit(data) is None
    assert source_commit(data, ["trace.json"]) == "an uncommitted tree"
    assert not pwned.exists()


@pytest.mark.parametrize("pointer", ["gitdir: ../elsewhere/.git", "gitdir: {abs}"])
def test_a_git_file_pointing_out_of_data_is_not_followed(tmp_path: Path, pointer: str) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "trace.json").write_text("{}")
    committed_repo(elsewhere)
    pwned = trap(elsewhere / ".git", tmp_path / "pwned-file")
    data = tmp_path / "data"
    data.mkdir()
    (data / "trace.json").write_text("{}")
    (data / ".git").write_text(pointer.format(abs=elsewhere / ".git") + "\n")
    assert head_commit(data) is None and source_commit(data) == "an uncommitted tree"
    assert not pwned.exists()


def test_a_git_file_inside_data_and_a_linked_git_folder(tmp_path: Path) -> None:
    # A `.git` file naming a folder inside DATA is how worktrees and submodules look: it is read.
    data = tmp_path / "data"
    data.mkdir()
    (data / "trace.json").write_text("{}")
    head = committed_repo(data)
    (data / ".git").rename(data / ".real-git")
    (data / ".git").write_text("gitdir: .real-git\n")
    assert head_commit(data) == head
    # A link named .git is not: it could lead anywhere.
    (data / ".git").unlink()
    (data / ".git").symlink_to(data / ".real-git")
    assert head_commit(data) is None


def test_changes_against_the_commit(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "run").mkdir(parents=True)
    (data / "run" / "trace.json").write_text('{"a": 1}')
    (data / "README").write_text("x")
    head = committed_repo(data)[:12]
    assert source_commit(data, ["run/trace.json"]) == head
    git(data, "pack-refs", "--all")  # the branch now lives in packed-refs only
    assert source_commit(data, ["run/trace.json"]) == head
    (data / "run" / "trace.json").write_text('{"a": 2}')  # same size, new content
    assert source_commit(data, ["run/trace.json"]) == head + "+changes"
    git(data, "checkout", "-q", "--", "run/trace.json")
    assert source_commit(data, ["run/trace.json"]) == head
    (data / "README").unlink()  # a committed file is gone
    assert source_commit(data, ["run/trace.json"]) == head + "+changes"
    git(data, "checkout", "-q", "--", "README")
    assert source_commit(data, ["run/trace.json", "new/trace.json"]) == head + "+changes"  # read, but not committed
    (data / ".git" / "index").write_bytes(b"DIRC garbage")
    assert source_commit(data, ["run/trace.json"]) == head + "+unverified"
