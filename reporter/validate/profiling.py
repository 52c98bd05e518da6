"""Nsight Compute profiles of one kernel and its reference (`--ncu`).

ncu must start the process it profiles, so this is the one step that runs the worker in a fresh
interpreter instead of a fork of the warm server. The fast round is one ncu invocation per kernel: one
worker calls the kernel and then the reference, each in an NVTX range ncu profiles, with a marker kernel
between them by which the one export splits into the two sides (`split_sides`), and asks for only the
metrics the pages read (`NCU_PAGE_METRICS`) rather than whole sections. Where that yields nothing (a
metric this GPU does not have, say), each side is profiled on its own with the sections, as before.
"""

from __future__ import annotations

import csv
import io
import logging
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

from ..core.schema import Verdict, WorkerJob
from . import buildcache
from .attribution import MARKER
from .process import run_fresh

log = logging.getLogger(__name__)

NCU_METRICS = ",".join([
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "dram__bytes.sum",
])
NCU_SECTIONS = ["SpeedOfLight", "SpeedOfLight_RooflineChart", "ComputeWorkloadAnalysis", "MemoryWorkloadAnalysis",
                "Occupancy", "LaunchStats", "WarpStateStats"]


# Every metric `collect.figures` reads, as an H200 export names them (sm_90: the gmma pipe, no dram__throughput).
NCU_PAGE_METRICS = (
    "gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    *[f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum{s}" for op in ("fadd", "fmul", "ffma") for s in ("", ".per_cycle_elapsed")],
    "smsp__cycles_elapsed.avg.per_second", "sm__cycles_elapsed.avg.per_second", "dram__cycles_elapsed.avg.per_second",
    "dram__bytes.sum", "dram__bytes.sum.per_second", "dram__bytes.sum.peak_sustained",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
    "sm__warps_active.avg.pct_of_peak_sustained_active", "sm__maximum_warps_per_active_cycle_pct",
    "l1tex__t_sector_hit_rate.pct", "lts__t_sector_hit_rate.pct",
    *[f"l1tex__t_{w}_pipe_lsu_mem_global_op_{op}.sum" for op in ("ld", "st") for w in ("sectors", "requests")],
    "launch__registers_per_thread", "launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic",
    "launch__block_size", "launch__grid_size",
    *[f"sm__inst_executed_pipe_{p}.avg.pct_of_peak_sustained_active" for p in (
        "adu", "alu", "cbu", "fma", "fma_type_fp16", "fp64", "lsu", "tensor_op_dmma", "tensor_op_gmma", "tensor_op_hmma",
        "tensor_op_imma", "tex", "tma", "uniform", "xu")],
    *[f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in (
        "barrier", "branch_resolving", "dispatch_stall", "drain", "gmma", "imc_miss", "lg_throttle", "long_scoreboard",
        "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instruction", "not_selected", "selected",
        "short_scoreboard", "sleeping", "tex_throttle", "wait")],
)
HEADER_PREFIX = '"ID","Process ID"'


def profile_ncu(job: WorkerJob, root: Path, build_key: str, env: dict[str, str | None], work: Path,
                timeout_s: float) -> dict[str, Path]:
    """role -> raw CSV of the profile, for the roles that profiled; empty without ncu."""
    fast = _profile_both(job, root, build_key, env, work, timeout_s)
    if fast:
        return fast
    args = [*[a for s in NCU_SECTIONS for a in ("--section", s)], "--metrics", NCU_METRICS]
    return _profile_roles(job, root, build_key, env, work, timeout_s, args, "ncu")


def split_sides(text: str) -> tuple[str, str] | None:
    """A raw CSV export of a "both" profile -> (the kernel's, the reference's), each with the header and units
    rows: the launches before the marker kernel and after it. None without exactly one marker."""
    start = text.find(HEADER_PREFIX)
    if start < 0:
        return None
    rows = list(csv.reader(io.StringIO(text[start:])))
    if len(rows) < 2 or "Kernel Name" not in rows[0]:
        return None
    name = rows[0].index("Kernel Name")
    marks = [i for i, r in enumerate(rows) if i >= 2 and len(r) > name and MARKER in r[name]]
    if len(marks) != 1:
        return None

    def written(body: list[list[str]]) -> str:
        out = io.StringIO()
        csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows[:2] + body)
        return out.getvalue()
    return written(rows[2:marks[0]]), written(rows[marks[0] + 1:])


def _ncu_prefix(ncu: str, report: Path, args: list[str]) -> list[str]:
    return [ncu, "--target-processes", "all", "--clock-control", "none", "--nvtx", "--nvtx-include", "measured/", *args,
            "-f", "-o", str(report)]


def _export(ncu: str, report: Path, csv_path: Path) -> bool:
    with open(csv_path, "w", encoding="utf-8") as fh:
        subprocess.run([ncu, "-i", str(report), "--page", "raw", "--csv", "--print-units", "base"], stdout=fh,
                       stderr=subprocess.DEVNULL, timeout=300, check=False)
    return csv_path.stat().st_size > 0


def _profile_both(job: WorkerJob, root: Path, build_key: str, env: dict[str, str | None], work: Path,
                  timeout_s: float) -> dict[str, Path]:
    """The fast round: both sides in one invocation, the pages' metrics only; {} when it yields no split export."""
    ncu = shutil.which("ncu")
    if ncu is None:
        return {}
    ext = str(buildcache.build_dir(root, build_key))
    rdir = work / "ncu-both"
    rep = rdir / "profile"
    out = run_fresh("profile", replace(job, extensions_dir=ext, role="both"), rdir, timeout_s * 3,
                    {**env, "TORCH_EXTENSIONS_DIR": ext}, _ncu_prefix(ncu, rep, ["--metrics", ",".join(NCU_PAGE_METRICS)]))
    raw = rdir / "raw.csv"
    # Each way out says why in the log: the slower round that follows costs a second ncu invocation.
    if out.verdict != Verdict.CORRECT or not rep.with_suffix(".ncu-rep").is_file():
        log.warning("ncu fast round in %s: %s, no report; profiling each side on its own. %s", work.name,
                    out.verdict.value, (out.reason + " " + (out.log or "")[-1500:]).strip())
        return {}
    if not _export(ncu, rep.with_suffix(".ncu-rep"), raw):
        log.warning("ncu fast round in %s: the report exported nothing; profiling each side on its own", work.name)
        return {}
    text = raw.read_text(encoding="utf-8", errors="replace")
    sides = split_sides(text)
    if sides is None:
        log.warning("ncu fast round in %s: the export does not split at one %s launch (%d found); profiling each "
                    "side on its own", work.name, MARKER, text.count(MARKER))
        return {}
    files = {}
    for role, text in zip(("kernel", "reference"), sides, strict=True):
        path = rdir / f"{role}.raw.csv"
        path.write_text(text, encoding="utf-8")
        files[role] = path
    return files


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
        out = run_fresh("profile", replace(job, role=role), rdir, timeout_s * 3, env, _ncu_prefix(ncu, rep, args))
        report = rep.with_suffix(".ncu-rep")
        if out.verdict != Verdict.CORRECT or not report.is_file():
            continue
        if _export(ncu, report, rdir / "raw.csv"):
            files[role] = rdir / "raw.csv"
    return files
