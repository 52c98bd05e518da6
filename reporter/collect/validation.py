"""Read cached re-validation results for collected runs, with the Nsight Compute files beside them.

Rendering reads no files itself: everything a page shows of a re-validation comes through here, and a
result file or counter export that cannot be read becomes a `CollectError` on that run, never an
aborted build.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..core import cache
from ..core.bases import checked_bases
from ..core.errors import CollectError, Problem
from ..core.frozen import freeze
from ..core.records import ValidationResult
from . import ncu
from .redact import Redactor
from .traces import ProfileSet, RunRecord, redacted_profiles

TIMED_SIDES = ("kernel_timing", "reference_timing", "compile_timing")


@dataclass(frozen=True)
class CachedValidation:
    """The newest cached result for a run's kernel and reference, and what its files say."""

    result: ValidationResult
    shown_path: str  # the result file, relative to DATA, as pages name it
    ncu: Mapping[str, ProfileSet]  # role -> counters profiled by `reporter validate --ncu`
    errors: tuple[CollectError, ...] = ()
    redactions: Mapping[str, int] = field(default_factory=dict)  # secrets redacted from the result's text, by kind

    def __post_init__(self) -> None:
        freeze(self, mappings=("ncu", "redactions"))


def redactions(run: RunRecord, cached: CachedValidation | None) -> dict[str, int]:
    """Secrets redacted for one run's pages, by kind: from its trace and from its cached result."""
    counts = Counter(run.redactions)
    counts.update(cached.redactions if cached is not None else {})
    return dict(sorted(counts.items()))


def load_validation(data: Path, run: RunRecord, problems: list[Problem] | None = None,
                    redactor: Redactor | None = None) -> CachedValidation | None:
    """The cached result for `run`, or None when it has no kernel, no reference or no result yet.
    Unreadable result files go to `problems` (see `cache.lookup`). With a `redactor`, the result's text
    (log, reason, findings' source lines) is redacted and counted in the result's `redactions`."""
    # The key is the trace as written (`source`): the redacted one would never match a cached result.
    fk, ref = run.source.final_kernel, run.source.reference_source
    if fk is None or ref is None:
        return None
    found = cache.lookup_shown(data, fk.source, ref, problems=problems)
    if found is None:
        return None
    result, path = found
    # Stored results keep what was measured; the basis rules are applied here, where every reader gets them.
    patched = next((f"line {f.line}: {f.text}" for f in result.static_findings if f.check == "timing_event_patch"), None)
    result = result.model_copy(update={side: checked_bases(getattr(result, side), patched) for side in TIMED_SIDES
                                       if getattr(result, side) is not None})
    counts: Counter[str] = Counter()
    if redactor is not None:
        result = redactor.result(result, counts)
    errors: list[CollectError] = []
    profiles: dict[str, ProfileSet] = {}
    for role, name in sorted(result.ncu_files.items()):
        # `cache.lookup` already dropped names that are not plain files beside the result; load_ncu still
        # refuses anything that resolves outside the result's folder.
        try:
            kernels = tuple(ncu.derive(k) for k in ncu.load_ncu(path.parent / name, root=path.parent))
        except CollectError as exc:
            errors.append(exc)
            continue
        profiles[role] = ProfileSet(None, kernels, name)
    if redactor is not None:
        profiles = redacted_profiles(profiles, redactor, counts)
        errors = [redactor.error(e, counts) for e in errors]
    try:
        shown = path.relative_to(data).as_posix()
    except ValueError:
        shown = path.name
    return CachedValidation(result, shown, profiles, tuple(errors), dict(sorted(counts.items())))


def load_validations(data: Path, runs: Sequence[RunRecord], redactor: Redactor | None = None
                     ) -> tuple[dict[str, CachedValidation | None], list[Problem]]:
    """Cached results for every run; a result that cannot be read is a problem naming its file, and the
    run is shown as not re-validated rather than costing the build."""
    found: dict[str, CachedValidation | None] = {}
    problems: list[Problem] = []
    for r in runs:
        try:
            found[r.run_id] = cached = load_validation(data, r, problems, redactor)
        except (OSError, ValueError) as exc:
            found[r.run_id] = None
            problems.append(Problem(str(data / cache.CACHE_DIR), r.run_id, f"cached result unreadable: {exc}", "cache"))
            continue
        if cached is not None:
            problems.extend(e.problem("cache") for e in cached.errors)
    return found, problems
