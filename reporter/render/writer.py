"""Write a site without ever destroying what is not ours, and swap it in atomically.

SITE must be absent, empty, or a previous build: its MARKER names the hash of its status file, which
lists every file that build wrote (`core.sitefiles.owned_files`); a stray MARKER alone proves nothing. SITE may
not be DATA, contain it or lie inside it. Pages are rendered into a temporary folder beside SITE, which
then trades places with SITE in one `renameat2(RENAME_EXCHANGE)` call, so a reader (or a `kill -9`) sees
either the old site or the new one, whole. Where the kernel has no exchange, two renames are used and a
site left half-swapped is restored by the next build.

Files in SITE that the previous build did not write (a CNAME, notes, a `.git/`) are hard-linked into the
new site and listed in one message; a build that would write over one of them is refused. Temporary
folders are named `.SITE.tmp-<32 hex>` with the same token in their BUILDING file, and a replaced site
loses only the files its status lists (and those that live on in the new site): a folder that merely
looks like ours is never removed.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import fcntl
import functools
import glob
import hashlib
import importlib.util
import logging
import os
import re
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from ..core import __version__
from ..core.atomic import replace_file
from ..core.errors import CollectError, SiteError
from ..core.marker import MARKER, marker_text
from ..core.safeio import read_bounded
from ..core.sitefiles import STATUS_FILE, STATUS_PREFIX, foreign_files, is_state, owned_files
from ..core.vocab import RevalidationState, ReviewStatus, RunVerdict, Source
from . import numbers, text, verify
from .assets import asset_dir
from .runpage import Page

log = logging.getLogger(__name__)
BUILDING = ".reporter-building"  # in every temporary folder from the moment it exists, holding its name's token
NOJEKYLL = ".nojekyll"
_TEMPORARY = re.compile(r"\.(?P<site>.+)\.(?P<kind>tmp|old)-(?P<token>[0-9a-f]{32})")
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100



def plotly_js() -> bytes:
    """The plotly.js bundle that the plotly package ships (what `plotly.offline.get_plotlyjs` returns), read
    without importing plotly: the figures are plain dicts, so nothing else of the package is needed."""
    spec = importlib.util.find_spec("plotly")
    if spec is None or not spec.submodule_search_locations:
        raise SiteError("plotly is not installed: the site's charts need its plotly.min.js (pip install plotly)")
    return (Path(spec.submodule_search_locations[0]) / "package_data" / "plotly.min.js").read_bytes()

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
    if s.is_dir() and any(s.iterdir()) and owned_files(s) is None:
        raise SiteError(f"{site} is not empty and is not a reporter site (no {MARKER} naming the hash of its {STATUS_FILE}, "
                        "the list of files a build wrote): refusing to build into it. Choose a new or empty folder for SITE "
                        "(a site built by an older reporter: move it away and build again)")


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2); False where the call is not available."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    fn = getattr(libc, "renameat2", None)
    if fn is None:
        return False
    return bool(fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0)


def _temporary(site: Path, kind: str) -> tuple[Path, str]:
    """A new name beside SITE for a folder of this build: our pattern with a random 128-bit token."""
    token = secrets.token_hex(16)
    return site.with_name(f".{site.name}.{kind}-{token}"), token


def _building_text(token: str) -> str:
    return f"reporter {__version__}\n{token}\n"


def _leftover(folder: Path, site: Path) -> str | None:
    """"building" for a temporary folder a killed build of SITE left (its BUILDING file holds its name's
    token), "site" for a finished build left beside SITE under our name, None for anything else."""
    m = _TEMPORARY.fullmatch(folder.name)
    if m is None or m["site"] != site.name or folder.is_symlink() or not folder.is_dir():
        return None
    if m["kind"] == "tmp" and _just_made(folder, _building_text(m["token"])):
        return "building"
    try:
        if read_bounded(folder / BUILDING, folder, "(file)", "MAX_CONFIG_FILE_BYTES", one_name=False).decode("utf-8", "replace") \
                == _building_text(m["token"]):
            return "building"
    except CollectError:
        pass
    return "site" if owned_files(folder) is not None else None


def _just_made(folder: Path, building: str) -> bool:
    """A staging folder killed between its `mkdir` and the end of its BUILDING file's one write: it holds
    nothing, or only a BUILDING file that is a beginning of the text this folder's name calls for."""
    try:
        names = os.listdir(folder)
        if not names:
            return True
        if names != [BUILDING] or os.path.islink(folder / BUILDING):
            return False
        head = read_bounded(folder / BUILDING, folder, "(file)", "MAX_CONFIG_FILE_BYTES", one_name=False)
    except (OSError, CollectError):
        return False
    return building.encode().startswith(head)


