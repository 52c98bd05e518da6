"""Page data for GPU counters measured by Nsight Compute, beside the harness's recorded nsight figures."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..collect.ncu import KernelFigures
from ..collect.traces import ProfileSet
from ..core.checks import Flag, check_measured
from ..core.records import NsightMetrics
from . import charts, text

# Measured ncu figure -> the recorded nsight field that claims the same thing (kernel side).
RECORDED_FIGURE = {"sol_score": "sol_score", "compute_util": "compute_util_pct", "dram_util": "dram_util_pct",
                   "bottleneck": "bottleneck", "dominant_pipe": "dominant_pipe", "dominant_pipe_pct": "dominant_pipe_pct",
                   "fp32_tflops": "fp32_tflops", "dram_bandwidth": "dram_bandwidth_gbps",
                   "arithmetic_intensity": "arithmetic_intensity", "peak_fp32_tflops": "peak_fp32_tflops",
                   "peak_bw": "peak_bw_gbps", "ridge_point": "ridge_point", "fp32_util": "fp32_util_pct",
                   "occupancy": "occupancy_pct", "l1_hit": "l1_hit_pct", "l2_hit": "l2_hit_pct",
                   "ld_sectors_per_req": "ld_sectors_per_req", "st_sectors_per_req": "st_sectors_per_req",
                   "regs_per_thread": "regs_per_thread", "smem_per_block": "smem_per_block_bytes", "block_size": "block_size"}
STALL_FORMULA = "share = 100 · stall_r ÷ Σ all stall reasons (smsp__average_warps_issue_stalled_*_per_issue_active.ratio)"


@dataclass(frozen=True)
class Cell:
    value: str
    flag: Flag | None = None


@dataclass(frozen=True)
class CounterRow:
    label: str
    cells: tuple[Cell, ...]
    recorded: Cell | None
    formula: str


@dataclass(frozen=True)
class KernelRow:
    name: str
    duration: str
    compute: str
    memory: str
    regs: str
    block: str
    bottleneck: str


@dataclass(frozen=True)
class CountersView:
    headers: tuple[tuple[str, str], ...]  # (role, where the counters come from)
    rows: tuple[CounterRow, ...]
    stall_rows: tuple[tuple[str, str], ...]  # (role, "reason 41.2% · ...")
    kernel_tables: tuple[tuple[str, tuple[KernelRow, ...]], ...]  # roles profiled as several kernels
    profiler_rows: tuple[tuple[str, str, str, str], ...]  # torch.profiler exports: role, launches, CUDA time, memcpy/memset
    figures: dict[str, Any]

    @property
    def colspan(self) -> int:
        """Columns a full-width stall row spans: one per role, the formula, and the recorded column if any."""
        return len(self.headers) + 1 + (1 if any(r.recorded for r in self.rows) else 0)

    @property
    def has_recorded(self) -> bool:
        return any(r.recorded for r in self.rows)


def _value(fig: Any) -> str:
    return text.DASH if fig is None else _with_unit(fig.value, fig.unit)


def _with_unit(value: Any, unit: str) -> str:
    """A figure with its unit ("66.63 GB/s"); a score on 0–1 and a label (the bottleneck) have none."""
    shown = unit if value is not None and not isinstance(value, str) and unit not in ("", "0–1") else ""
    return f"{text.num(value)} {shown}".strip()


def _rows(summaries: dict[str, KernelFigures], recorded: NsightMetrics | None, flags: dict[str, Flag]) -> tuple[CounterRow, ...]:
    first = next(iter(summaries.values()))
    mflags = {role: check_measured(s.figures) for role, s in summaries.items()}
    rows = []
    for key, fig in first.figures.items():
        cells = tuple(Cell(_value(s.figures.get(key)), mflags[role].get(key)) for role, s in summaries.items())
        rec = None
        if recorded is not None and key in RECORDED_FIGURE:
            attr = RECORDED_FIGURE[key]
            # The recorded field claims the same figure, so it is shown in the measured figure's unit.
            rec = Cell(_with_unit(getattr(recorded, attr), fig.unit), flags.get(f"nsight.{attr}"))
        rows.append(CounterRow(key.replace("_", " "), cells, rec, fig.formula))
    return tuple(rows)


def _kernel_rows(p: ProfileSet) -> tuple[KernelRow, ...]:
    def v(k: KernelFigures, key: str, digits: int = 2) -> str:
        fig = k.figures.get(key)
        return text.num(fig.value, digits) if fig is not None else text.DASH
    return tuple(KernelRow(k.name[:90], f"{v(k, 'duration')} µs", v(k, "compute_util", 1), v(k, "memory_util", 1),
                           v(k, "regs_per_thread", 0), v(k, "block_size", 0),
                           str(k.figures["bottleneck"].value) if k.figures.get("bottleneck") and k.figures["bottleneck"].value else text.DASH)
                 for k in p.ncu_kernels)


def _charts(summaries: dict[str, KernelFigures]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    any_sum = next(iter(summaries.values()))
    pk, pb = any_sum.figures["peak_fp32_tflops"].value, any_sum.figures["peak_bw"].value
    pts = [(role, s.figures["arithmetic_intensity"].value, s.figures["fp32_tflops"].value) for role, s in summaries.items()]
    pts_ok = [(a, float(b), float(c)) for a, b, c in pts if isinstance(b, float) and isinstance(c, float)]
    if isinstance(pk, float) and isinstance(pb, float) and pts_ok:
        out["roofline"] = charts.to_json(charts.roofline(pk, pb, pts_ok))
    series = [(role, s.stalls_pct) for role, s in summaries.items() if s.stalls_pct]
    if series:
        out["stalls"] = charts.to_json(charts.stall_bars(series))
    return out


def counters_view(profiles: dict[str, ProfileSet], sources: dict[str, str], recorded: NsightMetrics | None,
                  flags: dict[str, Flag]) -> CountersView | None:
    """Counters per role (kernel, reference); None when nothing was profiled and nothing was exported."""
    summaries = {role: s for role, p in sorted(profiles.items()) if p.ncu_kernels and (s := p.ncu_summary) is not None}
    profiler_rows = tuple((role, text.num(p.profiler.launches), f"{text.num(p.profiler.cuda_time_us, 1)} µs",
                           f"{p.profiler.memcpy} / {p.profiler.memset}")
                          for role, p in sorted(profiles.items()) if p.profiler is not None)
    if not summaries and not profiler_rows:
        return None
    headers = tuple((role, sources.get(role, "") + (f"; {len(profiles[role].ncu_kernels)} kernels, duration-weighted (intensity: Σ FLOPs ÷ Σ bytes)"
                                                    if len(profiles[role].ncu_kernels) > 1 else "")) for role in summaries)
    stall_rows = tuple((role, " · ".join(f"{r} {text.num(v, 1)}%" for r, v in s.stalls_pct)) for role, s in summaries.items())
    tables = tuple((role, _kernel_rows(profiles[role])) for role in summaries if len(profiles[role].ncu_kernels) > 1)
    return CountersView(headers, _rows(summaries, recorded, flags) if summaries else (), stall_rows, tables, profiler_rows,
                        _charts(summaries) if summaries else {})
