"""Nsight Compute profiles of one kernel and its reference (`--ncu`).

ncu must start the process it profiles, so this is the one step that runs the worker in a fresh
interpreter instead of a fork of the warm server.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

from ..core.schema import Verdict, WorkerJob
from . import buildcache
from .process import run_fresh

NCU_METRICS = ",".join([
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "dram__bytes.sum",
])
NCU_SECTIONS = ["SpeedOfLight", "SpeedOfLight_RooflineChart", "ComputeWorkloadAnalysis", "MemoryWorkloadAnalysis",
                "Occupancy", "LaunchStats", "WarpStateStats"]


def profile_ncu(job: WorkerJob, root: Path, build_key: str, env: dict[str, str | None], work: Path,
                timeout_s: float) -> dict[str, Path]:
    """role -> raw CSV of the profile, for the roles that profiled; empty without ncu."""
    args = [*[a for s in NCU_SECTIONS for a in ("--section", s)], "--metrics", NCU_METRICS]
    return _profile_roles(job, root, build_key, env, work, timeout_s, args, "ncu")


def profile_durations(job: WorkerJob, root: Path, build_key: str, env: dict[str, str | None], work: Path,
                      timeout_s: float, cache_control: str) -> dict[str, Path]:
    """role -> raw CSV of `gpu__time_duration.sum` alone, in one pass, with ncu's `--cache-control`.

    ncu's default ("all") flushes the caches before every kernel, so each kernel of a multi-kernel call
    starts cold; "none" leaves them as the previous kernel left them, as in the eager call that device
    time measures (the worker flushes L2 once before the measured call, as the device timing does).
    """
    args = ["--cache-control", cache_control, "--metrics", "gpu__time_duration.sum"]
    return _profile_roles(job, root, build_key, env, work, timeout_s, args, f"ncu-duration-{cache_control}")


def _profile_roles(job: WorkerJob, root: Path, build_key: str, env: dict[str, str | None], work: Path,
                   timeout_s: float, args: list[str], label: str) -> dict[str, Path]:
    ncu = shutil.which("ncu")
    if ncu is None:
        return {}
    ext = str(buildcache.build_dir(root, build_key))
    job = replace(job, extensions_dir=ext)
    env = {**env, "TORCH_EXTENSIONS_DIR": ext}
    files: dict[str, Path] = {}
    for role in ("kernel", "reference"):
        rdir = work / f"{label}-{role}"
        rep = rdir / "profile"
        prefix = [ncu, "--target-processes", "all", "--clock-control", "none", "--nvtx", "--nvtx-include", "measured/",
                  *args, "-f", "-o", str(rep)]
        out = run_fresh("profile", replace(job, role=role), rdir, timeout_s * 3, env, prefix)
        report = rep.with_suffix(".ncu-rep")
        if out.verdict != Verdict.CORRECT or not report.is_file():
            continue
        csv_path = rdir / "raw.csv"
        with open(csv_path, "w", encoding="utf-8") as fh:
            subprocess.run([ncu, "-i", str(report), "--page", "raw", "--csv", "--print-units", "base"], stdout=fh,
                           stderr=subprocess.DEVNULL, timeout=300, check=False)
        if csv_path.stat().st_size > 0:
            files[role] = csv_path
    return files
