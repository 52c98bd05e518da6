"""What the previous build was made from, so a rebuild re-renders only what changed (coverage.py style).

`SITE/.reporter-status.json` holds the reporter version, a hash of everything that shapes every page
(templates, static files, settings), and per run: the signature of each input file (trace, attachments,
cached validation results), the hash of the page's context from other runs (links to neighbours and
listing pages), and the run's digest, the ≈1 KB summary that listing pages are drawn from. A run whose
inputs and context are unchanged keeps its page files; its listing rows come from the digest.

Input files are hashed by content; a file whose size and modification time (ns) match the status keeps
its recorded hash without being read again, like git's index. Anything else is read and hashed.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__

STATUS_FILE = ".reporter-status.json"
CACHE_DIR = ".reporter-cache"  # content-addressed caches (highlighted code) that outlive one build
STATUS_FORMAT = 2  # 2: digests hold summary times as numbers with their unit, and no leaderboard outcome

Signature = list[Any]  # [size, mtime_ns, sha256]


def sha256_bytes(blob: bytes) -> str:
    return hashlib.sha256(blob).hexdigest()


def signature(path: Path, known: Signature | None) -> Signature | None:
    """[size, mtime_ns, content hash] of a file, reusing `known`'s hash when size and time match; None if absent."""
    try:
        st = path.stat()
    except OSError:
        return None
    if known is not None and known[0] == st.st_size and known[1] == st.st_mtime_ns:
        return known
    try:
        return [st.st_size, st.st_mtime_ns, sha256_bytes(path.read_bytes())]
    except OSError:
        return None


def global_hash(asset_folders: list[Path], settings: dict[str, Any]) -> str:
    """One hash of every file that shapes every page, the settings, the reporter version and status format."""
    h = hashlib.sha256(json.dumps([__version__, STATUS_FORMAT, settings], sort_keys=True).encode())
    for folder in asset_folders:
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            h.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def context_hash(value: Any) -> str:
    return sha256_bytes(json.dumps(value, sort_keys=True, default=str).encode())


@dataclass
class RunStatus:
    inputs: dict[str, Signature]  # path relative to DATA -> signature
    folders: list[str]  # folders (relative to DATA) whose listing is an input: new files there change the run
    digest: dict[str, Any]
    page: str = ""  # hash of inputs, global hash and context when the page files were written
    files: list[str] = field(default_factory=list)  # the site files this run's page owns

    def to_json(self) -> dict[str, Any]:
        return {"inputs": self.inputs, "folders": self.folders, "digest": self.digest, "page": self.page, "files": self.files}


@dataclass
class BuildStatus:
    version: str = __version__
    globals: str = ""
    runs: dict[str, RunStatus] = field(default_factory=dict)
    aggregates: str = ""  # hash of every digest and the run order when listing pages were last written
    tree: str = ""  # hash of the site's file list (names, sizes, times): a file added or edited by hand is a change

    @classmethod
    def load(cls, site: Path) -> BuildStatus:
        """The previous build's status, or an empty one when there is none or it cannot be trusted."""
        try:
            doc = json.loads((site / STATUS_FILE).read_text(encoding="utf-8"))
            if doc.get("format") != STATUS_FORMAT or doc.get("version") != __version__:
                return cls()
            runs = {k: RunStatus(v["inputs"], v["folders"], v["digest"], v.get("page", ""), v.get("files", []))
                    for k, v in doc["runs"].items()}
            return cls(doc["version"], doc["globals"], runs, doc.get("aggregates", ""), doc.get("tree", ""))
        except (OSError, ValueError, KeyError, TypeError):
            return cls()

    def save(self, folder: Path) -> None:
        self.tree = tree_hash(folder)
        doc = {"format": STATUS_FORMAT, "version": self.version, "globals": self.globals, "aggregates": self.aggregates,
               "tree": self.tree,
               "runs": {k: self.runs[k].to_json() for k in sorted(self.runs)}}
        (folder / STATUS_FILE).write_text(json.dumps(doc, separators=(",", ":")), encoding="utf-8")


def tree_hash(site: Path) -> str:
    """Every file of a site with its size and modification time, hashed; the dot files at its top (this
    status, the writer's markers) are the build's own and left out."""
    h = hashlib.sha256()
    stack = [site]
    while stack:
        folder = stack.pop()
        for e in sorted(os.scandir(folder), key=lambda e: e.name):
            if e.is_dir(follow_symlinks=False):
                stack.append(Path(e.path))
            elif not (folder == site and e.name.startswith(".")):
                st = e.stat(follow_symlinks=False)
                h.update(f"{Path(e.path).relative_to(site).as_posix()}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def folder_listing(data: Path, rel: str) -> list[str]:
    """File names in a folder below DATA (a validation cache entry); a result added there is a change."""
    try:
        return sorted(e.name for e in os.scandir(data / rel) if e.is_file())
    except OSError:
        return []


def unchanged(data: Path, old: RunStatus) -> bool:
    """True when every input of the run has the size, time and content hash recorded last time."""
    for rel, sig in old.inputs.items():
        if signature(data / rel, sig) != sig:
            return False
    for rel in old.folders:
        names = {f"{rel}/{n}" for n in folder_listing(data, rel)}
        if not names <= set(old.inputs):
            return False
    return True


def inputs_of(data: Path, files: list[Path], folders: list[Path], known: dict[str, Signature]) -> tuple[dict[str, Signature], list[str]]:
    """Signatures of a run's input files and of everything in its input folders."""
    rels = {p.relative_to(data).as_posix() for p in files if p.is_relative_to(data)}
    frels = sorted({f.relative_to(data).as_posix() for f in folders if f.is_relative_to(data)})
    for rel in frels:
        rels.update(f"{rel}/{n}" for n in folder_listing(data, rel))
    sigs = {rel: sig for rel in sorted(rels) if (sig := signature(data / rel, known.get(rel))) is not None}
    return sigs, frels
