"""The two steps of validating one kernel, the same under every executor: build it, then check it.

`build` goes through the build cache: a finished build is reused, a missing one is built under the
accelerations (light torch headers among them: lightbuild.py) and, if that fails to compile, rebuilt
exactly as written before the kernel is called a compile error. `check` runs the worker's correctness and timing on a build that is ready. Both fork the
worker from a warm `ForkServer`. Standard library only (Ray GPU workers import this).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..core.schema import Verdict, WorkerJob
from . import buildcache, lightbuild
from .forkserver import ForkServer
from .process import run_forked

# Variables that change the build; the check repeats the build's values or torch would rebuild.
BUILD_VARS = ("TORCH_EXTENSION_SKIP_NVCC_GEN_DEPENDENCIES", lightbuild.ENV)


def _attempt(server: ForkServer, mode: str, job: WorkerJob, job_dir: Path, timeout_s: float,
             env: dict[str, str | None], on_start: Callable[[int], None] | None,
             on_end: Callable[[int], None] | None) -> dict[str, Any]:
    """One forked child; `on_start`/`on_end` get its pid (a guard registers it for the timing gate)."""
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
          toolchain_env: dict[str, str | None], accelerate: bool = True,
          on_start: Callable[[int], None] | None = None, on_end: Callable[[int], None] | None = None) -> dict[str, Any]:
    """The compile step's worker output plus `build` ("cached", "accelerated", "plain", "plain-retry"),
    `build_env` (what the check must repeat), `cpu_s` and `wall_s`."""
    t0 = time.perf_counter()
    job = replace(job, extensions_dir=str(buildcache.build_dir(root, key)))
    with buildcache.locked(root, key):
        marker = buildcache.built(root, key)
        if marker is not None:
            return {"verdict": Verdict.CORRECT, "reason": "built earlier (build cache)", "phase_s": {"compile": 0.0},
                    "build": "cached", "build_env": marker["env"], "cpu_s": 0.0, "wall_s": time.perf_counter() - t0}
        base = {**toolchain_env, "TORCH_EXTENSIONS_DIR": job.extensions_dir, "REPORTER_NICE": buildcache.COMPILE_NICE}
        plain = {**base, **dict.fromkeys(BUILD_VARS)}
        tries = [("accelerated", {**base, **buildcache.ACCELERATIONS}), ("plain-retry", plain)] if accelerate \
            else [("plain", plain)]
        cpu = 0.0
        for label, env in tries:  # the label of the attempt that ended the loop is recorded below
            out = _attempt(server, "compile", job, job_dir, timeout_s, {**env, lightbuild.LABEL_ENV: label}, on_start, on_end)
            cpu += out.get("cpu_s", 0.0)
            if out.get("verdict") != Verdict.COMPILE_ERROR:
                break
            buildcache.clear(root, key)  # a half-built folder must not leak into the plain build
        wall = time.perf_counter() - t0
        # The label goes with the build to every check, whose result says how its extension was built.
        build_env = {**{k: env.get(k) for k in (*BUILD_VARS, "TORCH_CUDA_ARCH_LIST")}, lightbuild.LABEL_ENV: label}
        out.update(build=label, build_env=build_env, cpu_s=cpu, wall_s=wall)
        if out.get("verdict") == Verdict.CORRECT:
            buildcache.mark_built(root, key, build_env, wall, cpu)
        return out


def check(server: ForkServer, job: WorkerJob, root: Path, key: str, build_env: dict[str, str | None],
          job_dir: Path, timeout_s: float, gate_dir: str | None, on_start: Callable[[int], None] | None = None,
          on_end: Callable[[int], None] | None = None, threads: int | None = None) -> dict[str, Any]:
    """Correctness and timing of a built kernel, in one forked child (`threads`: its torch CPU threads)."""
    job = replace(job, extensions_dir=str(buildcache.build_dir(root, key)))
    env = {**build_env, "TORCH_EXTENSIONS_DIR": job.extensions_dir, "REPORTER_GATE_DIR": gate_dir,
           "REPORTER_THREADS": str(threads) if threads else None}
    t0 = time.perf_counter()
    out = _attempt(server, "check", job, job_dir, timeout_s, env, on_start, on_end)
    out["wall_s"] = time.perf_counter() - t0
    return out