def _same_file(a: str, b: Path) -> bool:
    try:
        return os.path.samestat(os.lstat(a), os.lstat(b))
    except OSError:
        return False


def drop_replaced(old: Path, live: Path) -> list[str]:
    """Remove a replaced site: the files its status lists as written, its state, and the files that live on
    in `live` (the same inode: a user's file carried over); whatever else is there stays, and is returned."""
    written = owned_files(old) or frozenset()
    left: list[str] = []
    for folder, dirs, names in os.walk(old, topdown=False):
        # The state goes last, so a build killed half-way through this still finds a replaced site of ours
        # (its marker and status intact) and finishes the job.
        names = sorted(names, key=lambda n: folder == str(old) and is_state(n))
        for name in [*names, *(d for d in dirs if os.path.islink(os.path.join(folder, d)))]:
            path = os.path.join(folder, name)
            rel = Path(path).relative_to(old).as_posix()
            if rel in written or is_state(rel) or rel == BUILDING or _same_file(path, live / rel):
                os.unlink(path)
            else:
                left.append(rel)
        for d in dirs:
            with contextlib.suppress(OSError):  # not empty (something stays) or a link (unlinked above)
                os.rmdir(os.path.join(folder, d))
    with contextlib.suppress(OSError):
        os.rmdir(old)
    return sorted(left)


def recover(site: Path) -> None:
    """Undo what a killed build left: restore a site caught between two renames, drop our temporary
    folders. Only folders named like ours that also hold our token (or are finished builds of ours) count."""
    leftovers = [(p, kind) for p in sorted(site.parent.glob(f".{glob.escape(site.name)}.*-*"))
                 if (kind := _leftover(p, site)) is not None]
    if not site.exists() and not site.is_symlink():
        finished = sorted((p for p, kind in leftovers if kind == "site"), key=lambda p: p.stat().st_mtime_ns)
        if finished:
            finished[-1].rename(site)
            leftovers = [(p, k) for p, k in leftovers if p != finished[-1]]
    for p, kind in leftovers:
        if kind == "building":
            shutil.rmtree(p)
        elif left := drop_replaced(p, site):
            log.warning("kept %s: it holds %d file(s) no reporter build wrote (%s)", p, len(left), ", ".join(left[:5]))


LOCK_SUFFIX = ".reporter-lock"  # `.SITE.reporter-lock` beside SITE while a build of SITE runs


