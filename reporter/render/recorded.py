"""Page data for the harness's own metric groups: each recorded value as text, next to its flag."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from markupsafe import Markup

from ..core.checks import Flag
from ..core.records import LaunchMetrics, MemoryMetrics, NsightMetrics, PrecisionMetrics, TimingMetrics
from ..core.units import UNIT_LABEL
from . import numbers, text

SECTION_TITLES = {"timing": "timing", "precision": "numerical precision", "memory": "gpu memory",
                  "launches": "kernel launches / fusion", "nsight": "SOL, roofline & occupancy"}
# Recorded nsight fields, in page order: (label, field, how the value is shown).
NSIGHT_ROWS: tuple[tuple[str, str, str], ...] = (
    ("SOL score (0–1)", "sol_score", "num3"), ("compute util %", "compute_util_pct", "pct"),
    ("dram util %", "dram_util_pct", "pct"), ("bottleneck", "bottleneck", "str"), ("dominant pipe", "dominant_pipe", "str"),
    ("dominant pipe %", "dominant_pipe_pct", "pct"), ("arithmetic intensity", "arithmetic_intensity", "num"),
    ("ridge point", "ridge_point", "num"), ("dram bandwidth", "dram_bandwidth_gbps", "GB/s"),
    ("fp32 tflops", "fp32_tflops", "num"), ("fp32 util %", "fp32_util_pct", "pct"), ("fp16 tflops", "fp16_tflops", "num"),
    ("occupancy %", "occupancy_pct", "pct"), ("L1 hit %", "l1_hit_pct", "pct"), ("L2 hit %", "l2_hit_pct", "pct"),
    ("ld sectors / req", "ld_sectors_per_req", "num"), ("st sectors / req", "st_sectors_per_req", "num"),
    ("regs / thread", "regs_per_thread", "num"), ("smem / block", "smem_per_block_bytes", "B"),
    ("block size", "block_size", "num"), ("peak bw", "peak_bw_gbps", "GB/s"), ("peak fp32 tflops", "peak_fp32_tflops", "num"),
    ("peak fp16 tflops", "peak_fp16_tflops", "num"),
)


@dataclass(frozen=True)
class Row:
    label: str
    value: str  # Markup for times (their exact value in a tooltip)
    flag: Flag | None = None
    wide: bool = False  # a long unbreakable value (a timestamp): the card takes a whole row on a phone

    @property
    def css(self) -> str:
        return " ".join(c for c, on in (("has-flag", self.flag), ("wide", self.wide)) if on)


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    source: str
    rows: tuple[Row, ...]
    note: str = ""


def pct(value: float | None) -> str:
    return f"{text.num(value, 1)}%" if value is not None else text.DASH


def shown(value: object, how: str) -> str:
    """A recorded value in the form NSIGHT_ROWS names; None is "—" whatever the form."""
    if value is None:
        return text.DASH
    if how == "pct":
        return pct(value)  # type: ignore[arg-type]
    if how == "num3":
        return text.num(value, 3)
    if how == "str":
        return str(value)
    if how in ("GB/s", "B"):
        return f"{text.num(value)} {how}"
    return text.num(value)


Lookup = Callable[[str], Flag | None]


def _three(a: float | None, b: float | None, c: float | None, unit: str) -> Markup:
    return Markup(" / ").join(numbers.recorded_time_html(x, unit) for x in (a, b, c))


def _timing(t: TimingMetrics, flag: Lookup) -> Section:
    u = UNIT_LABEL[t.unit]
    rows: tuple[Row, ...] = (
        Row("kernel runtime", numbers.recorded_time_html(t.runtime, t.unit), flag("timing.runtime")),
        Row("ref runtime", numbers.recorded_time_html(t.ref_runtime, t.unit), flag("timing.ref_runtime")),
        Row("speedup", text.speedup(t.speedup), flag("timing.speedup")),
        Row("kernel mean / median / std", _three(t.kernel_mean, t.kernel_median, t.kernel_std, t.unit), flag("timing.kernel_mean")),
        Row("ref mean / median / std", _three(t.ref_mean, t.ref_median, t.ref_std, t.unit), flag("timing.ref_mean")),
        # where the reference time came from: a baseline file is the first thing to check when a speedup looks wrong
        Row("reference time from", t.ref_source or "not recorded", wide=bool(t.ref_source)),
        Row("reference timed on", t.ref_gpu or "not recorded", flag("timing.ref_gpu")),
    )
    if t.compile_ref_runtime is not None or t.compile_speedup is not None:
        rows += (Row("torch.compile ref runtime", numbers.recorded_time_html(t.compile_ref_runtime, t.unit)),
                 Row("speedup vs torch.compile", text.speedup(t.compile_speedup)))
    return Section("timing", SECTION_TITLES["timing"], t.source, rows, note=f"values carry the unit the harness claimed ({u})")


def _precision(p: PrecisionMetrics, flag: Lookup) -> Section:
    rows = tuple(Row(label, text.num(getattr(p, name)), flag(f"precision.{name}")) for label, name in (
        ("max abs error", "max_abs_error"), ("mean abs error", "mean_abs_error"),
        ("max rel error", "max_rel_error"), ("mean rel error", "mean_rel_error")))
    return Section("precision", SECTION_TITLES["precision"], p.source, rows)


def _memory(m: MemoryMetrics, flag: Lookup) -> Section:
    return Section("memory", SECTION_TITLES["memory"], m.source, (
        Row("kernel peak", f"{text.num(m.kernel_peak_mb)} MB", flag("memory.kernel_peak_mb")),
        Row("ref peak", f"{text.num(m.ref_peak_mb)} MB", flag("memory.ref_peak_mb")),
        Row("kernel / ref", f"{text.num(m.ratio)}x", flag("memory.ratio")),
    ))


def _launches(la: LaunchMetrics, flag: Lookup) -> Section:
    return Section("launches", SECTION_TITLES["launches"], la.source, (
        Row("kernel launches", text.num(la.kernel_launches), flag("launches.kernel_launches")),
        Row("ref launches", text.num(la.ref_launches), flag("launches.ref_launches")),
        Row("fusion ratio (ref / kernel)", f"{text.num(la.fusion_ratio)}x", flag("launches.fusion_ratio")),
        Row("total cuda time", numbers.recorded_time_html(la.total_cuda_time_us, "us"), flag("launches.total_cuda_time_us")),
    ))


def _nsight(n: NsightMetrics, flag: Lookup) -> list[Section]:
    rows = tuple(Row(label, shown(getattr(n, name), how), flag(f"nsight.{name}")) for label, name, how in NSIGHT_ROWS)
    out = [Section("nsight", SECTION_TITLES["nsight"], n.source, rows)]
    if n.warp_stalls_pct:
        stalls = [Row(k, pct(v), flag(f"nsight.warp_stalls_pct.{k}")) for k, v in n.warp_stalls_pct.items()]
        total = flag("nsight.warp_stalls_pct")
        if total is not None:
            stalls.append(Row("sum of shown shares", pct(sum(n.warp_stalls_pct.values())), total))
        out.append(Section("stalls", "warp stalls (top 5)", n.warp_stalls_source, tuple(stalls)))
    return out


def recorded_sections(metrics_groups: tuple[TimingMetrics | None, PrecisionMetrics | None, MemoryMetrics | None,
                                             LaunchMetrics | None, NsightMetrics | None],
                      flags: dict[str, Flag]) -> list[Section]:
    """The harness's metric groups as recorded, in page order; a group that was not recorded is left out."""
    timing, precision, memory, launches, nsight = metrics_groups
    flag = flags.get
    out: list[Section] = []
    if timing:
        out.append(_timing(timing, flag))
    if precision:
        out.append(_precision(precision, flag))
    if memory:
        out.append(_memory(memory, flag))
    if launches:
        out.append(_launches(launches, flag))
    if nsight:
        out.extend(_nsight(nsight, flag))
    return out
