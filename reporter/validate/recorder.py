"""The driver's side of the validation pipeline, whatever executes it.

The driver turns runs into work items (content key for the results cache, build key for the build
cache), orders them so results stream out (kernels already built first), and writes each result to
``DATA/validation/`` as soon as an executor reports it: it is the only writer, so an interrupted run
resumes where it stopped (finished results are cache hits, finished builds are build-cache hits).
Executors (executors/local.py, executors/ray.py) only compile and check and report `Outcome`s.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.cheats import scan
from ..core.records import DEFAULT_PRECISION, Environment, MachineState, StaticFinding, ValidationResult, ValidationSettings, measured, sha256_text
from ..core.schema import EXCLUSIVE, PHASES, CheckSettings, WorkerJob, WorkerResult
from . import buildcache, manifest
from .machine import machine_state

if TYPE_CHECKING:
    from ..collect.traces import RunRecord

@dataclass(frozen=True)
class Item:
    """One kernel to validate; `job` is what the worker reads (trace content stays data here)."""
    run_id: str
    key: str
    build_key: str
    job: WorkerJob


@dataclass(frozen=True)
class Outcome:
    """What an executor reports for one item: the worker's result (the build's, when it did not build) and the
    step times, in seconds (`*_at` since the run started)."""
    item: Item
    result: WorkerResult
    compile_s: float = 0.0
    compile_cpu_s: float = 0.0
    queue_s: float = 0.0
    check_s: float = 0.0
    check_cpu_s: float = 0.0
    compiled_at: float = 0.0
    finished_at: float = 0.0
    build: str = ""
    worker: str = ""
    ncu_files: Mapping[str, Path] = field(default_factory=dict)
    gpu: str = ""  # the GPU (local: its CUDA_VISIBLE_DEVICES value; Ray: its node) the check ran on
    ncu_s: float = 0.0  # the Nsight Compute round after the check (--ncu), from the moment it had the GPU alone


@dataclass(frozen=True)
class RunStats:
    """The whole run, for the benchmark and the progress line."""
    wall_s: float = 0.0
    compile_jobs: int = 0
    check_workers: int = 0
    paused_s: float = 0.0
    timing_windows: int = 0
    exclusive_s: float = 0.0  # seconds with a timing window open: the GPU held by one check (or reference)
    retried_alone: tuple[str, ...] = ()  # checks run again alone after running out of GPU memory beside others
    outcomes: tuple[Outcome, ...] = ()
    stored_at: Mapping[str, float] = field(default_factory=dict)  # run id -> seconds after the start when stored


def toolchain(env: Environment, arch: str | None = None) -> dict[str, str | None]:
    """Everything besides the source that changes a build; TORCH_CUDA_ARCH_LIST pinned for the compiles,
    which run with the GPU hidden (or on machines without one: `arch`, asked of a checking machine), and
    for the checks, which must not rebuild."""
    arch = arch or (_compute_capability() if env.gpu not in (None, "cpu") else None)
    return {"torch": env.torch, "cuda": env.cuda, "python": env.python, "gpu": env.gpu,
            "TORCH_CUDA_ARCH_LIST": arch}


def _compute_capability() -> str | None:
    import os
    if os.environ.get("TORCH_CUDA_ARCH_LIST"):
        return os.environ["TORCH_CUDA_ARCH_LIST"]
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    try:
        caps = subprocess.run([smi, "--query-gpu=compute_cap", "--format=csv,noheader"], capture_output=True,
                              text=True, timeout=30).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    # torch's own default when it asks the device: every present architecture, PTX for the newest
    archs = sorted(set(caps), key=lambda c: tuple(int(x) for x in c.split(".")))
    return ";".join([*archs[:-1], archs[-1] + "+PTX"]) if archs else None


def make_items(todo: list[tuple[RunRecord, str]], settings: ValidationSettings, device: str,
               tools: dict[str, str | None], root: Path) -> list[Item]:
    items = []
    for run, key in todo:
        fk, ref = run.source.final_kernel, run.source.reference_source
        assert fk is not None and ref is not None
        job = WorkerJob(ref, fk.source, check_settings(settings), device, run.source.run.precision or DEFAULT_PRECISION,
                        rules=run.source.run.rules)
        items.append(Item(run.run_id, key, buildcache.build_key(fk.source, tools), job))
    # Built kernels first: they reach the GPU at once while the first compiles are still running.
    return sorted(items, key=lambda it: buildcache.built(root, it.build_key) is None)


def phases_text(phase_s: Mapping[str, float]) -> str:
    """A check's phase times for its progress line, in the order they ran ("" for a result without any)."""
    shown = [(p, phase_s[p]) for p in PHASES if p in phase_s]
    alone = f"; the GPU to itself {phase_s[EXCLUSIVE]:.1f}" if EXCLUSIVE in phase_s and shown else ""
    return (": " + ", ".join(f"{p} {v:.1f}" for p, v in shown) + alone) if shown else ""