def _lock(path: Path) -> int:
    """An exclusive lock on the file at `path`, made if absent; its descriptor (closing it unlocks). The holder
    removes the file when done, so a build that waited on the removed file tries again on the new one."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        with contextlib.suppress(FileNotFoundError):
            if os.path.samestat(os.fstat(fd), os.lstat(path)):
                return fd
        os.close(fd)


def template_env() -> Environment:
    """The templates, autoescaping; one per process and template folder (workers render run pages with their
    own), so each template is compiled once, not once per build. Jinja reloads a template whose file changed."""
    return _template_env(str(asset_dir("templates")))


@functools.lru_cache(maxsize=4)
def _template_env(folder: str) -> Environment:
    env = Environment(loader=FileSystemLoader(folder), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(num=text.num, ms=text.ms, speedup=text.speedup, markdown=text.markdown, plain=text.plain,
                       prose=text.prose, json_args=text.json_args, n=numbers.nowrap,
                       logtext=text.home_paths, words=text.words)
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
    replace_file(root / rel, content)


class SiteWriter:
    """Renders pages into a temporary folder; `commit()` swaps it in, leaving without it changes nothing."""

    def __init__(self, site: Path, data: Path, generated: str, clean: Callable[[str], str] = str) -> None:
        check_target(site, data)
        self.clean = clean  # the secret redactor: `verify` checks every file written with it; it rewrites none
        self.site = site.absolute()
        self.data = data
        self.generated = generated
        self.env = template_env()
        self.assets: dict[str, str] = {}
        self.tmp: Path | None = None
        self.written: set[str] = set()  # every file of the new site this process wrote or kept (workers report theirs)
        self._lock_fd: int | None = None

    def __enter__(self) -> SiteWriter:
        self.site.parent.mkdir(parents=True, exist_ok=True)
        # One build of this SITE at a time (cleanup must never remove a concurrent build's folder); builds into
        # sibling folders go on side by side.
        self._lock_fd = _lock(self.site.with_name(f".{self.site.name}{LOCK_SUFFIX}"))
        recover(self.site)
        self.tmp, token = _temporary(self.site, "tmp")
        self.tmp.mkdir()
        # One write of a few bytes: a kill leaves the file whole, empty or a beginning of it (`_just_made`).
        fd = os.open(self.tmp / BUILDING, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        try:
            os.write(fd, _building_text(token).encode())
        finally:
            os.close(fd)
        self._write_assets()
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self.tmp is not None and self.tmp.exists():
                shutil.rmtree(self.tmp)  # still holds BUILDING: only this build's files and links to the live site
        finally:
            if self._lock_fd is not None:
                with contextlib.suppress(OSError):
                    os.unlink(self.site.with_name(f".{self.site.name}{LOCK_SUFFIX}"))  # still ours: we hold it
                os.close(self._lock_fd)  # releases the lock

    def _out(self, rel: str) -> Path:
        assert self.tmp is not None, "use SiteWriter as a context manager"
        out = self.tmp / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        self.written.add(rel)
        return out

    def write_text(self, rel: str, content: str) -> None:
        assert self.tmp is not None, "use SiteWriter as a context manager"
        write_new(self.tmp, rel, verify.check(rel, content, self.clean))
        self.written.add(rel)

    def seed(self, keep: list[str], folders: list[str]) -> None:
        """Hard-link files (and whole folders) of the live site that this build keeps into the new one. A folder
        is a content-addressed cache: a file this build already wrote there is the same and stays."""
        assert self.tmp is not None, "use SiteWriter as a context manager"
        files = list(keep) + [rel for f in folders if (self.site / f).is_dir() for p in (self.site / f).rglob("*")
                              if p.is_file() and not os.path.lexists(self.tmp / (rel := p.relative_to(self.site).as_posix()))]
        for rel in files:
            src = self.site / rel
            if src.is_file() and not src.is_symlink():
                self._out(rel)
                os.link(src, self.tmp / rel)

    def keep_foreign(self, written: set[str]) -> list[str]:
        """Hard-link what the live site holds that no build wrote into the new site (a CNAME, notes, a `.git/`),
        and say so in one message. A build that would write where such a file is is refused: nothing of the
        user's is replaced. Returns the paths kept."""
        assert self.tmp is not None, "use SiteWriter as a context manager"
        owned = owned_files(self.site) if self.site.is_dir() else None
        theirs = foreign_files(self.site, owned) if owned is not None else []
        clash = [rel for rel in theirs if rel.rstrip("/") in written or os.path.lexists(self.tmp / rel.rstrip("/"))]
        if clash:
            raise SiteError(f"{self.site} holds {len(clash)} file(s) reporter did not write where this build writes its own "
                            f"({', '.join(clash[:5])}): move them out of SITE and build again")
        for rel in theirs:
            dest = self.tmp / rel
            if rel.endswith("/"):
                dest.mkdir(parents=True, exist_ok=True)
            else:
                dest.parent.mkdir(parents=True, exist_ok=True)
                os.link(self.site / rel, dest, follow_symlinks=False)
        if theirs:
            log.info("kept %d file(s) in %s that reporter did not write: %s%s", len(theirs), self.site,
                     ", ".join(theirs[:10]), f" and {len(theirs) - 10} more" if len(theirs) > 10 else "")
        return theirs

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
        blobs["plotly.min.js"] = plotly_js()
        for name, blob in blobs.items():
            # Content-hashed names so GitHub Pages' CDN never serves a stale stylesheet or script.
            stem, _, ext = name.rpartition(".")
            hashed = f"static/{stem}.{hashlib.sha256(blob).hexdigest()[:8]}.{ext}"
            self._out(hashed).write_bytes(blob)
            self.assets[name] = hashed

    def commit(self, status_sha256: str, inputs: list[str] | None = None) -> None:
        """Mark the build finished (its marker names the status file's hash and the data's commit, checked against
        `inputs`, the files read) and put it in place of SITE in one step."""
        assert self.tmp is not None
        (self.tmp / NOJEKYLL).write_text("", encoding="utf-8")
        (self.tmp / MARKER).write_text(marker_text(self.data, inputs or ()) + f"{STATUS_PREFIX}{status_sha256}\n", encoding="utf-8")
        (self.tmp / BUILDING).unlink()
        tmp, self.tmp = self.tmp, None  # from here on it is a finished site: never removed whole
        if not self.site.exists():
            tmp.rename(self.site)
            return
        if _exchange(tmp, self.site):
            old = tmp  # now the previous site
        else:
            old, _ = _temporary(self.site, "old")
            self.site.rename(old)
            tmp.rename(self.site)
        if left := drop_replaced(old, self.site):
            log.warning("kept %s: it holds %d file(s) that no build wrote and that are not in the new site (%s)",
                        old, len(left), ", ".join(left[:5]))
