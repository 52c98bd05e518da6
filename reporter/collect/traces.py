"""Stage 1: find traces under a data folder, read them into typed records, attach their exports.

A bad file never stops the others: it becomes a `CollectError` in the result, naming file and field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from . import ncu as gm
from ..checks import Flag, check_trace
from ..errors import CollectError
from ..names import unique_slugs
from .finding import find_traces, run_ids
from ..records import READABLE_VERSIONS, Trace, migrate_trace, sha256_text, unknown_fields


@dataclass(frozen=True)
class ProfileSet:
    """What the attachments of one role (kernel or reference) say."""

    profiler: gm.ProfilerSummary | None = None
    ncu_kernels: tuple[gm.KernelFigures, ...] = ()
    ncu_source: str | None = None

    @property
    def ncu_summary(self) -> gm.KernelFigures | None:
        return gm.summarize(list(self.ncu_kernels))


@dataclass
class RunRecord:
    """One readable run and everything derived from its files."""

    run_id: str  # the trace's folder under DATA (or its file, for `*.trace.json`), as a POSIX path
    trace_path: Path
    trace: Trace
    flags: list[Flag]
    unknown: list[str]
    profiles: dict[str, ProfileSet] = field(default_factory=dict)
    attachment_errors: list[CollectError] = field(default_factory=list)
    slug: str = ""  # unique among the collection's runs (`reporter.names.unique_slugs`); set by `collect`

    @property
    def kernel_hash(self) -> str | None:
        return sha256_text(self.trace.final_kernel.source) if self.trace.final_kernel else None


@dataclass
class Collection:
    runs: list[RunRecord]
    errors: list[CollectError]


def _field_of(err: ValidationError) -> str:
    first = err.errors()[0]
    loc = ".".join(str(x) for x in first["loc"]) or "(document)"
    more = len(err.errors()) - 1
    return f"{loc}: {first['msg']}" + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")


def read_trace(path: Path) -> Trace:
    """Parse one trace file; every failure is a CollectError that names the file and the field."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CollectError(path, "(file)", f"cannot read: {exc}") from exc
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CollectError(path, "(json)", f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    if not isinstance(doc, dict):
        raise CollectError(path, "(document)", "a trace must be a JSON object")
    version = doc.get("schema_version")
    if version not in READABLE_VERSIONS:
        raise CollectError(path, "schema_version",
                           f"{version!r} is not supported; this reporter reads versions "
                           f"{', '.join(map(str, READABLE_VERSIONS))} (see docs/trace-format.md)")
    doc = migrate_trace(doc)
    try:
        return Trace.model_validate(doc)
    except ValidationError as exc:
        loc_msg = _field_of(exc)
        loc, _, msg = loc_msg.partition(": ")
        raise CollectError(path, loc, msg) from exc


def _load_profiles(record: RunRecord) -> None:
    base = record.trace_path.parent
    parts: dict[str, dict[str, object]] = {"kernel": {}, "reference": {}}
    for att in record.trace.attachments:
        path = base / att.path
        try:
            if not path.resolve().is_relative_to(base.resolve()):
                raise CollectError(path, "attachments.path", "must stay inside the trace's folder")
            if not path.is_file():
                raise CollectError(record.trace_path, "attachments.path", f"{att.path} does not exist")
            if att.kind == "torch_profiler_trace":
                parts[att.role]["profiler"] = gm.parse_chrome_trace(path)
            elif "ncu_kernels" not in parts[att.role]:
                # raw and details exports carry the same metrics; the first one listed wins.
                parts[att.role]["ncu_kernels"] = tuple(gm.derive(k) for k in gm.load_ncu(path))
                parts[att.role]["ncu_source"] = att.path
        except CollectError as exc:
            record.attachment_errors.append(exc)
    record.profiles = {role: ProfileSet(**p) for role, p in parts.items() if p}  # type: ignore[arg-type]


def load_run(path: Path, run_id: str, slug: str = "") -> RunRecord:
    """One run with its checks and attachments; a trace that cannot be read raises CollectError."""
    trace = read_trace(path)
    record = RunRecord(run_id, path, trace, check_trace(trace), unknown_fields(trace), slug=slug)
    _load_profiles(record)
    return record


def collect(data: Path) -> Collection:
    runs: list[RunRecord] = []
    errors: list[CollectError] = []
    paths = find_traces(data)
    ids = run_ids(data, paths)
    for path in paths:
        try:
            runs.append(load_run(path, ids[path]))
        except CollectError as exc:
            errors.append(exc)
    slugs = unique_slugs(r.run_id for r in runs)
    for r in runs:
        r.slug = slugs[r.run_id]
    return Collection(runs, errors)
