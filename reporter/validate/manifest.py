"""The validation cache's manifest, `DATA/validation/status.json`, and the checks built on it.

One entry per cached result: its content key (the folder), its measurement key (the file stem), the
kernel and reference hashes the content key was made from, and the sha256 of every file that belongs to
it (the result and its ncu exports). With it, `reporter cache check` can say what is missing, extra,
changed or unreadable, and `reporter cache migrate` can re-key entries after the key function changes
instead of someone renaming folders by hand.

It is also the cache's write side (`store`): every result is written here and indexed at once, while
reading results (`core.cache`) needs nothing from this module.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..core import __version__, cache
from ..core.atomic import replace_file
from ..core.errors import CollectError, Problem
from ..core.records import PROBLEMS_DIR, VALIDATION_FORMAT, ValidationResult
from ..core.safeio import hash_bounded, read_bounded
from ..core.schema import BenchmarkReplay
from ..core.work import WORK_DIR

log = logging.getLogger(__name__)
MANIFEST = "status.json"
MANIFEST_FORMAT = 1


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Entry(_Strict):
    key: str = Field(description="Content key: the folder under validation/.")
    measurement: str = Field(description="Measurement key: the result file's stem.")
    format: int = Field(description="The result's validation format (part of the content key).")
    kernel_sha256: str
    reference_sha256: str
    files: dict[str, str] = Field(description="File name inside the entry's folder -> sha256 of its bytes.")

    @property
    def where(self) -> str:
        return f"{self.key}/{self.measurement}.json"


class Manifest(_Strict):
    format: int = MANIFEST_FORMAT
    validation_format: int = VALIDATION_FORMAT
    reporter: str = __version__
    entries: list[Entry] = Field(default_factory=list)


def write_result(path: Path, result: ValidationResult) -> None:
    replace_file(path, result.model_dump_json(indent=1) + "\n")


def _sha(path: Path) -> str:
    """The file's sha256, streamed through the bounded reader: a FIFO or a link out of its folder is never opened."""
    return hash_bounded(path, path.parent, "(file)", "MAX_ATTACHMENT_BYTES")[2]


def manifest_path(data: Path) -> Path:
    return data / cache.CACHE_DIR / MANIFEST


def _safe_name(name: str) -> bool:
    # ncu_files come from a JSON file anyone can edit: only plain names inside the entry folder count.
    return name not in ("", ".", "..") and "/" not in name and "\\" not in name and "\0" not in name


def entry_of(result_path: Path, result: ValidationResult) -> Entry:
    folder = result_path.parent
    names = [result_path.name, *sorted(n for n in result.ncu_files.values() if _safe_name(n) and (folder / n).is_file())]
    return Entry(key=folder.name, measurement=result_path.stem, format=result.format,
                 kernel_sha256=result.kernel_sha256, reference_sha256=result.reference_sha256,
                 files={n: _sha(folder / n) for n in names})


@dataclass
class Scan:
    """Every result file under validation/: the readable ones and a Problem for each of the others."""

    results: dict[str, tuple[Path, ValidationResult]] = field(default_factory=dict)  # "key/measurement.json" ->
    problems: list[Problem] = field(default_factory=list)
    files: set[str] = field(default_factory=set)  # every file below the entry folders, "key/name"


def scan(data: Path) -> Scan:
    root = data / cache.CACHE_DIR
    out = Scan()
    if not root.is_dir():
        return out
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and p.name not in (PROBLEMS_DIR, WORK_DIR)):
        for path in sorted(folder.iterdir()):
            rel = f"{folder.name}/{path.name}"
            out.files.add(rel)
            if path.suffix != ".json":
                continue
            try:
                out.results[rel] = (path, cache.read_result(path))
            except cache.Unreadable as exc:
                out.problems.append(exc.problem)
    return out


