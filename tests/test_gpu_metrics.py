"""Parsers and derived figures, against the real H200 exports shipped with seed 003."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from conftest import DATA
from reporter.collect import ncu as gm
from reporter.core.checks import bottleneck_label
from reporter.core.errors import CollectError

SEED3 = DATA / "seed-003-l2-p8"


@pytest.mark.parametrize("name", ["p8_new_raw.csv", "p8_new_details.csv"])
def test_kernel_export_exact_values(name: str) -> None:
    (k,) = gm.load_ncu(SEED3 / name)
    assert k.name.startswith("grounded_top2_kernel(")
    assert k.block == "(128, 1, 1)" and k.grid == "(1024, 1, 1)"
    assert k.num("gpu__time_duration.sum") == 12384.0  # "12,384": thousands separator stripped
    f = gm.derive(k)
    assert f.duration_ns == pytest.approx(12384.0)
    assert f.figures["regs_per_thread"].value == 32
    assert f.figures["smem_per_block"].value == 8192
    assert f.figures["block_size"].value == 128
    assert f.figures["l2_hit"].value == pytest.approx(24.54)
    assert f.figures["l1_hit"].value == pytest.approx(73.25)
    assert f.figures["occupancy"].value == pytest.approx(46.57)
    assert f.figures["sol_score"].value == pytest.approx(0.2803)
    assert f.figures["bottleneck"].value == "latency-bound"
    assert f.figures["peak_bw"].value == pytest.approx(1504 * 3.19078380706, rel=1e-6)
    assert f.figures["ridge_point"].value == pytest.approx(13.74, abs=0.01)
    assert f.figures["ld_sectors_per_req"].value is None  # not collected in this export: unknown, not 0
    assert f.stalls_pct[0][0] == "long_scoreboard"
    assert sum(v for _, v in f.stalls_pct) < 100


def test_stall_shares_are_shares_of_all_reasons() -> None:
    # The expectation is computed here from the CSV itself (csv module, not the parser): each reason's
    # stall ratio over the sum of ALL reasons, the five largest, largest first.
    path = SEED3 / "p8_new_raw.csv"
    header, _units, values = list(csv.reader(path.read_text(encoding="utf-8").splitlines()))[-3:]
    prefix, suffix = "smsp__average_warps_issue_stalled_", "_per_issue_active.ratio"
    raw = {name[len(prefix):-len(suffix)]: float(v.replace(",", "")) for name, v in zip(header, values)
           if name.startswith(prefix) and name.endswith(suffix) and v}
    assert len(raw) > 5
    expect = sorted(((r, 100 * v / sum(raw.values())) for r, v in raw.items()), key=lambda x: (-x[1], x[0]))[:5]
    f = gm.derive(gm.load_ncu(path)[0])
    assert [r for r, _ in f.stalls_pct] == [r for r, _ in expect]
    assert [v for _, v in f.stalls_pct] == pytest.approx([v for _, v in expect])


def test_reference_has_eight_kernels_and_a_weighted_summary() -> None:
    ks = [gm.derive(k) for k in gm.parse_ncu_raw(SEED3 / "p8_ref_raw.csv")]
    assert len(ks) == 8
    s = gm.summarize(ks)
    assert s is not None and s.name == "8 kernels"
    assert s.figures["duration"].value == pytest.approx(41.12)
    total = sum(k.duration_ns or 0 for k in ks)
    expect = sum((k.figures["compute_util"].value or 0) * (k.duration_ns or 0) for k in ks) / total  # type: ignore[operator]
    assert s.figures["compute_util"].value == pytest.approx(expect)
    assert "duration-weighted" in s.figures["compute_util"].formula


def test_details_and_raw_agree() -> None:
    raw = gm.derive(gm.load_ncu(SEED3 / "p8_ref_raw.csv")[3])
    det = gm.derive(gm.load_ncu(SEED3 / "p8_ref_details.csv")[3])
    for key in ("duration", "compute_util", "l2_hit", "regs_per_thread"):
        assert raw.figures[key].value == pytest.approx(det.figures[key].value)


def test_bottleneck_rule() -> None:
    assert bottleneck_label(85, 20) == "compute-bound (high throughput)"
    assert bottleneck_label(30, 40) == "latency-bound"
    assert bottleneck_label(75, 50) == "compute-bound"
    assert bottleneck_label(65, 60) == "balanced"
    assert bottleneck_label(None, 1) is None


def test_values_and_junk(tmp_path: Path) -> None:
    assert gm.parse_value("1,205.00") == 1205.0
    assert gm.parse_value("n/a") is None
    assert gm.parse_value("PolicySpread") == "PolicySpread"
    bad = tmp_path / "x.csv"
    bad.write_text("==PROF== nothing profiled\n")
    with pytest.raises(CollectError) as exc:
        gm.load_ncu(bad)
    assert exc.value.field == "header"


def test_csv_with_preamble_and_old_header(tmp_path: Path) -> None:
    # Older ncu: a "Kernel Time" column, no Block/Grid/CC, program output before the header.
    text = ('==PROF== Connected\nhello from the program\n'
            '"ID","Process ID","Process Name","Host Name","Kernel Name","Kernel Time","Context","Stream","Section Name","Metric Name","Metric Unit","Metric Value"\n'
            '"0","1","p","h","k1","2020-01-01","1","7","GPU Speed Of Light","gpu__time_duration.sum","usecond","2.5"\n'
            '"0","1","p","h","k1","2020-01-01","1","7","GPU Speed Of Light","sm__throughput.avg.pct_of_peak_sustained_elapsed","%","n/a"\n')
    p = tmp_path / "old.csv"
    p.write_text(text)
    (k,) = gm.load_ncu(p)
    assert k.base("gpu__time_duration.sum") == pytest.approx(2.5e-6)
    assert gm.derive(k).figures["compute_util"].value is None


@pytest.mark.parametrize("name,launches,cuda_us", [("p8_new_trace.json", 1, 8.0), ("p8_ref_trace.json", 8, 28.769),
                                                   ("p10_new_trace.json", 3, 445.598), ("p10_ref_trace.json", 9, 41.857)])
def test_chrome_traces(name: str, launches: int, cuda_us: float) -> None:
    folder = SEED3 if name.startswith("p8") else DATA / "seed-000-l2-p10"
    p = gm.parse_chrome_trace(folder / name)
    assert p.launches == launches
    assert p.cuda_time_us == pytest.approx(cuda_us)


def test_chrome_trace_memcpy_counted_apart() -> None:
    p = gm.parse_chrome_trace(DATA / "seed-000-l2-p10" / "p10_ref_trace.json")
    assert p.memcpy == 1 and p.launches == 9


def test_ncu_report_is_read_in_a_child_process(tmp_path: Path) -> None:
    # A stand-in for NVIDIA's module with the same API: the parent never imports it itself.
    (tmp_path / "ncu_report.py").write_text('''
class _M:
    def __init__(self, v, u): self.v, self.u = v, u
    def value(self): return self.v
    def unit(self): return self.u
class IAction:
    NameBase_DEMANGLED = 1
class _A:
    def __init__(self, name, metrics): self._n, self._m = name, metrics
    def name(self, base=None): return self._n
    def metric_names(self): return list(self._m)
    def metric_by_name(self, n): return _M(*self._m[n]) if n in self._m else None
def load_report(path):
    return [[_A("k1(int)", {"gpu__time_duration.sum": (1500, "nsecond"), "launch__registers_per_thread": (40, "register/thread"),
                            "launch__cluster_scheduling_policy": ("PolicySpread", "")})]]
''')
    import sys
    (tmp_path / "x.ncu-rep").write_bytes(b"stand-in")
    kernels = gm.load_ncu_report(tmp_path / "x.ncu-rep", tmp_path)
    assert "ncu_report" not in sys.modules
    (k,) = kernels
    assert k.name == "k1(int)" and k.base("gpu__time_duration.sum") == pytest.approx(1.5e-6)
    assert gm.derive(k).figures["regs_per_thread"].value == 40
    assert k.metrics["launch__cluster_scheduling_policy"].value == "PolicySpread"


def _seed0_kernel_csv(validation: Path = DATA / "validation") -> Path:
    # The kernel CSV that seed 000's re-validation result names in `ncu_files`.
    import json
    for result in sorted(validation.glob("*/*.json")):
        doc = json.loads(result.read_text())
        if doc["kernel_sha256"].startswith("dc735908fe0d"):
            return result.parent / doc["ncu_files"]["kernel"]
    raise AssertionError("seed 000's validation result is missing")


def test_multi_kernel_intensity_is_total_flops_over_total_bytes() -> None:
    ks = [gm.derive(k) for k in gm.load_ncu(_seed0_kernel_csv())]
    assert len(ks) == 3
    s = gm.summarize(ks)
    assert s is not None
    flops = sum((k.figures["fp32_tflops"].value or 0) * 1e12 * (k.duration_ns or 0) * 1e-9 for k in ks)
    dram = sum((k.figures["dram_bandwidth"].value or 0) * 1e9 * (k.duration_ns or 0) * 1e-9 for k in ks)
    ai = s.figures["arithmetic_intensity"].value
    assert ai == pytest.approx(flops / dram)
    # ...which is not the mean of the per-kernel ratios (what reporter 0.1 showed: 577.96 against ~375 then)
    ratios = [k.figures["arithmetic_intensity"].value for k in ks if k.figures["arithmetic_intensity"].value]
    assert ai != pytest.approx(sum(ratios) / len(ratios), rel=0.05)  # type: ignore[arg-type]
    assert "Σ FP32 FLOPs ÷ Σ DRAM bytes" in s.figures["arithmetic_intensity"].formula
    # The roofline's y (achieved FLOP/s) over its x (intensity) is the achieved DRAM bandwidth of the whole call.
    tflops, bw = s.figures["fp32_tflops"].value, s.figures["dram_bandwidth"].value
    assert tflops * 1e3 / ai == pytest.approx(bw)  # type: ignore[operator]


def test_intensity_is_unknown_when_a_kernel_lacks_bytes() -> None:
    ks = [gm.derive(k) for k in gm.load_ncu(_seed0_kernel_csv())]
    import dataclasses
    ks[0] = dataclasses.replace(ks[0], dram_bytes=None)
    s = gm.summarize(ks)
    assert s is not None and s.figures["arithmetic_intensity"].value is None


def kernel(**metrics: tuple[float, str]) -> gm.NcuKernel:
    return gm.NcuKernel(0, "k", "", "", {name: gm.Metric(v, unit) for name, (v, unit) in metrics.items()})


OP = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"


def test_an_fma_is_two_flops_from_per_cycle_rates_and_from_totals() -> None:
    rates = kernel(**{OP.format(op) + ".per_cycle_elapsed": (v, "") for op, v in (("fadd", 1.0), ("fmul", 2.0), ("ffma", 3.0))},
                   **{"smsp__cycles_elapsed.avg.per_second": (1.0, "ghz"), "gpu__time_duration.sum": (1000.0, "nsecond")})
    f = gm.derive(rates)
    assert f.figures["fp32_tflops"].value == pytest.approx(9e9 / 1e12)  # (1 + 2 + 2·3) per cycle × 1 GHz
    assert f.flop_count == pytest.approx(9e9 * 1e-6)
    totals = kernel(**{OP.format(op): (v, "inst") for op, v in (("fadd", 100.0), ("fmul", 50.0), ("ffma", 25.0))},
                    **{"gpu__time_duration.sum": (1.0, "usecond")})  # no per-cycle rates: from the totals
    f = gm.derive(totals)
    assert f.flop_count == pytest.approx(200.0)  # 100 + 50 + 2·25
    assert f.figures["fp32_tflops"].value == pytest.approx(200.0 / 1e-6 / 1e12)
    peak = kernel(**{"sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained": (64.0, ""),
                     "sm__cycles_elapsed.avg.per_second": (2.0, "ghz")})
    assert gm.derive(peak).figures["peak_fp32_tflops"].value == pytest.approx(2 * 64 * 2e9 / 1e12)


def test_a_raw_export_without_a_units_row_keeps_its_first_launch() -> None:
    rows = [{"ID": "0", "Kernel Name": "first", "gpu__time_duration.sum": "2"},
            {"ID": "1", "Kernel Name": "second", "gpu__time_duration.sum": "3"}]
    assert [(k.launch_id, k.name, k.metrics["gpu__time_duration.sum"]) for k in gm.parse_ncu_raw(Path("x.csv"), rows)] == [
        (0, "first", gm.Metric(2.0, "")), (1, "second", gm.Metric(3.0, ""))]
    units = {"ID": "", "Kernel Name": "", "gpu__time_duration.sum": "nsecond"}
    assert [(k.launch_id, k.metrics["gpu__time_duration.sum"]) for k in gm.parse_ncu_raw(Path("x.csv"), [units, *rows])] == [
        (0, gm.Metric(2.0, "nsecond")), (1, gm.Metric(3.0, "nsecond"))]


def test_a_multi_kernel_figure_is_weighted_by_each_kernels_duration() -> None:
    def one(duration_ns: float, util: float) -> gm.KernelFigures:
        return gm.derive(kernel(**{"gpu__time_duration.sum": (duration_ns, "nsecond"),
                                   "sm__throughput.avg.pct_of_peak_sustained_elapsed": (util, "%")}))
    s = gm.summarize([one(3000.0, 80.0), one(1000.0, 40.0)])
    assert s is not None and s.figures["compute_util"].value == pytest.approx(70.0)  # (3·80 + 1·40) / 4, not 60
    assert s.figures["duration"].value == pytest.approx(4.0) and s.duration_ns == pytest.approx(4000.0)
