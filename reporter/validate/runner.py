"""Stage 2: re-validate submitted kernels, one isolated process per kernel: the entry point.

The parent never imports torch at module level and never executes trace content: `worker.py` does,
in a child process with a timeout. This module finds what is not cached yet and hands it to an
executor: `executors/local.py` (this machine's cores and GPUs) or `executors/ray.py` (a cluster);
`recorder.py` writes each result as it arrives. No rendering imports here: the GPU machine has no plotly.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from ..core import cache
from ..core.errors import Problem
from ..core.judgement import replay_for
from ..core.records import ValidationResult, ValidationSettings
from ..core.rules import STRICT
from ..core.schema import CheckStrength, Verdict, WorkerJob
from . import buildcache, problemcheck, throughput
from .executors.local import LocalExecutor
from .machine import environment, import_torch
from .recorder import Item, Outcome, Recorder, RunStats, make_items, toolchain
from .throughput import Summary

if TYPE_CHECKING:
    from ..collect.traces import RunRecord


log = logging.getLogger(__name__)

def _key(run: RunRecord) -> str | None:
    # The trace as written, never the redacted one: the key and the executed kernel must be the real ones.
    fk, ref = run.source.final_kernel, run.source.reference_source
    if fk is None or ref is None:
        return None
    return cache.content_key(fk.source, ref)


def ncu_or_replay_missing(result: ValidationResult, run: RunRecord, ncu: bool) -> str | None:
    """Why a cached result cannot stand for this run (None: it can): it lacks the counters `--ncu` asks for, or the
    replay under the run's own rules (the rules may be newer than the result: an import with `--rules`)."""
    if ncu and not result.ncu_files:
        return "the cached result has no ncu counters (--ncu)"
    rules = run.source.run.rules
    if result.verdict == Verdict.COMPILE_ERROR:  # nothing to replay: it fails every rule set's build alike
        return None
    if rules and rules != STRICT.name and ((rep := replay_for(result, rules)) is None or rep.rules != rules):
        return f"the cached result has no replay under the run's rules ({rules})"
    return None


def cached_lookup(data: Path, run: RunRecord, problems: list[Problem] | None = None) -> tuple[ValidationResult, Path] | None:
    """The newest result for this kernel and reference, whatever machine and settings measured it (an older
    format's when the current one has none: what a page shows)."""
    fk, ref = run.source.final_kernel, run.source.reference_source
    return cache.lookup_shown(data, fk.source, ref, problems) if fk is not None and ref is not None else None


def local_gpus() -> list[str]:
    """CUDA_VISIBLE_DEVICES values, one per GPU this process may use (one check worker each)."""
    torch = import_torch()
    if not torch.cuda.is_available():
        return []
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible:
        return [v.strip() for v in visible.split(",") if v.strip()][: torch.cuda.device_count()]
    return [str(i) for i in range(torch.cuda.device_count())]


@dataclass(frozen=True)
class Run:
    """What an executor is handed for one call."""

    items: list[Item]
    recorder: Recorder
    root: Path
    toolchain_env: dict[str, str | None]
    timeout_s: float
    gate: bool
    ncu: bool
    checks_per_gpu: int
    jobs: int | None
    prepare: Callable[[WorkerJob], WorkerJob] | None = None  # what a job needs before its check (the problem's strength)


def _local(r: Run, device: str) -> tuple[RunStats, int, int]:
    """The run on this machine's cores and GPUs; (its stats, cores, GPUs)."""
    wall, cpu, _ = buildcache.measured_cost(r.root)
    to_build = sum(1 for it in r.items if buildcache.built(r.root, it.build_key) is None)
    compile_jobs = r.jobs or buildcache.pool_size(len(os.sched_getaffinity(0)), wall, cpu, max(1, to_build))
    gpus = local_gpus() if device == "cuda" else []
    stats = LocalExecutor(gpus, compile_jobs, r.root, r.toolchain_env, r.timeout_s, r.gate, r.ncu,
                          r.checks_per_gpu, r.prepare).run(r.items, r.recorder)
    return stats, len(os.sched_getaffinity(0)), max(1, len(gpus))


