"""The commit reader (`reporter.core.gitread`) against the cases round three's planted faults showed untested:
SHA-256 repositories, a `.git` file naming a folder out of DATA, a worktree's `commondir`, the blob id of a
touched but unchanged file, a HEAD ref climbing out with `..`, and a submodule entry.

Repositories are made with git itself (never on DATA: on a scratch folder this test owns) or written by hand;
the expected commits are git's own (`rev-parse`) or written here, never read back from the reader.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from reporter.core.gitread import _blob_id, git_dir, head_commit, source_commit

_ENV = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"}
_A = "a" * 40  # commits written by hand into hand-made .git folders
_B = "b" * 40


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@example.org", "-c", "user.name=t", *args],
                          check=True, capture_output=True, text=True, env=_ENV).stdout.strip()


def _repo(folder: Path, *init: str) -> str:
    """`folder` (already holding its files) made a repository with everything committed; its HEAD."""
    _git(folder, "init", "-q", "-b", "main", *init)
    _git(folder, "add", ".")
    _git(folder, "commit", "-qm", "data")
    return _git(folder, "rev-parse", "HEAD")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


# git-blob-header: git's blob ids, known values of the text "hello\n"
def test_blob_ids_are_gits_own() -> None:
    assert _blob_id(b"hello\n", 40) == "ce013625030ba8dba906f756967f9e9ca394464a"
    assert _blob_id(b"hello\n", 64) == "2cf8d83d9ee29543b34a87727421fdecb7e3f3a183d337639025de576db9ebb4"
    assert _blob_id(b"", 40) == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def test_a_touched_but_unchanged_file_is_not_a_change(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _write(data / "run" / "trace.json", '{"a": 1}')
    head = _repo(data)
    os.utime(data / "run" / "trace.json", ns=(1_000_000_000_123, 1_000_000_000_123))  # stat differs: content decides
    assert source_commit(data, ["run/trace.json"]) == head[:12]
    (data / "run" / "trace.json").write_text('{"a": 2}')  # and a real edit of the same size still shows
    assert source_commit(data, ["run/trace.json"]) == head[:12] + "+changes"


# git-sha256: a repository made with --object-format=sha256 has 64-digit ids
def test_a_sha256_repository_is_read(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _write(data / "trace.json", "hello\n")
    head = _repo(data, "--object-format=sha256")
    assert len(head) == 64
    assert head_commit(data) == head
    os.utime(data / "trace.json", ns=(1_000_000_000_123, 1_000_000_000_123))  # compared by its sha256 blob id
    assert source_commit(data, ["trace.json"]) == head[:12]


def test_a_hand_written_sha256_head_is_read(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _write(data / ".git" / "HEAD", "ref: refs/heads/main\n")
    _write(data / ".git" / "refs" / "heads" / "main", "c" * 64 + "\n")
    assert head_commit(data) == "c" * 64
    _write(data / ".git" / "HEAD", "d" * 64 + "\n")  # detached
    assert head_commit(data) == "d" * 64


# git-outside: a `.git` file whose gitdir names a folder out of DATA is never followed, not even resolved
@pytest.mark.parametrize("how", ["relative", "absolute", "through a link inside DATA"])
def test_a_git_file_naming_a_folder_out_of_data_gives_no_git_dir(tmp_path: Path, how: str) -> None:
    outside = tmp_path / "elsewhere" / ".git"
    _write(outside / "HEAD", f"{_A}\n")
    data = tmp_path / "data"
    data.mkdir()
    if how == "relative":
        pointer = "../elsewhere/.git"
    elif how == "absolute":
        pointer = str(outside)
    else:
        (data / "inner").symlink_to(outside)
        pointer = "inner"
    (data / ".git").write_text(f"gitdir: {pointer}\n")
    assert git_dir(data) is None
    assert head_commit(data) is None
    assert source_commit(data) == "an uncommitted tree"


def test_a_git_file_naming_a_folder_inside_data_gives_that_folder(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _write(data / ".store" / "HEAD", f"{_A}\n")
    (data / ".git").write_text("gitdir: .store\n")
    assert git_dir(data) == Path(os.path.realpath(data / ".store"))
    assert head_commit(data) == _A


# git-commondir-strip: a worktree's git folder holds HEAD; its branch lives in the common folder named by
# `commondir`, a file git ends with a newline
@pytest.mark.parametrize("packed", [False, True])
def test_a_worktree_branch_is_read_through_commondir(tmp_path: Path, packed: bool) -> None:
    data = tmp_path / "data"
    common = data / ".main-git"
    wt = common / "worktrees" / "wt"
    _write(wt / "HEAD", "ref: refs/heads/feature\n")
    _write(wt / "commondir", "../..\n")
    if packed:
        _write(common / "packed-refs", f"# pack-refs with: peeled fully-peeled sorted\n{_B} refs/heads/feature\n")
    else:
        _write(common / "refs" / "heads" / "feature", f"{_B}\n")
    (data / ".git").write_text("gitdir: .main-git/worktrees/wt\n")
    assert head_commit(data) == _B


def test_a_real_worktree_inside_data_is_read(tmp_path: Path) -> None:
    data = tmp_path / "data"
    main = data / "main"
    _write(main / "trace.json", "{}")
    _repo(main)
    _git(main, "worktree", "add", "-q", "-b", "feature", str(data / "wt"))
    _write(data / "wt" / "more.json", "{}")
    _git(data / "wt", "add", ".")
    _git(data / "wt", "commit", "-qm", "more")
    feature = _git(data / "wt", "rev-parse", "HEAD")
    # DATA is the worktree's parent here, so its git folder (in main/.git/worktrees/wt) lies inside DATA.
    (data / ".git").write_text("gitdir: main/.git/worktrees/wt\n")
    assert head_commit(data) == feature


# git-dotdot: HEAD may only name a ref under refs/, never a path that climbs out of the git folder
@pytest.mark.parametrize("ref", ["refs/../../x", "refs/heads/../../../x", "refs/..", "refs/heads/a..b"])
def test_a_head_ref_with_dotdot_is_not_read(tmp_path: Path, ref: str) -> None:
    data = tmp_path / "data"
    _write(data / ".git" / "HEAD", f"ref: {ref}\n")
    _write(data / "x", f"{_A}\n")  # what refs/../../x reaches from .git: a file of DATA, not a ref
    _write(data / ".git" / "refs" / "heads" / "a..b", f"{_A}\n")
    _write(data / ".git" / "refs" / "heads" / "main", f"{_B}\n")
    assert head_commit(data) is None


def test_a_plain_head_ref_is_read(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _write(data / ".git" / "HEAD", "ref: refs/heads/main\n")
    _write(data / ".git" / "refs" / "heads" / "main", f"{_B}\n")
    assert head_commit(data) == _B


# git-gitlink: a submodule's entry (mode 160000) names another repository's commit: never a change of ours
@pytest.mark.parametrize("checked_out", [False, True])
def test_a_submodule_entry_is_not_a_change(tmp_path: Path, checked_out: bool) -> None:
    data = tmp_path / "data"
    _write(data / "trace.json", "{}")
    _git(data, "init", "-q", "-b", "main")
    _git(data, "add", ".")
    _git(data, "update-index", "--add", "--cacheinfo", f"160000,{'e' * 40},vendor/sub")
    _git(data, "commit", "-qm", "with a submodule")
    head = _git(data, "rev-parse", "HEAD")
    assert "160000" in _git(data, "ls-files", "-s", "vendor/sub")
    if checked_out:
        _write(data / "vendor" / "sub" / "README", "another repository's file")
    assert source_commit(data, ["trace.json"]) == head[:12]
