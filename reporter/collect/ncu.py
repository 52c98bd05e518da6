"""Read Nsight Compute and torch.profiler exports and derive the figures a run page shows.

Formulas follow NVIDIA's own section rules (SpeedOfLight.py, CPIStall.py, SOLFPRoofline); each derived
figure carries its formula so the page can show it. Nothing here rescales a `.pct` metric: ncu's
percentages are already 0-100, and the previous viewer's x100 is how "L2 hit 279.3%" happened.
"""

from __future__ import annotations

import csv
import io
import math
import statistics
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..checks import bottleneck_label
from ..errors import CollectError
from ..units import UNIT_FACTORS
from . import limits
from .profiler import ProfilerSummary, parse_chrome_trace
from .safeio import checked_path, parse_json, read_bounded

__all__ = ["ProfilerSummary", "parse_chrome_trace"]  # re-exported: callers know one module for GPU exports

HEADER_PREFIX = '"ID","Process ID"'
ID_COLUMNS = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size", "Grid Size", "Device", "CC", "Kernel Time"}

# Launch shapes make no sense averaged across different kernels: those come from the longest kernel.
PER_LAUNCH = {"regs_per_thread", "smem_per_block", "block_size", "grid_size", "dominant_pipe", "bottleneck"}
STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active.ratio"
PIPE_NAMES = {"fma": "FP32 (FMA)", "alu": "ALU", "lsu": "LSU", "xu": "XU", "fp64": "FP64", "adu": "ADU", "cbu": "CBU", "uniform": "Uniform",
              "tensor_op_hmma": "Tensor (HMMA)", "tensor_op_gmma": "Tensor (GMMA)", "fma_type_fp16": "FP16", "tex": "TEX", "tma": "TMA", "ipa": "IPA"}


@dataclass(frozen=True)
class Metric:
    value: float | str | None
    unit: str

    def base(self) -> float | None:
        """The value in base units (seconds, bytes, hertz), or None when it is not a number."""
        if not isinstance(self.value, float):
            return None
        return self.value * UNIT_FACTORS.get(self.unit.lower(), 1.0)


@dataclass(frozen=True)
class NcuKernel:
    """One profiled launch with every metric ncu exported for it."""

    launch_id: int
    name: str
    block: str
    grid: str
    metrics: dict[str, Metric]

    def num(self, name: str) -> float | None:
        m = self.metrics.get(name)
        return m.value if m is not None and isinstance(m.value, float) else None

    def base(self, name: str) -> float | None:
        m = self.metrics.get(name)
        return m.base() if m is not None else None


def parse_value(text: str) -> float | str | None:
    text = text.strip()
    if text.lower() in ("", "n/a", "no data", "nan"):
        return None
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return text


def _csv_rows(path: Path, root: Path | None = None) -> list[dict[str, str]]:
    """The rows of an ncu CSV export; `root` (default: the file's folder) is where it must resolve."""
    raw = read_bounded(path, root or path.parent, "(file)", "MAX_ATTACHMENT_BYTES")
    text = raw.decode("utf-8", errors="replace").replace("\0", "\ufffd")
    start = text.find(HEADER_PREFIX)
    if start < 0:
        raise CollectError(path, "header", f"no ncu CSV header (a line starting with {HEADER_PREFIX}) found")
    csv.field_size_limit(limits.MAX_CSV_FIELD_CHARS)  # the same as Python's default, set so the message is true
    reader = csv.DictReader(io.StringIO(text[start:]))
    try:
        return list(reader)
    except csv.Error as exc:
        where = f"line {reader.line_num} after the header"
        if "field larger" in str(exc):
            raise CollectError(path, where, f"a field is over the limit {limits.describe('MAX_CSV_FIELD_CHARS')} characters") from exc
        raise CollectError(path, where, f"not a readable CSV: {exc}") from exc


def parse_ncu_raw(path: Path, rows: list[dict[str, str]] | None = None) -> list[NcuKernel]:
    """`ncu --page raw --csv`: one column per metric, a units row, then one row per launch."""
    rows = _csv_rows(path) if rows is None else rows
    if not rows:
        return []
    units = rows[0] if not (rows[0].get("ID") or "").strip() else {}
    kernels = []
    for row in rows[1 if units else 0:]:
        metrics = {
            k: Metric(parse_value(v or ""), (units.get(k) or "").strip())
            for k, v in row.items()
            if k is not None and k not in ID_COLUMNS and not k.startswith(("thread Domain", "Id:Domain"))
        }
        kernels.append(_kernel(path, row, metrics))
    return kernels


