"""Derive the figures a run page shows from one profiled launch (or several), following NVIDIA's own
section rules (SpeedOfLight.py, CPIStall.py, SOLFPRoofline). Each figure carries its formula so the page
can show it; nothing here rescales a `.pct` metric (ncu's percentages are already 0-100).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..core.checks import bottleneck_label
from ..core.frozen import freeze
from ..core.units import UNIT_FACTORS

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
    figures: Mapping[str, Figure]
    stalls_pct: Sequence[tuple[str, float]] = ()  # top 5, shares of all stall cycles
    stalls_raw_cycles: Mapping[str, float] = field(default_factory=dict)
    flop_count: float | None = None  # FP32 FLOPs of the launch(es): rate × duration
    dram_bytes: float | None = None  # DRAM bytes of the launch(es)

    def __post_init__(self) -> None:
        freeze(self, ("stalls_pct",), ("figures", "stalls_raw_cycles"))


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
