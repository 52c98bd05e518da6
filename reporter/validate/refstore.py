"""Reference timings kept on the checking machine, one per (problem, precision, settings, GPU): the
parent's side of reusing a reference's timing (the worker's is `reftiming`). Standard library only (Ray
GPU workers use it).

A timing is stored only from the worker's "reference" mode, which loads no submission. Each check that
is handed it counts as a use; after `REFERENCE_RETIME_AFTER` uses, or once a check found that the GPU's
clock or temperature had moved since (`reftiming.Reuse`), the next check first times the reference again
and the new record says how far it lies from the old one. A call that checks one kernel of a problem
times its reference beside the kernel as before, unless a timing is stored already
(`REFERENCE_SHARED_FROM`). The store lives under the build cache (``REPORTER_BUILD_CACHE``), keyed by
host and GPU as well, so it outlives the call: a later call on the same machine reuses it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import platform
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from ..core.atomic import replace_file
from ..core.decode import from_doc
from ..core.schema import REFERENCE_CLOCK_MOVE, REFERENCE_RETIME_AFTER, REFERENCE_SHARED_FROM, REFERENCE_TEMPERATURE_MOVE_C, GpuReading, ReferenceTiming, TimingFigures, WorkerJob

FOLDER = "reference-timings"


@dataclass(frozen=True)
class Stored:
    """A store file: the timing (with its figures) and why the next check must take it again, if it must."""

    timing: ReferenceTiming
    retime: str | None = None


def problem_key(job: WorkerJob) -> str:
    """A job's problem as the store counts kernels: its reference source and precision."""
    return hashlib.sha256(f"{job.precision}\0{job.reference}".encode()).hexdigest()


def shared_problems(jobs: list[WorkerJob]) -> set[str]:
    """The problems (`problem_key`) with at least `REFERENCE_SHARED_FROM` kernels among `jobs`."""
    counts = Counter(problem_key(j) for j in jobs)
    return {k for k, n in counts.items() if n >= REFERENCE_SHARED_FROM}


def store_key(job: WorkerJob, gpu: str) -> str:
    """What a stored timing is valid for: the problem (reference source), precision, settings, host and GPU."""
    blob = json.dumps([hashlib.sha256(job.reference.encode()).hexdigest(), job.precision, asdict(job.settings),
                       job.device, platform.node(), gpu], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def moved(then: GpuReading, now: GpuReading | None) -> str | None:
    """How the GPU's clock or temperature moved beyond the drift guard's bounds since `then`; None when it did
    not (or when either side could not read it)."""
    if now is None:
        return None
    if then.sm_clock_mhz and now.sm_clock_mhz and abs(now.sm_clock_mhz - then.sm_clock_mhz) > REFERENCE_CLOCK_MOVE * then.sm_clock_mhz:
        return f"the SM clock moved from {then.sm_clock_mhz} to {now.sm_clock_mhz} MHz"
    if then.temperature_c is not None and now.temperature_c is not None \
            and abs(now.temperature_c - then.temperature_c) > REFERENCE_TEMPERATURE_MOVE_C:
        return f"the GPU's temperature moved from {then.temperature_c} to {now.temperature_c} °C"
    return None


def median_of(fig: TimingFigures | None) -> tuple[str, float] | None:
    """The figure a re-timing is compared on: device time, else wall time (basis, ms)."""
    if fig is None:
        return None
    if fig.device is not None:
        return "device", fig.device.median_ms
    return ("wall", fig.wall.median_ms) if fig.wall is not None else None


def compared(old: ReferenceTiming, new: ReferenceTiming, why: str) -> str:
    """The new record's `replaced`: why the old was taken again, and how far the new figure lies from it."""
    a, b = median_of(old.figures), median_of(new.figures)
    if a is None or b is None or a[0] != b[0] or a[1] <= 0:
        return f"taken again ({why}); not comparable with the timing of {old.taken_at}"
    return f"taken again ({why}): {a[0]} time {(b[1] - a[1]) / a[1] * 100:+.1f}% from the timing of {old.taken_at}"


class ReferenceStore:
    """The reference timings of one GPU (`gpu`: the CUDA_VISIBLE_DEVICES value its checks run under)."""

    def __init__(self, root: Path, gpu: str) -> None:
        self.folder = root / FOLDER
        self.gpu = gpu

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def read(self, key: str) -> Stored | None:
        try:
            return from_doc(Stored, json.loads(self._path(key).read_text(encoding="utf-8")))
        except (OSError, ValueError, RecursionError):
            return None  # none yet, or a file this version cannot read: the reference is timed again

    def write(self, key: str, stored: Stored) -> None:
        replace_file(self._path(key), json.dumps(asdict(stored)))

    @contextlib.contextmanager
    def locked(self, key: str) -> Iterator[None]:
        """One check at a time per key, across threads and processes: the others wait and reuse its timing."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / f"{key}.lock", "w", encoding="utf-8") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    @staticmethod
    def due(stored: Stored | None) -> str | None:
        """Why a stored timing must be taken again before its next use (None: it may be used)."""
        if stored is None:
            return None
        if stored.retime:
            return stored.retime
        return f"{stored.timing.uses} checks used it" if stored.timing.uses >= REFERENCE_RETIME_AFTER else None

    def keep(self, key: str, new: ReferenceTiming, old: Stored | None) -> Stored:
        """Store a timing just taken (`new`, with figures), replacing `old` and saying how they compare."""
        why = self.due(old)
        timing = replace(new, uses=0, replaced=compared(old.timing, new, why) if old is not None and why else None)
        stored = Stored(timing)
        self.write(key, stored)
        return stored

    def use(self, key: str, stored: Stored) -> ReferenceTiming:
        """Hand out `stored` for one check: the record as that check sees it (`uses`: the checks before it)."""
        self.write(key, replace(stored, timing=replace(stored.timing, uses=stored.timing.uses + 1)))
        return stored.timing

    def retime(self, key: str, why: str) -> None:
        """A check found the stored timing unfit (the GPU's clock or temperature moved): the next one re-times it."""
        stored = self.read(key)
        if stored is not None and not stored.retime:
            self.write(key, replace(stored, retime=why))