def parse_ncu_details(path: Path, rows: list[dict[str, str]] | None = None) -> list[NcuKernel]:
    """`ncu --page details --csv --print-metric-name name`: one row per (launch, metric); rule rows skipped."""
    by_id: dict[str, tuple[dict[str, str], dict[str, Metric]]] = {}
    for row in _csv_rows(path) if rows is None else rows:
        name = (row.get("Metric Name") or "").strip()
        entry = by_id.setdefault(row.get("ID", ""), (row, {}))
        if name:
            entry[1].setdefault(name, Metric(parse_value(row.get("Metric Value") or ""), (row.get("Metric Unit") or "").strip()))
    return [_kernel(path, row, metrics) for row, metrics in by_id.values()]


def _launch_id(path: Path, text: str) -> int:
    value = parse_value(text or "0")
    if value is None:
        return 0
    if not isinstance(value, float) or not value.is_integer():
        raise CollectError(path, "ID", f"{text[:80]!r} is not a launch number")
    return int(value)


def _kernel(path: Path, row: dict[str, str], metrics: dict[str, Metric]) -> NcuKernel:
    return NcuKernel(
        launch_id=_launch_id(path, row.get("ID") or "0"),
        name=(row.get("Kernel Name") or "").strip(),
        block=(row.get("Block Size") or "").strip(),
        grid=(row.get("Grid Size") or "").strip(),
        metrics=metrics,
    )


def ncu_python_dir() -> Path | None:
    """Where NVIDIA's ncu_report module lives: <ncu install dir>/extras/python.

    `ncu` on PATH is often a wrapper under the CUDA toolkit, so besides its own folders the usual
    install roots are searched; NCU_PYTHON_DIR overrides everything.
    """
    import glob
    import os
    import shutil
    if os.environ.get("NCU_PYTHON_DIR"):
        return Path(os.environ["NCU_PYTHON_DIR"])
    candidates: list[Path] = []
    ncu = shutil.which("ncu")
    if ncu is not None:
        for p in (Path(ncu), Path(ncu).resolve()):
            candidates += [base / "extras" / "python" for base in p.parents]
    for pattern in ("/opt/nvidia/nsight-compute/*/extras/python", "/usr/local/cuda*/nsight-compute*/extras/python",
                    "/usr/local/NVIDIA-Nsight-Compute*/extras/python"):
        candidates += [Path(p) for p in sorted(glob.glob(pattern), reverse=True)]
    return next((c for c in candidates if (c / "ncu_report.py").is_file()), None)


_NCU_DUMP = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import ncu_report
out = []
for rng in ncu_report.load_report(sys.argv[2]):
    for act in rng:
        try:
            name = act.name(ncu_report.IAction.NameBase_DEMANGLED)
        except (AttributeError, TypeError):
            name = act.name()
        metrics = {}
        for m_name in act.metric_names():
            m = act.metric_by_name(m_name)
            if m is None:
                continue
            try:
                v = m.value()
            except Exception:
                v = None
            metrics[m_name] = [v if isinstance(v, (int, float, str)) and not isinstance(v, bool) else None, m.unit() or ""]
        out.append({"name": str(name), "metrics": metrics})
