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

import functools
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import __version__
from ..core.errors import CollectError
from ..core.safeio import checked_path, hash_bounded, read_bounded
from ..core.sitefiles import STATUS_FILE, decode_state, encode_state, sha256_bytes

if TYPE_CHECKING:
    from .digest import RunDigest  # imported when a status is loaded: publish reads the site's state without it

# 3: the status lists every file the build wrote (`written`), and the marker its hash; 4: typed digests with
# the runs-table row; 5: listing fingerprints; 6: leaderboards kept per group; 7: a run summary's `correct` and
# its flags counting suspect findings; 8: its caveats (weak check, checks incomplete); 9: the row's suspect_checks;
# 10: the row's two verdicts (rules, benchmark_verdict, the cause) and CUDA read as CUDA in kernel sources
STATUS_FORMAT = 10

Signature = list[Any]  # [size, mtime_ns, sha256]
SIGNED_LIMIT = "MAX_ATTACHMENT_BYTES"  # the largest input a run has; each reader applies its own, smaller limit


def signature(path: Path, known: Signature | None, root: Path) -> Signature | None:
    """[size, mtime_ns, content hash] of a regular file inside `root`, reusing `known`'s hash when size and
    time match; None when it is absent or unusable. It is read through the bounded reader (`safeio`), so a
    FIFO, a device, a link out of `root` or a file over SIGNED_LIMIT is never opened: its reader says why."""
    try:
        st = os.stat(checked_path(path, root, "(file)", SIGNED_LIMIT))
        if known is not None and known[0] == st.st_size and known[1] == st.st_mtime_ns:
            return known
        return list(hash_bounded(path, root, "(file)", SIGNED_LIMIT))
    except (CollectError, OSError):
        return None


@functools.lru_cache(maxsize=1)
def code_hash() -> str:
    """reporter's own Python source, hashed once per process: a checkout or install whose code changed renders its
    pages and digests again, though its version string did not move (a site built by the older code kept them)."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def global_hash(asset_folders: list[Path], settings: dict[str, Any]) -> str:
    """One hash of every file that shapes every page, the settings, reporter's code, version and status format."""
    h = hashlib.sha256(json.dumps([__version__, STATUS_FORMAT, code_hash(), settings], sort_keys=True).encode())
    for folder in asset_folders:
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            h.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def sources_hash(shared: dict[str, Any]) -> str:
    """What a digest depends on besides its run's own files: clearances, the allow-list, redaction on or off."""
    return context_hash([__version__, STATUS_FORMAT, code_hash(), shared["reviews"], shared["allow"], shared["redact"]])


def context_hash(value: Any) -> str:
    return sha256_bytes(json.dumps(value, sort_keys=True, default=str).encode())


@dataclass(frozen=True)
class Boards:
    """One (benchmark, configuration) group's leaderboards in one build: what they were made from, the files
    they wrote and the index's links to them."""

    group: tuple[str, str]
    inputs: str  # hash of the group's runs-table rows, its URLs and the global inputs
    files: tuple[str, ...] = ()
    links: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"group": list(self.group), "inputs": self.inputs, "files": list(self.files), "links": [list(x) for x in self.links]}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Boards:
        return cls((str(doc["group"][0]), str(doc["group"][1])), doc["inputs"], tuple(doc["files"]),
                   tuple((str(a), str(b)) for a, b in doc["links"]))


@dataclass
class RunStatus:
    inputs: dict[str, Signature]  # path relative to DATA -> signature
    folders: list[str]  # folders (relative to DATA) whose listing is an input: new files there change the run
    digest: RunDigest
    page: str = ""  # hash of inputs, global hash and context when the page files were written
    files: list[str] = field(default_factory=list)  # the site files this run's page owns
    saved: str = ""  # sha256 of this entry's text as the last status saved it (decoded), "" for a new one
    saved_text: str = ""  # the entry as that status stored it (secret-bearing strings hex-encoded)

    def to_json(self) -> dict[str, Any]:
        return {"inputs": self.inputs, "folders": self.folders, "digest": self.digest.to_json(), "page": self.page,
                "files": self.files}


