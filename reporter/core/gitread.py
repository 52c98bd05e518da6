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
from collections.abc import Callable, Iterable
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


_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_MAX_DEPTH = 2  # a problems folder's files: levelN/P_name.py


def _commit_of(repo: object, rev: str) -> bytes | None:
    """The commit `rev` names in `repo` (a dulwich Repo): a date (the last commit on or before that day, UTC, on
    HEAD's history), a commit id or a unique prefix of one, or a branch, tag or remote-tracking branch."""
    from datetime import UTC, datetime

    from dulwich.objects import Commit, Tag
    from dulwich.repo import Repo
    assert isinstance(repo, Repo)
    if _DATE.match(rev):
        end = datetime.fromisoformat(rev).replace(tzinfo=UTC).timestamp() + 86400
        return next((e.commit.id for e in repo.get_walker(include=[repo.head()]) if e.commit.commit_time < end), None)
    if re.fullmatch(r"[0-9a-f]{4,64}", rev):
        found = list(repo.object_store.iter_prefix(rev.encode()))
        if len(found) == 1 and isinstance(repo[found[0]], Commit):
            return found[0]
    refs: dict[bytes, bytes] = {bytes(k): bytes(v) for k, v in repo.refs.as_dict().items()}
    for ref in (f"refs/heads/{rev}", f"refs/tags/{rev}", f"refs/remotes/{rev}", f"refs/remotes/origin/{rev}"):
        sha = refs.get(ref.encode())
        obj = repo[sha] if sha is not None else None
        while isinstance(obj, Tag):  # an annotated tag names its commit
            obj = repo[obj.object[1]]
        if isinstance(obj, Commit):
            return obj.id
    return None


def files_at(root: Path, rev: str, under: str, max_bytes: int,
             keep: Callable[[str], object] = lambda _: True) -> tuple[str, str, dict[str, bytes]]:
    """(commit id, its date, {path under `under`: content}) of the regular files below `under` (relative to `root`,
    "" for all of it, two folders deep at most) as of `rev` in the git checkout whose top folder is `root`; `keep`
    picks the paths (relative to `under`) worth reading.

    The objects are read and parsed by dulwich, as data: no git program, hook or configured filter runs. A file
    over `max_bytes`, a link or a submodule is left out. A `rev` that names no commit is a ValueError that says
    what it may be."""
    from datetime import UTC, datetime

    from dulwich.errors import NotGitRepository
    from dulwich.object_store import tree_lookup_path
    from dulwich.objects import Blob, Commit, Tree
    from dulwich.repo import Repo
    if git_dir(root) is None:
        raise ValueError(f"{root} is not the top folder of a git checkout")
    try:
        repo = Repo(str(root))
    except NotGitRepository as exc:
        raise ValueError(f"{root}: {exc}") from None
    with repo:
        sha = _commit_of(repo, rev)
        if sha is None:
            raise ValueError(f"{rev!r} names no commit of {root}: give a commit id, a branch or tag, or a date YYYY-MM-DD "
                             "(the last commit on or before it)")
        commit = repo[sha]
        assert isinstance(commit, Commit)
        tree_id = commit.tree if not under else tree_lookup_path(repo.__getitem__, commit.tree, under.encode())[1]
        out: dict[str, bytes] = {}

        def walk(tree: Tree, prefix: str, depth: int) -> None:
            for entry in tree.iteritems():
                name, mode, child = entry.path.decode("utf-8", "replace"), entry.mode, entry.sha
                if stat.S_ISDIR(mode) and depth < _MAX_DEPTH and isinstance(sub := repo[child], Tree):
                    walk(sub, f"{prefix}{name}/", depth + 1)
                elif stat.S_ISREG(mode) and keep(prefix + name) and isinstance(blob := repo[child], Blob) \
                        and blob.raw_length() <= max_bytes:
                    out[prefix + name] = blob.as_raw_string()  # only the files asked for are read
        top = repo[tree_id]
        if not isinstance(top, Tree):
            raise ValueError(f"{under} is not a folder at {sha.decode()[:12]}")
        walk(top, "", 0)
        when = datetime.fromtimestamp(commit.commit_time, UTC).date().isoformat()
        return sha.decode(), when, out