json.dump(out, sys.stdout)
"""


def load_ncu_report(path: Path, python_dir: Path | None = None, root: Path | None = None) -> list[NcuKernel]:
    """`.ncu-rep` through NVIDIA's `ncu_report` module (ships with ncu under extras/python).

    The module is loaded in a child process: in a process that already holds torch it was seen to
    crash the interpreter (a native-library clash), and a parser must not take the build down.
    """
    import subprocess
    real = checked_path(path, root or path.parent, "(file)", "MAX_ATTACHMENT_BYTES")
    python_dir = python_dir or ncu_python_dir()
    if python_dir is None:
        raise CollectError(path, "ncu_report", "NVIDIA's ncu_report module was not found (set NCU_PYTHON_DIR); "
                           "export CSVs with `ncu -i FILE --page raw --csv --print-units base` instead")
    try:
        proc = subprocess.run([sys.executable, "-c", _NCU_DUMP, str(python_dir), str(real)], capture_output=True,
                              text=True, errors="replace", timeout=limits.NCU_REPORT_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise CollectError(path, "ncu_report", f"reading the report took longer than {limits.describe('NCU_REPORT_TIMEOUT_S')}") from exc
    if proc.returncode != 0:
        raise CollectError(path, "ncu_report", f"reading the report failed (exit {proc.returncode}): "
                           f"{(proc.stderr.strip().splitlines() or [''])[-1][:300]}")
    try:
        kernels = []
        for i, act in enumerate(parse_json(proc.stdout, path, "ncu_report")):
            metrics = {n: Metric(float(v) if isinstance(v, (int, float)) else v, u) for n, (v, u) in act["metrics"].items()}
            kernels.append(NcuKernel(i, str(act["name"]), "", "", metrics))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise CollectError(path, "ncu_report", f"the report's contents are not in the expected shape ({type(exc).__name__})") from exc
    return kernels


def load_ncu(path: Path, root: Path | None = None) -> list[NcuKernel]:
    """Kernels from an ncu CSV export or report; the file must resolve inside `root` (default: its own folder)."""
    if path.suffix == ".ncu-rep":
        return load_ncu_report(path, root=root)
    rows = _csv_rows(path, root)  # read once; the header tells the long details page from the wide raw page
    if rows and "Metric Name" in rows[0]:
        return parse_ncu_details(path, rows)
    return parse_ncu_raw(path, rows)


@dataclass(frozen=True)
class Figure:
    """A derived number, its unit and how it was computed."""

    value: float | int | str | None
    unit: str
    formula: str


@dataclass(frozen=True)
class KernelFigures:
    name: str
    duration_ns: float | None
    figures: dict[str, Figure]
    stalls_pct: list[tuple[str, float]] = field(default_factory=list)  # top 5, shares of all stall cycles
    stalls_raw_cycles: dict[str, float] = field(default_factory=dict)
    flop_count: float | None = None  # FP32 FLOPs of the launch(es): rate × duration
    dram_bytes: float | None = None  # DRAM bytes of the launch(es)


def _first(k: NcuKernel, *names: str) -> float | None:
    for n in names:
        v = k.num(n)
        if v is not None:
            return v
    return None


def _rates(k: NcuKernel, dur_s: float | None) -> tuple[float | None, float | None]:
    """Achieved FP32 FLOP/s and DRAM bytes/s of one launch."""
    # From per-cycle rates: the raw page has these even when .sum totals are absent.
    rates = [k.num(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum.per_cycle_elapsed") for op in ("fadd", "fmul", "ffma")]
    smsp_hz = k.base("smsp__cycles_elapsed.avg.per_second")
    flops_s = None
    if None not in rates and smsp_hz is not None:
        flops_s = (rates[0] + rates[1] + 2 * rates[2]) * smsp_hz  # type: ignore[operator]
    else:
        counts = [k.num(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum") for op in ("fadd", "fmul", "ffma")]
        if None not in counts and dur_s:
            flops_s = (counts[0] + counts[1] + 2 * counts[2]) / dur_s  # type: ignore[operator]
    bw = k.base("dram__bytes.sum.per_second")
    if bw is None and (b := k.base("dram__bytes.sum")) is not None and dur_s:
        bw = b / dur_s
    return flops_s, bw


def _access_and_launch(k: NcuKernel) -> dict[str, Figure]:
    """Sectors per request and the launch configuration (counts shown as integers)."""
    f: dict[str, Figure] = {}
    for op, key in (("ld", "ld_sectors_per_req"), ("st", "st_sectors_per_req")):
        s = k.num(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum")
        r = k.num(f"l1tex__t_requests_pipe_lsu_mem_global_op_{op}.sum")
        f[key] = Figure(s / r if s is not None and r else None, "sectors/req",
                        f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum ÷ l1tex__t_requests_…_op_{op}.sum (ideal 4)")
    f["regs_per_thread"] = Figure(k.num("launch__registers_per_thread"), "", "launch__registers_per_thread")
    smem = [k.num(f"launch__shared_mem_per_block_{p}") for p in ("static", "dynamic")]
    f["smem_per_block"] = Figure(sum(smem) if None not in smem else None, "B",  # type: ignore[arg-type]
                                 "launch__shared_mem_per_block_static + _dynamic")
    f["block_size"] = Figure(k.num("launch__block_size"), "threads", "launch__block_size")
    f["grid_size"] = Figure(k.num("launch__grid_size"), "blocks", "launch__grid_size")
    for key in ("regs_per_thread", "smem_per_block", "block_size", "grid_size"):
        count = f[key].value
        if isinstance(count, float) and count.is_integer():
            f[key] = Figure(int(count), f[key].unit, f[key].formula)
    return f


def derive(k: NcuKernel) -> KernelFigures:
    """Every figure of the report for one launch."""
    f: dict[str, Figure] = {}
    dur_s = k.base("gpu__time_duration.sum")
    sm = k.num("sm__throughput.avg.pct_of_peak_sustained_elapsed")
    mem = k.num("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed")
    dram = _first(k, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "dram__throughput.avg.pct_of_peak_sustained_elapsed")
    f["duration"] = Figure(dur_s * 1e6 if dur_s is not None else None, "µs", "gpu__time_duration.sum")
    f["sol_score"] = Figure(max(sm, mem) / 100 if sm is not None and mem is not None else None, "0–1",
                            "max(sm__throughput, gpu__compute_memory_throughput) / 100")
    f["compute_util"] = Figure(sm, "%", "sm__throughput.avg.pct_of_peak_sustained_elapsed")
    f["memory_util"] = Figure(mem, "%", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed (max of DRAM, L1, L2)")
    f["dram_util"] = Figure(dram, "%", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed")
    f["bottleneck"] = Figure(bottleneck_label(sm, mem), "", "SOLBottleneck: max≥80 → high throughput; both<60 → latency; |SM−Mem|≥10 → larger; else balanced")
    pipes = {n[len("sm__inst_executed_pipe_"):-len(".avg.pct_of_peak_sustained_active")]: v
             for n in k.metrics if n.startswith("sm__inst_executed_pipe_") and n.endswith(".avg.pct_of_peak_sustained_active")
             and (v := k.num(n)) is not None}
    if pipes:
        top = max(sorted(pipes), key=lambda p: pipes[p])
        f["dominant_pipe"] = Figure(PIPE_NAMES.get(top, top), "", "argmax over sm__inst_executed_pipe_*.avg.pct_of_peak_sustained_active")
        f["dominant_pipe_pct"] = Figure(pipes[top], "%", f"sm__inst_executed_pipe_{top}.avg.pct_of_peak_sustained_active")
    flops_s, bw = _rates(k, dur_s)
    f["fp32_tflops"] = Figure(flops_s / 1e12 if flops_s is not None else None, "TFLOP/s", "(fadd + fmul + 2·ffma) per cycle × SM clock")
    f["dram_bandwidth"] = Figure(bw / 1e9 if bw is not None else None, "GB/s", "dram__bytes.sum.per_second")
    f["arithmetic_intensity"] = Figure(flops_s / bw if flops_s is not None and bw else None, "FLOP/B",
                                       "FP32 FLOP/s ÷ DRAM bytes/s")
    ffma_pk = k.num("sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained")
    sm_hz = k.base("sm__cycles_elapsed.avg.per_second")
    peak_flops = 2 * ffma_pk * sm_hz if ffma_pk is not None and sm_hz is not None else None
    dram_pk = k.num("dram__bytes.sum.peak_sustained")
    dram_hz = k.base("dram__cycles_elapsed.avg.per_second")
    peak_bw = dram_pk * dram_hz if dram_pk is not None and dram_hz is not None else None
    f["peak_fp32_tflops"] = Figure(peak_flops / 1e12 if peak_flops else None, "TFLOP/s", "2 · ffma.peak_sustained × SM clock")
    f["peak_bw"] = Figure(peak_bw / 1e9 if peak_bw else None, "GB/s", "dram__bytes.sum.peak_sustained × DRAM clock")
    f["ridge_point"] = Figure(peak_flops / peak_bw if peak_flops and peak_bw else None, "FLOP/B", "peak FP32 FLOP/s ÷ peak DRAM bytes/s")
    f["fp32_util"] = Figure(100 * flops_s / peak_flops if flops_s is not None and peak_flops else None, "%", "achieved FP32 FLOP/s ÷ peak")
    f["occupancy"] = Figure(k.num("sm__warps_active.avg.pct_of_peak_sustained_active"), "%", "sm__warps_active.avg.pct_of_peak_sustained_active")
    f["theoretical_occupancy"] = Figure(k.num("sm__maximum_warps_per_active_cycle_pct"), "%", "sm__maximum_warps_per_active_cycle_pct")
    f["l1_hit"] = Figure(k.num("l1tex__t_sector_hit_rate.pct"), "%", "l1tex__t_sector_hit_rate.pct (already 0–100)")
    f["l2_hit"] = Figure(k.num("lts__t_sector_hit_rate.pct"), "%", "lts__t_sector_hit_rate.pct (already 0–100)")
    f.update(_access_and_launch(k))
    raw_stalls = {n[len(STALL_PREFIX):-len(STALL_SUFFIX)]: v for n in k.metrics
                  if n.startswith(STALL_PREFIX) and n.endswith(STALL_SUFFIX) and (v := k.num(n)) is not None}
    total = sum(raw_stalls.values())
    shares = sorted(((r, 100 * v / total) for r, v in raw_stalls.items()), key=lambda x: (-x[1], x[0])) if total > 0 else []
    flop_count = flops_s * dur_s if flops_s is not None and dur_s is not None else None
    dram_bytes = bw * dur_s if bw is not None and dur_s is not None else None
    return KernelFigures(k.name, dur_s * 1e9 if dur_s is not None else None, f, shares[:5], raw_stalls, flop_count, dram_bytes)


def summarize(kernels: list[KernelFigures]) -> KernelFigures | None:
    """Duration-weighted mean of every numeric figure across a multi-kernel run; stalls weighted the same way."""
    if not kernels:
        return None
    if len(kernels) == 1:
        return kernels[0]
    weights = [k.duration_ns or 0.0 for k in kernels]
    if not sum(weights):
        weights = [1.0] * len(kernels)
    figs: dict[str, Figure] = {}
    for key, first in kernels[0].figures.items():
        vals = [(k.figures[key].value, w) for k, w in zip(kernels, weights) if key in k.figures]
        if key == "duration":
            total = sum(v for v, _ in vals if isinstance(v, float))
            figs[key] = Figure(total, first.unit, "Σ gpu__time_duration.sum over kernels")
        elif key == "arithmetic_intensity":
            figs[key] = _summed_intensity(kernels, first)
        elif key not in PER_LAUNCH and all(isinstance(v, float) for v, _ in vals) and vals:
            ws = [w for _, w in vals]
            mean = statistics.fmean([float(v) for v, _ in vals if isinstance(v, float)], ws if sum(ws) else None)
            figs[key] = Figure(mean, first.unit, f"duration-weighted mean of: {first.formula}")
        else:
            longest = max(zip(kernels, weights), key=lambda kw: kw[1])[0]
            figs[key] = Figure(longest.figures.get(key, first).value, first.unit, f"from the longest kernel: {first.formula}")
    reasons: dict[str, float] = {}
    for k, w in zip(kernels, weights):
        for r, v in k.stalls_raw_cycles.items():
            reasons[r] = reasons.get(r, 0.0) + v * w
    total = sum(reasons.values())
    shares = sorted(((r, 100 * v / total) for r, v in reasons.items()), key=lambda x: (-x[1], x[0])) if total else []
    flops, dram = _total(k.flop_count for k in kernels), _total(k.dram_bytes for k in kernels)
    return KernelFigures(f"{len(kernels)} kernels", sum(weights), figs, shares[:5], reasons, flops, dram)


def _total(values: Iterable[float | None]) -> float | None:
    xs = list(values)
    return None if not xs or None in xs else math.fsum(xs)  # type: ignore[arg-type]


def _summed_intensity(kernels: list[KernelFigures], first: Figure) -> Figure:
    """Σ FLOPs ÷ Σ bytes over the launches: the intensity of the call as a whole.

    Averaging per-launch ratios (even weighted by time) overstates it: a short launch that moves many
    bytes and does no math counts for little time but for many bytes.
    """
    flops, dram = _total(k.flop_count for k in kernels), _total(k.dram_bytes for k in kernels)
    formula = "Σ FP32 FLOPs ÷ Σ DRAM bytes over all kernels (each: rate × gpu__time_duration.sum)"
    if flops is None or not dram:
        return Figure(None, first.unit, formula + "; not every kernel reported both")
    return Figure(flops / dram, first.unit, formula)