def nothing_cached(data: Path) -> bool:
    """True before the first `reporter validate`: no DATA/validation, or an empty one (not a broken cache)."""
    root = data / cache.CACHE_DIR
    try:
        return not root.exists() or (root.is_dir() and not any(p.name != WORK_DIR for p in root.iterdir()))
    except OSError:
        return False


def read_manifest(data: Path) -> Manifest:
    """The manifest; raises Unreadable (naming the file) when it is missing or not a manifest."""
    path = manifest_path(data)
    try:
        return Manifest.model_validate_json(read_bounded(path, data, "(file)", "MAX_INDEX_BYTES"))
    except CollectError as exc:
        if not path.exists() and not path.is_symlink():
            raise cache.Unreadable(Problem(str(path), "(file)", "no manifest; run `reporter cache migrate DATA`", "cache")) from exc
        raise cache.Unreadable(Problem(exc.path, exc.field, f"{exc.message}; run `reporter cache migrate DATA`", "cache")) from exc
        raise cache.Unreadable(Problem(str(path), "(file)", "no manifest; run `reporter cache migrate DATA`", "cache")) from exc
    except (OSError, ValidationError, ValueError) as exc:
        raise cache.Unreadable(Problem(str(path), "(file)", f"not a manifest ({cache.first_line(exc)}); "
                                                            "run `reporter cache migrate DATA`", "cache")) from exc


def write_manifest(data: Path, found: Scan | None = None) -> Manifest:
    """Write the manifest for what is on disk now (atomically); returns it."""
    found = found or scan(data)
    entries = [entry_of(path, result) for path, result in found.results.values()]
    return _write(data, Manifest(entries=sorted(entries, key=lambda e: (e.key, e.measurement))))


def _write(data: Path, manifest: Manifest) -> Manifest:
    path = manifest_path(data)
    replace_file(path, manifest.model_dump_json(indent=1) + "\n")
    return manifest


def update(data: Path, result_path: Path, result: ValidationResult) -> None:
    """Record one newly stored result; a missing or unreadable manifest is rebuilt from the disk."""
    try:
        manifest = read_manifest(data)
    except cache.Unreadable:
        write_manifest(data)
        return
    new = entry_of(result_path, result)
    entries = [e for e in manifest.entries if (e.key, e.measurement) != (new.key, new.measurement)] + [new]
    _write(data, Manifest(entries=sorted(entries, key=lambda e: (e.key, e.measurement))))


def check(data: Path) -> list[Problem]:
    """What is wrong with the cache: unreadable, missing, extra, changed or mis-keyed entries, in file order."""
    found = scan(data)
    problems = list(found.problems)
    root = data / cache.CACHE_DIR
    try:
        manifest = read_manifest(data)
    except cache.Unreadable as exc:
        return sorted([*problems, exc.problem])
    listed: set[str] = set()
    for e in manifest.entries:
        for name, sha in e.files.items():
            rel = f"{e.key}/{name}"
            listed.add(rel)
            path = root / rel
            if not _safe_name(name):
                problems.append(Problem(str(manifest_path(data)), e.where, f"file name {name!r} leaves the entry folder", "cache"))
            elif not path.is_file():
                problems.append(Problem(str(path), "(file)", "missing: listed in the manifest but not on disk", "cache"))
            else:
                try:
                    changed = _sha(path) != sha
                except CollectError as exc:
                    problems.append(exc.problem("cache"))
                    continue
                if changed:
                    problems.append(Problem(str(path), "(file)", "changed since the manifest was written", "cache"))
    for rel in sorted(found.files - listed):
        problems.append(Problem(str(root / rel), "(file)", "extra: on disk but not in the manifest", "cache"))
    for rel, (path, result) in sorted(found.results.items()):
        want = expected_location(result)
        if want != rel:
            problems.append(Problem(str(path), "(key)", f"filed under an old key; `reporter cache migrate` moves it to {want}", "cache"))
    return sorted(set(problems))


def expected_location(result: ValidationResult) -> str:
    key = cache.key_from_hashes(result.format, result.kernel_sha256, result.reference_sha256)
    return f"{key}/{cache.env_key(result.environment, result.settings)}.json"