def _ray(r: Run, address: str | None) -> tuple[RunStats, int, int]:
    """The run on a Ray cluster; (its stats, the cluster's CPUs, its GPUs)."""
    from .executors.ray import RayExecutor
    stats = RayExecutor(address, r.toolchain_env, r.timeout_s, r.gate).run(r.items, r.recorder)
    return stats, stats.compile_jobs, stats.check_workers


def _strengths(data: Path, items: list[Item], device: str, per_gpu: int, timeout_s: float, gpu: str,
               progress: bool) -> Future[dict[str, CheckStrength]]:
    """Each problem's check strength, which its kernels' checks need (its transforms are their trials), measured
    in the background while the first builds compile: only the checks wait for it."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="strength")
    found = pool.submit(problemcheck.strengths, data, [it.job for it in items], local_gpus() if device == "cuda" else [],
                        per_gpu, timeout_s, gpu, progress)
    pool.shutdown(wait=False)
    return found


def validate_runs(data: Path, runs: Sequence[RunRecord], settings: ValidationSettings, *, ncu: bool = False,
                  force: bool = False, progress: bool = False, jobs: int | None = None, device: str | None = None,
                  executor: str = "local", address: str | None = None, gate: bool = True, checks_per_gpu: int = 4,
                  stats: list[RunStats] | None = None, summaries: list[Summary] | None = None,
                  outcomes: list[Outcome] | None = None) -> dict[str, tuple[ValidationResult, bool]]:
    """Validate every run that has a final kernel; returns run id -> (result, came from cache).

    Results are written to DATA/validation/ as each kernel finishes, and the call's summary
    (`throughput`) beside them at the end; `stats` and `summaries`, when given, receive the run's time
    split and that summary; `outcomes`, each executor outcome as it is stored (what an interrupted caller can
    still report). `jobs`: compiles at once (default: sized from the measured cost of a build).
    """
    t0 = time.perf_counter()
    remote = executor == "ray"
    if remote:
        from .executors.ray import probe_environment
        env, arch = probe_environment(address)
    else:
        env, arch = environment(), None
    device = device or ("cuda" if env.gpu != "cpu" else "cpu")
    results: dict[str, tuple[ValidationResult, bool]] = {}
    todo = []
    for run in runs:
        key = _key(run)
        if key is None:
            continue
        hit = None if force else cache.lookup(data, key, env, settings)
        if hit is not None and not ncu_or_replay_missing(hit[0], run, ncu):
            log.debug("validate %s: cached result for this GPU and settings, not measured again", run.run_id)
            results[run.run_id] = (hit[0], True)
        else:
            log.debug("validate %s: %s", run.run_id, "--force" if force else "no cached result for this GPU and settings"
                      if hit is None else ncu_or_replay_missing(hit[0], run, ncu))
            todo.append((run, key))
    if not todo:
        return results
    root = buildcache.default_root()
    tools = toolchain(env, arch)
    items = make_items(todo, settings, device, tools, root)
    found = None if remote else _strengths(data, items, device, checks_per_gpu, settings.timeout_s, env.gpu or "cpu", progress)
    prepare = None if found is None else (lambda job: problemcheck.with_strength(job, found.result()))
    recorder = Recorder(data, {r.run_id: r for r, _ in todo}, settings, env, len(items), progress, outcomes=outcomes)
    toolchain_env: dict[str, str | None] = {"TORCH_CUDA_ARCH_LIST": tools["TORCH_CUDA_ARCH_LIST"]} if tools["TORCH_CUDA_ARCH_LIST"] else {}
    executor_run = Run(items, recorder, root, toolchain_env, settings.timeout_s, gate, ncu, checks_per_gpu, jobs, prepare)
    run_stats, cores, n_gpus = _ray(executor_run, address) if remote else _local(executor_run, device)
    if found is not None:
        found.exception()  # every problem measured (and stored) before the call returns, checked kernels or not
    run_stats = dataclasses.replace(run_stats, outcomes=tuple(recorder.outcomes), stored_at=MappingProxyType(recorder.stored_at))
    if stats is not None:
        stats.append(run_stats)
    summary = throughput.summarize(recorder.outcomes, run_stats.wall_s, time.perf_counter() - t0, cores, n_gpus)
    throughput.write(data / cache.CACHE_DIR, summary)
    if summaries is not None:
        summaries.append(summary)
    results.update(recorder.results)
    return results
