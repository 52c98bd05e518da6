"""Find trace files under DATA and parse each one into a `Trace`, within the limits of `core.limits`.

Reading only: what a run's page adds to a trace (flags, the cheat scan, parsed attachments, redaction,
reviews) is `traces.py`'s. Every failure is a CollectError that names the file and the field.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..core.errors import CollectError
from ..core.names import path_id
from ..core.records import CACHE_DIR, READABLE_VERSIONS, Trace, migrate_trace, sha256_text
from ..core.safeio import parse_json, read_bounded
from .redact import Redactor


def _is_trace_name(name: str) -> bool:
    return name == "trace.json" or name.endswith(".trace.json")


def find_traces(data: Path, errors: list[CollectError] | None = None) -> list[Path]:
    """Every `trace.json` or `*.trace.json` below `data`, in a stable order; the cache folder is skipped.

    Linked folders are not followed (they could lead outside DATA or loop); a folder that cannot be
    listed, or a linked one, is reported in `errors` and the walk goes on.
    """
    found: list[Path] = []
    stack = [data]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            if errors is not None:
                errors.append(CollectError(folder, "(folder)", f"cannot list: {exc.strerror or exc}"))
            continue
        for entry in entries:
            if folder == data and entry.name == CACHE_DIR:
                continue
            path = Path(entry.path)
            if entry.is_dir(follow_symlinks=False):
                stack.append(path)
            elif entry.is_symlink() and _is_dir(path) and errors is not None:
                errors.append(CollectError(path, "(folder)", "is a linked folder; links to folders are not followed"))
            elif _is_trace_name(entry.name):
                found.append(path)
    return sorted(found)


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def _field_of(err: ValidationError) -> str:
    first = err.errors()[0]
    loc = ".".join(str(x) for x in first["loc"]) or "(document)"
    more = len(err.errors()) - 1
    return f"{loc}: {first['msg']}" + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")


def read_document(path: Path, root: Path | None = None) -> dict[str, Any]:
    """One trace file as a current-version JSON object, read within the limits of `limits.py`.

    The file must resolve inside `root` (DATA; default: the file's own folder). Every failure is a
    CollectError that names the file and the field.
    """
    doc = parse_json(read_bounded(path, root or path.parent, "(file)", "MAX_TRACE_BYTES"), path)
    if not isinstance(doc, dict):
        raise CollectError(path, "(document)", "a trace must be a JSON object")
    version = doc.get("schema_version")
    if version not in READABLE_VERSIONS:
        # A long value is described, not quoted: it is text anyone wrote, and the message is published.
        shown = repr(version) if version is None or isinstance(version, int | float) or len(str(version)) <= 12 \
            else f"a {type(version).__name__} of {len(str(version)):,} characters"
        raise CollectError(path, "schema_version",
                           f"{shown} is not supported; this reporter reads versions "
                           f"{', '.join(map(str, READABLE_VERSIONS))} (see docs/trace-format.md)")
    return migrate_trace(doc)


def validate_document(doc: dict[str, Any], path: Path) -> Trace:
    try:
        return Trace.model_validate(doc)
    except ValidationError as exc:
        loc_msg = _field_of(exc)
        loc, _, msg = loc_msg.partition(": ")
        raise CollectError(path, loc, msg) from exc


def read_trace(path: Path, root: Path | None = None) -> Trace:
    """Parse one trace file; every failure is a CollectError that names the file and the field."""
    return validate_document(read_document(path, root), path)


def run_ids(data: Path, paths: list[Path], redactor: Redactor | None = None) -> dict[Path, str]:
    """Each trace's id, unique by construction: its folder under DATA for `trace.json` below DATA, else its
    path without `.trace.json` (`DATA/trace.json`: `trace`).

    Where such a short id equals another's (`a/trace.json` beside `a.trace.json`; `trace/trace.json` beside
    `DATA/trace.json`), the file is known by its whole relative path instead, which no folder id can equal:
    a folder cannot share its name with a file beside it. Paths are written with `names.path_id`, which is
    reversible, so two different paths never share an id (a byte 0xff and the text `\\xff` stay apart).
    With a `redactor`, an id holding a secret is shown redacted, with a hash of the real id to keep it unique.
    """
    ids: dict[Path, str] = {}
    for path in paths:
        rel = path.relative_to(data)
        if path.name == "trace.json":
            ids[path] = path_id(rel.parent.as_posix()) if rel.parent.parts else "trace"
        else:
            ids[path] = path_id(rel.as_posix()[: -len(".trace.json")])
    taken = Counter(ids.values())
    for path, run_id in ids.items():
        if taken[run_id] > 1 and not (path.name == "trace.json" and path.parent != data):
            ids[path] = path_id(path.relative_to(data).as_posix())
    return {p: _shown_id(i, redactor) for p, i in ids.items()} if redactor is not None else ids


REDACTED_ID = re.compile(r"\[redacted: ([a-z0-9-]+)\]")


def _shown_id(run_id: str, redactor: Redactor) -> str:
    shown = redactor.text(run_id, Counter())
    return run_id if shown == run_id else f"{shown}~{sha256_text(run_id)[:12]}"