@dataclass
class Migration:
    moved: list[tuple[str, str]] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # older duplicates of a result at the same new location
    problems: list[Problem] = field(default_factory=list)


def _newer(a: ValidationResult, b: ValidationResult) -> bool:
    return (a.measured_at or "") > (b.measured_at or "")


def migrate(data: Path) -> Migration:
    """Re-file every readable result under the keys the current code computes, then rewrite the manifest.

    A result's ncu exports move with it and are renamed after the new measurement key. When two results
    land on the same place, the newer measurement is kept. Unreadable entries are left where they are.
    """
    root = data / cache.CACHE_DIR
    found = scan(data)
    report = Migration(problems=list(found.problems))
    claimed: dict[str, ValidationResult] = {}
    for rel, (_, result) in sorted(found.results.items()):
        want = expected_location(result)
        if want == rel:
            claimed.setdefault(want, result)
    for rel, (path, result) in sorted(found.results.items()):
        want = expected_location(result)
        if want == rel:
            continue
        other = claimed.get(want)
        if other is not None and not _newer(result, other):
            _remove(path, result)
            report.dropped.append(rel)
            continue
        if other is not None:
            _remove(root / want, other)
            report.dropped.append(want)
        _move(path, result, root / want)
        claimed[want] = result
        report.moved.append((rel, want))
    for folder in root.iterdir() if root.is_dir() else ():
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
    write_manifest(data)
    return report


def _remove(path: Path, result: ValidationResult) -> None:
    for name in result.ncu_files.values():
        if _safe_name(name):
            (path.parent / name).unlink(missing_ok=True)
    path.unlink()


def _move(path: Path, result: ValidationResult, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    names: dict[str, str] = {}
    for role, name in result.ncu_files.items():
        src = path.parent / name
        if not _safe_name(name) or not src.is_file():
            continue
        new = dest.stem + name[len(path.stem):] if name.startswith(path.stem + ".") else name
        shutil.move(src, dest.parent / new)
        names[role] = new
    moved = result.model_copy(update={"ncu_files": names})
    write_result(dest, moved)
    if path != dest:
        path.unlink()


def kept_replays(old: ValidationResult, new: ValidationResult) -> tuple[BenchmarkReplay, ...]:
    """The replays `old` holds under rule sets `new` did not replay, by rule set name."""
    mine = {b.rules for b in (new.benchmark, *new.other_benchmarks) if b is not None}
    kept = {b.rules: b for b in (*old.other_benchmarks, old.benchmark) if b is not None and b.rules not in mine}
    return (*new.other_benchmarks, *(kept[k] for k in sorted(kept)))


def store(data: Path, key: str, result: ValidationResult, extra_files: Mapping[str, Path] | None = None) -> Path:
    folder = cache.entry_dir(data, key)
    folder.mkdir(parents=True, exist_ok=True)
    ek = cache.env_key(result.environment, result.settings)
    names: dict[str, str] = {}
    for role, src in (extra_files or {}).items():
        name = f"{ek}.{role}.ncu{''.join(src.suffixes[-1:])}"
        (folder / name).write_bytes(src.read_bytes())
        names[role] = name
    path = folder / f"{ek}.json"
    old = None
    if path.is_file():
        try:
            old = cache.read_result(path)
        except cache.Unreadable as exc:
            log.warning("replacing unreadable cache entry %s", exc.problem)
    if not names and old is not None:
        # A re-measure without --ncu keeps the counters already profiled for this same content and machine.
        names = {role: n for role, n in old.ncu_files.items() if (folder / n).is_file()}
    if names:
        result = result.model_copy(update={"ncu_files": names})
    if old is not None:  # replays under other rule sets stay: runs of one kernel scored by two benchmarks share them
        result = result.model_copy(update={"other_benchmarks": kept_replays(old, result)})
    write_result(path, result)
    update(data, path, result)
    return path
