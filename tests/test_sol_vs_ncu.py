"""The parsing in benchmarks/sol_vs_ncu.py (run on the H200, not here): real ncu 2025.3.1 raw exports from an H200
(../fixtures/ncu in the shared folder) and a hand-written export with the counts the benchmark asks for."""

from __future__ import annotations

import importlib.util
from types import ModuleType

import pytest

from conftest import ROOT

FIXTURES = ROOT.parent / "shared" / "fixtures" / "ncu"


def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sol_vs_ncu", ROOT / "benchmarks" / "sol_vs_ncu.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="the shared ncu fixtures are not here")
def test_real_raw_exports_give_bytes_and_flops_from_rates() -> None:
    b = bench()
    kernels = b.parse_raw((FIXTURES / "p8_ref_raw.csv").read_text(encoding="utf-8"))
    assert len(kernels) == 8  # the reference's 8 kernels; the units row is not a kernel
    dram, flops, seconds = b.totals(kernels)
    assert seconds == pytest.approx(41_120e-9)  # 7,296 + 2,464 + ... ns, thousands separators and all
    assert dram == pytest.approx(3_538_432, rel=1e-6)  # dram__bytes.sum.per_second × duration, kernel by kernel
    assert flops == pytest.approx(34_201_541, rel=1e-6)  # (fadd + fmul + 2·ffma) per cycle × SM clock × duration
    (one,) = b.parse_raw((FIXTURES / "p8_new_raw.csv").read_text(encoding="utf-8"))
    assert one["gpu__time_duration.sum"] is not None and one["device__attribute_display_name"] is None  # text is no number


def test_counts_win_over_rates_and_units_are_scaled() -> None:
    b = bench()
    text = "\n".join([
        "==PROF== Connected to process 1",
        "the program's own output",
        '"ID","Process ID","Kernel Name","dram__bytes_read.sum","dram__bytes_write.sum","gpu__time_duration.sum",'
        + ",".join(f'"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum"' for op in ("fadd", "fmul", "ffma", "dadd", "dmul", "dfma")),
        '"","","","Kbyte","byte","usecond","inst","inst","inst","inst","inst","inst"',
        '"0","7","k(float*)","2","1,024","1.5","10","20","1,000","0","0","n/a"',
        '"1","7","k2","0","0","0.5","0","0","0","1","1","1"',
        "==PROF== Disconnected",
    ])
    kernels = b.parse_raw(text)
    assert len(kernels) == 2 and kernels[0]["dram__bytes_read.sum"] == 2000.0
    assert b.kernel_bytes(kernels[0]) == 3024.0 and b.kernel_flops(kernels[0]) == 10 + 20 + 2 * 1000  # FP64 n/a: none
    assert b.kernel_flops(kernels[1]) == 1 + 1 + 2 * 1
    assert b.totals(kernels) == (3024.0, 2034.0, pytest.approx(2e-6))
    assert b.parse_raw("no table here\n") == []