@dataclass
class BuildStatus:
    version: str = __version__
    globals: str = ""
    runs: dict[str, RunStatus] = field(default_factory=dict)
    aggregates: str = ""  # hash of every digest and the run order when listing pages were last written
    tree: str = ""  # hash of the site's file list (names, sizes, times): a file added or edited by hand is a change
    sources: str = ""  # hash of what every digest depends on besides its run's files (`sources_hash`)
    listing: dict[str, str] = field(default_factory=dict)  # page or file above the run pages -> its fingerprint
    boards: tuple[Boards, ...] = ()  # each group's leaderboards and what they were made from

    @classmethod
    def load(cls, site: Path) -> BuildStatus:
        """The previous build's status, or an empty one when there is none or it cannot be trusted."""
        from .digest import RunDigest
        try:
            doc = json.loads(read_bounded(site / STATUS_FILE, site, "(file)", "MAX_INDEX_BYTES", one_name=False))
            if doc.get("format") != STATUS_FORMAT or doc.get("version") != __version__:
                return cls()
            runs = {}
            for stored_k, stored_v in doc["runs"].items():
                k, v = decode_state(stored_k), decode_state(stored_v)
                runs[k] = RunStatus(v["inputs"], v["folders"], RunDigest.from_json(v["digest"]), v.get("page", ""),
                                    v.get("files", []), sha256_bytes(_entry(k, v).encode()), _entry(stored_k, stored_v))
            boards = tuple(Boards.from_json(b) for b in decode_state(doc.get("boards", [])))
            return cls(doc["version"], doc["globals"], runs, doc.get("aggregates", ""), doc.get("tree", ""), doc.get("sources", ""),
                       decode_state(dict(doc.get("listing", {}))), boards)
        except (CollectError, OSError, ValueError, KeyError, TypeError):
            return cls()

    def save(self, folder: Path, written: list[str], clean: Callable[[str], str] = str) -> str:
        """Write the status listing `written`; returns its sha256. `clean` is the secret redactor: a name or value
        read from DATA that holds a secret (a run folder named like a header, a path below it) is stored hex-encoded
        (`sitefiles.encode_state`), never redacted, so the file stays valid JSON and the next build reads back exactly what this
        one saw. (Redacting the written text once swallowed a run name's closing quote and colon: the next build
        found no status, refused SITE as not a site of ours, and so did `publish`.) The status is the build's own
        state, never published (`sitefiles.STATE`); the encoding keeps secrets out of its plain text all the same.
        A run's entry whose values are those the last status saved is written as it was, without scanning again."""
        self.tree = tree_hash(folder)
        entries = []
        for k in sorted(self.runs):
            rs = self.runs[k]
            text = _entry(k, rs.to_json())
            entries.append(rs.saved_text if rs.saved_text and sha256_bytes(text.encode()) == rs.saved
                           else _entry(encode_state(k, clean), encode_state(rs.to_json(), clean)))
        doc = {"format": STATUS_FORMAT, "version": self.version, "globals": self.globals, "aggregates": self.aggregates,
               "tree": self.tree, "sources": self.sources, "written": encode_state(sorted(written), clean),
               "listing": encode_state(dict(sorted(self.listing.items())), clean),
               "boards": encode_state([b.to_json() for b in self.boards], clean)}
        blob = (_dump(doc)[:-1] + ',"runs":{' + ",".join(entries) + "}}").encode("utf-8")
        (folder / STATUS_FILE).write_bytes(blob)
        return sha256_bytes(blob)


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _entry(run_id: str, doc: Mapping[str, Any]) -> str:
    """A run's entry in the status file's `runs` object, as written there."""
    return json.dumps(run_id) + ":" + _dump(doc)


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
        if signature(data / rel, sig, data) != sig:
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
    sigs = {rel: sig for rel in sorted(rels) if (sig := signature(data / rel, known.get(rel), data)) is not None}
    return sigs, frels


def generated_at() -> str:
    # SOURCE_DATE_EPOCH makes builds reproducible (golden tests); otherwise the real build time.
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = datetime.fromtimestamp(int(epoch), UTC) if epoch else datetime.now(UTC)
    return when.strftime("%Y-%m-%d %H:%M:%S UTC")
