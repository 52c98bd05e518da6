"""The commit a data folder is checked out at, read from its files: git itself is never run on DATA.

A repository's own configuration can make git run programs (`core.fsmonitor`, hooks, filter drivers), and
DATA is anyone's folder: a build that ran `git status` there let a tarball of runs execute a command as the
user. So the build reads `DATA/.git` as data, through the bounded reader: HEAD and the refs (loose or
packed) give the commit, the index (parsed by dulwich, which only parses here) says which files the commit
holds. Only DATA's own top-level `.git` counts: a `.git` file pointing out of DATA, or a repository in a
folder above DATA, is never read.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path

from .errors import CollectError
from .safeio import read_bounded

_HEX = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_REF = re.compile(r"^refs/[A-Za-z0-9._/-]+$")  # what a HEAD of ours may point to: no `..`, no absolute path
_GITLINK = 0o160000  # a submodule's entry: its files belong to another repository


def _read(path: Path, data: Path) -> str | None:
    try:
        return read_bounded(path, data, "(git)", "MAX_CONFIG_FILE_BYTES").decode("utf-8", "replace")
    except CollectError:
        return None


def git_dir(data: Path) -> Path | None:
    """DATA/.git, or the folder a `.git` file names when it lies inside DATA; None otherwise."""
    dot = data / ".git"
    try:
        mode = os.lstat(dot).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        text = _read(dot, data) or ""
        if not text.startswith("gitdir:"):
            return None
        dot = (data / text.removeprefix("gitdir:").strip()).resolve()
    elif not stat.S_ISDIR(mode):
        return None  # a link named .git could lead anywhere
    real = Path(os.path.realpath(dot))
    return real if real.is_relative_to(os.path.realpath(data)) and real.is_dir() else None


def _ref(gitdir: Path, data: Path, name: str) -> str | None:
    """A ref's commit from its loose file or packed-refs, in this git folder or the common one of a worktree."""
    folders = [gitdir]
    if common := _read(gitdir / "commondir", data):
        folders.append((gitdir / common.strip()).resolve())
    for folder in folders:
        loose = (_read(folder / name, data) or "").strip()
        if _HEX.match(loose):
            return loose
        for line in (_read(folder / "packed-refs", data) or "").splitlines():
            sha, _, ref = line.partition(" ")
            if ref.strip() == name and _HEX.match(sha):
                return sha
    return None


def head_commit(data: Path) -> str | None:
    """The full commit id DATA's own repository has checked out, or None (no repository, or not readable)."""
    gitdir = git_dir(data)
    if gitdir is None:
        return None
    head = (_read(gitdir / "HEAD", data) or "").strip()
    if _HEX.match(head):
        return head  # a detached HEAD
    name = head.removeprefix("ref:").strip()
    return _ref(gitdir, data, name) if head.startswith("ref:") and _REF.match(name) and ".." not in name else None


def _blob_id(content: bytes, width: int) -> str:
    h = hashlib.sha1() if width == 40 else hashlib.sha256()
    h.update(b"blob %d\0" % len(content) + content)
    return h.hexdigest()


def _differs(data: Path, name: str, mode: int, size: int, mtime: tuple[int, int], sha: str) -> bool:
    """Whether the working file differs from the committed entry: by its stat first, by its content when the
    stat cannot tell (git's own order)."""
    path = data / name
    try:
        st = os.lstat(path)
    except OSError:
        return True  # deleted
    if stat.S_ISLNK(mode) != stat.S_ISLNK(st.st_mode) or (not stat.S_ISLNK(st.st_mode) and not stat.S_ISREG(st.st_mode)):
        return True
    if st.st_size != size:
        return True
    if divmod(st.st_mtime_ns, 1_000_000_000) == mtime:
        return False
    if stat.S_ISLNK(st.st_mode):
        return _blob_id(os.fsencode(os.readlink(path)), len(sha)) != sha
    try:
        return _blob_id(read_bounded(path, data, "(git)", "MAX_ATTACHMENT_BYTES"), len(sha)) != sha
    except CollectError:
        return True


def _tracked(gitdir: Path, data: Path, width: int) -> dict[str, tuple[int, int, tuple[int, int], str]] | None:
    """The index's entries (path -> mode, size, mtime, blob id), or None when it cannot be read."""
    from dulwich.index import IndexEntry, read_index_dict
    from dulwich.object_format import SHA1, SHA256
    try:
        raw = read_bounded(gitdir / "index", data, "(git)", "MAX_INDEX_BYTES")
        entries = read_index_dict(io.BytesIO(raw), SHA1 if width == 40 else SHA256)
    except Exception:  # noqa: BLE001 - a truncated, split or future index: we cannot tell, and say so
        return None
    out = {}
    for name, entry in entries.items():
        if not isinstance(entry, IndexEntry):
            return None  # an unresolved merge
        mtime = entry.mtime if isinstance(entry.mtime, tuple) else (int(entry.mtime), 0)
        sha = entry.sha.decode() if isinstance(entry.sha, bytes) else str(entry.sha)
        out[os.fsdecode(name)] = (entry.mode, entry.size, (int(mtime[0]), int(mtime[1])), sha)
    return out


def source_commit(data: Path, inputs: Iterable[str] = ()) -> str:
    """What a site was built from: DATA's commit (12 digits), `+changes` when a committed file differs or is gone
    or when the build read a file (`inputs`, relative to DATA) the commit does not hold, `+unverified` when the
    index cannot be read; "an uncommitted tree" when DATA is not the top folder of a git checkout."""
    commit = head_commit(data)
    if commit is None:
        return "an uncommitted tree"
    gitdir = git_dir(data)
    tracked = _tracked(gitdir, data, len(commit)) if gitdir is not None else None
    if tracked is None:
        return commit[:12] + "+unverified"
    changed = any(n not in tracked for n in inputs) or any(
        _differs(data, name, mode, size, mtime, sha) for name, (mode, size, mtime, sha) in tracked.items() if mode != _GITLINK)
    return commit[:12] + ("+changes" if changed else "")


def commit_holding(root: Path, files: Iterable[str]) -> str | None:
    """`root`'s HEAD commit when `root` is the top folder of a git checkout whose index tracks every one of `files`
    (paths relative to `root`) unchanged; None otherwise (an untracked copy inside someone's own repository, an
    edited file, an index that cannot be read): the commit is then not the one those files come from."""
    commit = head_commit(root)
    gitdir = git_dir(root) if commit is not None else None
    tracked = _tracked(gitdir, root, len(commit)) if gitdir is not None and commit is not None else None
    if commit is None or tracked is None:
        return None
    names = list(files)
    if not names or any(n not in tracked or tracked[n][0] == _GITLINK or _differs(root, n, *tracked[n]) for n in names):
        return None
    return commit
