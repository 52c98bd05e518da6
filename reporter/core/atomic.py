"""Replacing a file whole, safely beside other writers: the one way a build, an import or a validator writes.

The temporary file is made by `tempfile.mkstemp` in the target's own folder, so its name is unique to
this writer (two forked render workers once named theirs after an object's address, which both had, and
one's rename took the other's file), and `os.replace` swaps it in atomically: a reader sees the old file or
the new one, never half of either. When two writers race for one cache entry both renames succeed and the
last one stays; for content-keyed entries they are the same bytes. Standard library only: the GPU worker
imports this.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


def replace_file(path: Path, content: str | bytes) -> Path:
    """Write `content` to `path` as a new inode (a hard link or symlink standing at `path` is replaced, never
    written through), creating the folder; returns `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:100]}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(content.encode("utf-8") if isinstance(content, str) else content)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


@contextlib.contextmanager
def locked(folder: Path, name: str) -> Iterator[None]:
    """Hold an exclusive lock on `folder/name` (made if missing, never removed: a removed lock file lets a third
    writer lock a new inode while the second still holds the old one), for a read-modify-write that two processes
    may run at once, such as two imports into one OUT updating its log."""
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / name, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
