"""Write a site without ever destroying what is not ours, and swap it in atomically.

SITE must be absent, empty, or a previous build (it holds MARKER); it may not be DATA, contain it or lie
inside it. Pages are rendered into a temporary folder beside SITE, which then trades places with SITE
in one `renameat2(RENAME_EXCHANGE)` call, so a reader (or a `kill -9`) sees either the old site or the
new one, whole. Where the kernel has no exchange, two renames are used and a site left half-swapped is
restored by the next build. Temporary folders of killed builds are removed by the next build.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import fcntl
import hashlib
import os
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import plotly.offline
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from .. import __version__
from ..errors import SiteError
from ..publish.pages import MARKER, marker_text  # MARKER: in every finished build, this folder is ours to replace
from ..vocab import RevalidationState, ReviewStatus, RunVerdict, Source
from . import numbers, text
from .assets import asset_dir
from .runpage import Page

BUILDING = ".reporter-building"  # in every temporary folder from the moment it exists
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def check_target(site: Path, data: Path) -> None:
    """Refuse an output folder the build would damage; the message says what to do instead."""
    if site.is_symlink():
        raise SiteError(f"{site} is a symbolic link; give the folder itself as SITE")
    s, d = site.resolve(), data.resolve()
    if s == d or s.is_relative_to(d) or d.is_relative_to(s):
        raise SiteError(f"SITE ({site}) and DATA ({data}) overlap: the build replaces SITE whole, which would delete "
                        "the traces; choose a separate folder, e.g. `reporter build DATA site/`")
    if s.exists() and not s.is_dir():
        raise SiteError(f"{site} exists and is not a folder; choose another SITE")
    if s.is_dir() and not (s / MARKER).is_file() and any(s.iterdir()):
        raise SiteError(f"{site} is not empty and is not a reporter site (no {MARKER} file): refusing to replace it. "
                        "Choose a new or empty folder for SITE")


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2); False where the call is not available."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    fn = getattr(libc, "renameat2", None)
    if fn is None:
        return False
    return bool(fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0)


def _ours(folder: Path) -> bool:
    if not folder.is_dir() or folder.is_symlink():
        return False
    if (folder / BUILDING).is_file() or (folder / MARKER).is_file():
        return True
    # reporter 0.1 named its temporary folders `.SITE.building-*` and wrote the assets into them first.
    return ".building-" in folder.name and (folder / "static").is_dir()


def recover(site: Path) -> None:
    """Undo what a killed build left: restore a site caught between two renames, drop temporary folders."""
    leftovers = sorted(p for p in site.parent.glob(f".{site.name}.*-*")
                       if p.name.split(".")[-1].startswith(("tmp-", "old-", "building-")))
    if not site.exists():
        old = [p for p in leftovers if ".old-" in p.name and (p / MARKER).is_file()]
        if old:
            old[-1].rename(site)
            leftovers.remove(old[-1])
    for p in leftovers:
        if _ours(p):
            shutil.rmtree(p)


def template_env() -> Environment:
    """The templates, autoescaping; one per process (workers render run pages with their own)."""
    env = Environment(loader=FileSystemLoader(str(asset_dir("templates"))), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(num=text.num, ms=text.ms, speedup=text.speedup, markdown=text.markdown, plain=text.plain,
                       prose=text.prose, code=text.code, json_args=text.json_args, n=numbers.nowrap,
                       logtext=text.home_paths)
    # The vocabulary, so a template compares with `RevalidationState.NO_KERNEL`, never a string spelled again.
    env.globals.update(RevalidationState=RevalidationState, ReviewStatus=ReviewStatus, RunVerdict=RunVerdict, Source=Source)
    return env


def render_page(env: Environment, page: Page, assets: dict[str, str], generated: str) -> str:
    depth = page.path.count("/")
    ctx: dict[str, Any] = {"rel": "../" * depth, "version": __version__, "assets": assets,
                           "generated": generated if page.path == "index.html" else None, **page.context}
    return env.get_template(page.template).render(ctx)


def write_new(root: Path, rel: str, content: str) -> None:
    """Write a file as a new inode: a build folder seeded with hard links to the live site is never written through."""
    out = root / rel
    out.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(out)
    out.write_text(content, encoding="utf-8")


class SiteWriter:
    """Renders pages into a temporary folder; `commit()` swaps it in, leaving without it changes nothing."""

    def __init__(self, site: Path, data: Path, generated: str) -> None:
        check_target(site, data)
        self.site = site.absolute()
        self.data = data
        self.generated = generated
        self.env = template_env()
        self.assets: dict[str, str] = {}
        self.tmp: Path | None = None
        self._lock_fd: int | None = None

    def __enter__(self) -> SiteWriter:
        self.site.parent.mkdir(parents=True, exist_ok=True)
        # One build per parent folder at a time: cleanup must never remove a concurrent build's folder.
        self._lock_fd = os.open(self.site.parent, os.O_RDONLY)
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
        recover(self.site)
        self.tmp = self.site.with_name(f".{self.site.name}.tmp-{secrets.token_hex(4)}")
        self.tmp.mkdir()
        (self.tmp / BUILDING).write_text(f"reporter {__version__}\n", encoding="utf-8")
        self._write_assets()
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self.tmp is not None and self.tmp.exists():
                shutil.rmtree(self.tmp)
        finally:
            if self._lock_fd is not None:
                os.close(self._lock_fd)  # releases the lock

    def _out(self, rel: str) -> Path:
        assert self.tmp is not None, "use SiteWriter as a context manager"
        out = self.tmp / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        return out

    def write_text(self, rel: str, content: str) -> None:
        assert self.tmp is not None, "use SiteWriter as a context manager"
        write_new(self.tmp, rel, content)

    def seed(self, keep: list[str], folders: list[str]) -> None:
        """Hard-link files (and whole folders) of the live site that this build keeps into the new one."""
        assert self.tmp is not None, "use SiteWriter as a context manager"
        files = list(keep) + [p.relative_to(self.site).as_posix() for f in folders if (self.site / f).is_dir()
                              for p in (self.site / f).rglob("*") if p.is_file()]
        for rel in files:
            src = self.site / rel
            if src.is_file() and not src.is_symlink():
                self._out(rel)
                os.link(src, self.tmp / rel)

    def render(self, pages: list[Page], progress: Callable[[int, int], None] | None = None) -> int:
        n = 0
        for page in pages:
            self.write_text(page.path, render_page(self.env, page, self.assets, self.generated))
            n += 1
            if progress is not None:
                progress(n, len(pages))
        return n

    def _write_assets(self) -> None:
        blobs: dict[str, bytes] = {p.name: p.read_bytes() for p in sorted(asset_dir("static").iterdir()) if p.is_file()}
        blobs["pygments.css"] = text.pygments_css().encode()
        blobs["plotly.min.js"] = plotly.offline.get_plotlyjs().encode()
        for name, blob in blobs.items():
            # Content-hashed names so GitHub Pages' CDN never serves a stale stylesheet or script.
            stem, _, ext = name.rpartition(".")
            hashed = f"static/{stem}.{hashlib.sha256(blob).hexdigest()[:8]}.{ext}"
            self._out(hashed).write_bytes(blob)
            self.assets[name] = hashed

    def commit(self) -> None:
        """Mark the build finished and put it in place of SITE in one step."""
        assert self.tmp is not None
        (self.tmp / ".nojekyll").write_text("", encoding="utf-8")
        (self.tmp / MARKER).write_text(marker_text(self.data), encoding="utf-8")
        (self.tmp / BUILDING).unlink()
        if not self.site.exists():
            self.tmp.rename(self.site)
        elif _exchange(self.tmp, self.site):
            shutil.rmtree(self.tmp)  # now the previous site
        else:
            old = self.site.with_name(f".{self.site.name}.old-{secrets.token_hex(4)}")
            self.site.rename(old)
            self.tmp.rename(self.site)
            shutil.rmtree(old)
        self.tmp = None
