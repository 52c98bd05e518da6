"""Validation results cached by content, in a folder that is committed next to the data.

Layout: ``DATA/validation/<content key>/<measurement key>.json``. The content key hashes the kernel and
the reference; the measurement key hashes the validator settings with GPU, driver, torch and CUDA. A GPU
machine looks up exactly its own settings and environment; a machine without a GPU (or a build that
does not know which settings were used) shows the newest result for the content.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

from pydantic import ValidationError

from .decode import from_doc
from .errors import CollectError, Problem, excerpt, printable
from .records import CACHE_DIR, SHOWN_FORMATS, VALIDATION_FORMAT, Environment, ValidationResult, ValidationSettings, sha256_text
from .safeio import checked_path, parse_json, read_bounded
from .work import WORK_DIR, WORK_FILE, WORK_FORMAT, WorkCount, work_key

__all__ = ["CACHE_DIR", "Unreadable", "content_key", "content_keys", "entry_dir", "env_key", "lookup", "lookup_shown",
           "read_result", "read_work", "work_file"]
log = logging.getLogger(__name__)


class Unreadable(Exception):
    """A cache file that cannot be used; `problem` names it and says why."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(str(problem))
        self.problem = problem


def first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def read_result(path: Path, root: Path | None = None) -> ValidationResult:
    """One cached result; raises Unreadable naming the file instead of returning nothing.

    The cache is part of DATA and as untrusted as a trace: the file must be a regular file that resolves
    inside `root` (default: the DATA folder of `DATA/validation/<key>/<file>`) within MAX_CACHE_FILE_BYTES.
    """
    try:
        raw = read_bounded(path, root or path.parents[min(2, len(path.parents) - 1)], "(file)", "MAX_CACHE_FILE_BYTES")
        return ValidationResult.model_validate_json(raw)
    except CollectError as exc:
        raise Unreadable(exc.problem("cache")) from exc
    except ValidationError as exc:
        err = exc.errors()[0]
        if err["type"] == "json_invalid":
            raise Unreadable(Problem(printable(str(path)), "(json)", f"not valid JSON: {err['ctx'].get('error', '')}", "cache")) from exc
        where = ".".join(str(x) for x in err["loc"]) or "(document)"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise Unreadable(Problem(printable(str(path)), where, f"not a validation result: {err['msg']}{more}", "cache")) from exc
    except (OSError, ValueError) as exc:
        raise Unreadable(Problem(printable(str(path)), "(file)", f"cannot read: {first_line(exc)}", "cache")) from exc


def key_from_hashes(fmt: int, kernel_sha256: str, reference_sha256: str) -> str:
    blob = json.dumps([fmt, kernel_sha256, reference_sha256])
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def content_key(kernel_src: str, reference_src: str) -> str:
    return key_from_hashes(VALIDATION_FORMAT, sha256_text(kernel_src), sha256_text(reference_src))


def content_keys(kernel_src: str, reference_src: str) -> list[str]:
    """The content key of every format a page may show, the current one first (a GPU looks up only that one)."""
    k, r = sha256_text(kernel_src), sha256_text(reference_src)
    return [key_from_hashes(fmt, k, r) for fmt in (VALIDATION_FORMAT, *SHOWN_FORMATS)]


def env_key(env: Environment, settings: ValidationSettings) -> str:
    blob = json.dumps([env.model_dump(mode="json", exclude={"host"}), settings.model_dump(mode="json")], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def entry_dir(data: Path, key: str) -> Path:
    return data / CACHE_DIR / key


def lookup(data: Path, key: str, env: Environment | None = None, settings: ValidationSettings | None = None,
           problems: list[Problem] | None = None) -> tuple[ValidationResult, Path] | None:
    """The result for this environment and settings, or (either None) the newest result for the content.

    An unreadable result is never silently a miss: it goes to `problems`, or is logged as a warning. So
    does every file its `ncu_files` names that is not a plain name of a regular file beside it; such a
    name is left out of the returned result.
    """
    folder = entry_dir(data, key)
    if not folder.is_dir():
        return None
    if env is not None and settings is not None:
        candidates = [folder / f"{env_key(env, settings)}.json"]
    else:
        candidates = sorted(folder.glob("*.json"))
    found = []
    found_problems: list[Problem] = []
    for path in candidates:
        if path.exists() or path.is_symlink():  # a link is refused with a message, not skipped
            try:
                found.append((_checked_ncu_files(read_result(path, data), path, found_problems), path))
            except Unreadable as exc:
                found_problems.append(exc.problem)
    for problem in found_problems:
        if problems is None:
            log.warning("could not read %s", problem)
        else:
            problems.append(problem)
    if not found:
        return None
    return max(found, key=lambda rp: (rp[0].measured_at or "", rp[1].name))


def _checked_ncu_files(result: ValidationResult, path: Path, problems: list[Problem]) -> ValidationResult:
    """`result` keeping only the ncu files that are plain names of regular files beside `path`."""
    kept: dict[str, str] = {}
    for role, name in sorted(result.ncu_files.items()):
        field = f"ncu_files.{role}"
        try:
            if name in ("", ".", "..") or "/" in name or "\\" in name or "\0" in name:
                raise CollectError(path, field, f"{excerpt(name, 80)!r} is not a file name beside the result (no folders, no `..`)")
            checked_path(path.parent / name, path.parent, field, "MAX_ATTACHMENT_BYTES")
        except CollectError as exc:
            problems.append(Problem(printable(str(path)), field, exc.message, "cache"))
            continue
        kept[role] = name
    return result if kept == result.ncu_files else result.model_copy(update={"ncu_files": kept})


def lookup_shown(data: Path, kernel_src: str, reference_src: str, problems: list[Problem] | None = None
                 ) -> tuple[ValidationResult, Path] | None:
    """What a page shows for this content: the newest result of the current format, else of an older shown one."""
    for key in content_keys(kernel_src, reference_src):
        found = lookup(data, key, problems=problems)
        if found is not None:
            return found
    return None


def work_file(data: Path, reference_sha256: str) -> Path:
    """Where the work count of a reference (by its sha256) is kept: `core.work`."""
    return data / CACHE_DIR / WORK_DIR / work_key(reference_sha256) / WORK_FILE


def read_work(data: Path, reference_src: str, problems: list[Problem] | None = None) -> WorkCount | None:
    """The work count of a reference, or None when it was never counted. A file that cannot be used is a
    problem naming it (or a warning), never a count: it is as untrusted as the rest of DATA."""
    path = work_file(data, sha256_text(reference_src))
    if not (path.exists() or path.is_symlink()):
        return None
    try:
        work = from_doc(WorkCount, parse_json(read_bounded(path, data, "(file)", "MAX_CACHE_FILE_BYTES"), path))
    except CollectError as exc:
        problem = exc.problem("cache")
    except (ValueError, RecursionError) as exc:
        problem = Problem(printable(str(path)), "(document)", f"not a work count: {first_line(exc)}", "cache")
    else:
        if work.reference_sha256 != sha256_text(reference_src):
            problem = Problem(printable(str(path)), "reference_sha256", "counts another reference than the one filed here", "cache")
        elif work.format != WORK_FORMAT:  # counted under older rules: no count until `reporter work` counts it again
            return None
        else:
            return work
    if problems is None:
        log.warning("could not read %s", problem)
    else:
        problems.append(problem)
    return None