def check_settings(settings: ValidationSettings) -> CheckSettings:
    """The settings as the worker reads them: ValidationSettings is CheckSettings's fields (core.derive)."""
    return CheckSettings(**{name: getattr(settings, name) for name in CheckSettings.__dataclass_fields__})


def to_result(outcome: Outcome, run: RunRecord, settings: ValidationSettings, env: Environment,
              machine: MachineState | None = None) -> ValidationResult:
    fk = run.source.final_kernel
    assert fk is not None and run.source.reference_source is not None
    findings = [StaticFinding(check=f.check, severity=f.severity, line=f.line, text=f.text, message=f.message)
                for f in scan(fk.source, run.source.run.backend)]
    phases = {k: round(v, 3) for k, v in outcome.result.phase_s.items()}
    return measured(replace(outcome.result, phase_s=phases),
                    precision=outcome.item.job.precision, precision_assumed=run.source.run.precision is None,
                    kernel_sha256=sha256_text(fk.source), reference_sha256=sha256_text(run.source.reference_source),
                    settings=settings, environment=env, machine=machine, static_findings=findings,
                    measured_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))


class Recorder:
    """Writes each outcome to the results cache the moment it arrives (from any executor thread)."""

    def __init__(self, data: Path, runs: dict[str, RunRecord], settings: ValidationSettings, env: Environment,
                 total: int, progress: bool, on_stored: Callable[[str], None] | None = None,
                 outcomes: list[Outcome] | None = None) -> None:
        self.data, self.runs, self.settings, self.env = data, runs, settings, env
        self.total, self.progress, self.on_stored = total, progress, on_stored
        self.lock = threading.Lock()
        self.machine: MachineState | None = None
        self.results: dict[str, tuple[ValidationResult, bool]] = {}
        self.outcomes: list[Outcome] = outcomes if outcomes is not None else []
        self.stored_at: dict[str, float] = {}
        self.t0 = time.monotonic()

    def __call__(self, outcome: Outcome) -> None:
        run = self.runs[outcome.item.run_id]
        with self.lock:
            # Clocks and load, read once per run: right after the first kernel's timing.
            self.machine = self.machine or machine_state()
        result = to_result(outcome, run, self.settings, self.env, self.machine)
        with self.lock:
            manifest.store(self.data, outcome.item.key, result, outcome.ncu_files)
            self.results[outcome.item.run_id] = (result, False)
            self.outcomes.append(outcome)
            self.stored_at[outcome.item.run_id] = time.monotonic() - self.t0
            n = len(self.results)
        if self.progress and run.source.run.precision is None:
            print(f"[{n}/{self.total}] {outcome.item.run_id}: the trace records no precision; checked at "
                  f"{DEFAULT_PRECISION}", file=sys.stderr, flush=True)
        if self.progress:
            print(f"[{n}/{self.total}] {outcome.item.run_id}: {result.verdict} (build {outcome.build or '-'} "
                  f"{outcome.compile_s:.1f} s, queued {outcome.queue_s:.1f} s, check {outcome.check_s:.1f} s "
                  f"on {outcome.worker or '-'}{phases_text(result.phase_s)}) {result.reason}", file=sys.stderr, flush=True)
        if self.on_stored is not None:
            self.on_stored(outcome.item.run_id)
