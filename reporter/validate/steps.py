"""The two steps of validating one kernel, the same under every executor: build it, then check it.

`build` goes through the build cache: a finished build is reused, a missing one is built under the
accelerations (light torch headers among them: lightbuild.py) and, if that fails to compile, rebuilt
exactly as written before the kernel is called a compile error. `check` runs the worker's correctness and
timing on a build that is ready, with its problem's stored reference timing (`refstore`; timed first in a
worker of its own when due). All fork the worker from a warm `ForkServer`. Standard library only (Ray GPU
workers import this).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..core.rules import STRICT
from ..core.schema import TOTALS, BenchmarkReplay, Verdict, WorkerJob, WorkerResult
from . import buildcache, lightbuild
from .forkserver import ForkServer
from .process import run_forked
from .refstore import ReferenceStore, moved, store_key

# Variables that change the build; the check repeats the build's values or torch would rebuild.
BUILD_VARS = ("TORCH_EXTENSION_SKIP_NVCC_GEN_DEPENDENCIES", lightbuild.ENV)


@dataclass(frozen=True)
class StepResult:
    """What one step (build or check) of one kernel hands its executor: the worker's result and its cost.

    It crosses threads (the local executor's queue) and processes (Ray tasks' return values), so it is
    plain and read-only to the type checker (see core.frozen)."""

    result: WorkerResult
    wall_s: float = 0.0
    cpu_s: float = 0.0  # the worker child's and everything it waited for (ninja, nvcc)
    build: str = ""  # a build: how ("cached", "accelerated", "plain", "plain-retry")
    build_env: Mapping[str, str | None] = field(default_factory=dict)  # a build: what its check must repeat
    node: str = ""  # the Ray node it ran on


def with_build_phases(checked: StepResult, built: StepResult) -> StepResult:
    """The check's result with the build's phase times before its own."""
    phases = {**built.result.phase_s, **checked.result.phase_s}
    return replace(checked, result=replace(checked.result, phase_s=phases))


def _attempt(server: ForkServer, mode: str, job: WorkerJob, job_dir: Path, timeout_s: float,
             env: dict[str, str | None], on_start: Callable[[int], None] | None,
             on_end: Callable[[int], None] | None) -> tuple[WorkerResult, float]:
    """One forked child, and its CPU seconds; `on_start`/`on_end` get its pid (a guard registers it for the timing gate)."""
    pid = 0

    def started(p: int) -> None:
        nonlocal pid
        pid = p
        if on_start is not None:
            on_start(p)
    try:
        return run_forked(server, mode, job, job_dir, timeout_s, env, started)
    finally:
        if on_end is not None and pid:
            on_end(pid)


def build(server: ForkServer, job: WorkerJob, root: Path, key: str, job_dir: Path, timeout_s: float,
          toolchain_env: Mapping[str, str | None], accelerate: bool = True,
          on_start: Callable[[int], None] | None = None, on_end: Callable[[int], None] | None = None) -> StepResult:
    """The compile step through the build cache: a build made earlier is reused, a failed accelerated build
    is retried plainly; `build_env` is what the check must repeat."""
    t0 = time.perf_counter()
    job = replace(job, extensions_dir=str(buildcache.build_dir(root, key)))
    with buildcache.locked(root, key):
        marker = buildcache.built(root, key)
        if marker is not None:
            cached = WorkerResult(Verdict.CORRECT, "built earlier (build cache)", phase_s={"compile": 0.0})
            return StepResult(cached, time.perf_counter() - t0, build="cached", build_env=marker.env)
        base = {**toolchain_env, "TORCH_EXTENSIONS_DIR": job.extensions_dir, "REPORTER_NICE": buildcache.COMPILE_NICE}
        plain = {**base, **dict.fromkeys(BUILD_VARS)}
        tries = [("accelerated", {**base, **buildcache.ACCELERATIONS}), ("plain-retry", plain)] if accelerate \
            else [("plain", plain)]
        cpu = 0.0
        for label, env in tries:  # the label of the attempt that ended the loop is recorded below
            out, cpu_s = _attempt(server, "compile", job, job_dir, timeout_s, {**env, lightbuild.LABEL_ENV: label}, on_start, on_end)
            cpu += cpu_s
            if out.verdict != Verdict.COMPILE_ERROR:
                break
            buildcache.clear(root, key)  # a half-built folder must not leak into the plain build
        wall = time.perf_counter() - t0
        # The label goes with the build to every check, whose result says how its extension was built.
        build_env = {**{k: env.get(k) for k in (*BUILD_VARS, "TORCH_CUDA_ARCH_LIST")}, lightbuild.LABEL_ENV: label}
        if out.verdict == Verdict.CORRECT:
            buildcache.mark_built(root, key, build_env, wall, cpu)
        return StepResult(out, wall, cpu, label, build_env)


def _reference(server: ForkServer, job: WorkerJob, refs: ReferenceStore, shared: bool, job_dir: Path, timeout_s: float,
               env: dict[str, str | None], hooks: tuple[Callable[[int], None] | None, Callable[[int], None] | None],
               ) -> tuple[WorkerJob, float, dict[str, float]]:
    """The job with the stored reference timing it may use (timed first, in a worker that loads no submission,
    when none is stored and `shared`, or when the stored one is due); the CPU seconds and the phases it cost."""
    t0 = time.perf_counter()
    key = store_key(job, refs.gpu)
    cpu, spent = 0.0, dict[str, float]()
    with refs.locked(key):
        stored = refs.read(key)
        if stored is None and not shared:
            return job, cpu, {}
        if stored is None or refs.due(stored):
            got, cpu = _attempt(server, "reference", job, job_dir, timeout_s, env, *hooks)
            spent = {k: v for k, v in got.phase_s.items() if k in TOTALS}
            if got.verdict != Verdict.CORRECT or got.reference_from is None:
                return job, cpu, {"reference": time.perf_counter() - t0, **spent}
            stored = refs.keep(key, replace(got.reference_from, figures=got.reference_timing), stored)
        timing = refs.use(key, stored)
    return replace(job, stored_reference=timing), cpu, {"reference": time.perf_counter() - t0, **spent}


def check(server: ForkServer, job: WorkerJob, root: Path, key: str, build_env: Mapping[str, str | None],
          job_dir: Path, timeout_s: float, gate_dir: str | None, on_start: Callable[[int], None] | None = None,
          on_end: Callable[[int], None] | None = None, threads: int | None = None,
          refs: ReferenceStore | None = None, shared: bool = False) -> StepResult:
    """Correctness and timing of a built kernel, in one forked child (`threads`: its torch CPU threads), with the
    reference timing `refs` keeps for its problem (`shared`: more kernels of the problem are checked in this call)."""
    job = replace(job, extensions_dir=str(buildcache.build_dir(root, key)))
    env = {**build_env, "TORCH_EXTENSIONS_DIR": job.extensions_dir, "REPORTER_GATE_DIR": gate_dir,
           "REPORTER_THREADS": str(threads) if threads else None}
    t0 = time.perf_counter()
    cpu, before = 0.0, dict[str, float]()
    if refs is not None:
        job, cpu, before = _reference(server, job, refs, shared, job_dir, timeout_s, env, (on_start, on_end))
    out, cpu_s = _attempt(server, "check", job, job_dir, timeout_s, env, on_start, on_end)
    if job.rules and job.rules != STRICT.name and out.verdict != Verdict.COMPILE_ERROR:
        # The benchmark's verdict, in a child of its own: a kernel that spoils its context spoils one verdict only.
        got, replay_cpu = _attempt(server, "replay", job, job_dir, timeout_s, env, on_start, on_end)
        cpu += replay_cpu
        out = replace(out, benchmark=got.benchmark or BenchmarkReplay(
            job.rules, None, 0, 0, problem=f"the replay did not finish: {got.reason or got.verdict.value}"),
            phase_s={**out.phase_s, **{k: v for k, v in got.phase_s.items() if k == "replay"}})
    stored = job.stored_reference
    if refs is not None and stored is not None and out.reference_not_reused and moved(stored.reading, out.gpu_reading):
        refs.retime(store_key(job, refs.gpu), out.reference_not_reused)
    phases = {**before, **out.phase_s, **{k: out.phase_s.get(k, 0.0) + before[k] for k in TOTALS if k in before}}
    return StepResult(replace(out, phase_s=phases), time.perf_counter() - t0, cpu_s + cpu)
