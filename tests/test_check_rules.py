"""Every flag rule and tolerance in checks.py at its boundary: just inside gets no flag, just outside does.

test_checks.py shows the rules on the seed traces; these pin each threshold on hand-made values, so that
a widened tolerance or a flipped comparison fails here.
"""

from __future__ import annotations

from typing import Any

import pytest

from reporter.collect.ncu import Figure
from reporter.core.checks import (
    AGREEMENT_TOLERANCE,
    Flag,
    _pct_flags,
    bottleneck_label,
    check_measured,
    check_trace,
    compare_count,
    compare_ratio,
    compare_runtime,
    impossible_values,
    usable,
    verdict_flip,
    within_tolerance,
)
from reporter.core.records import Trace
from reporter.core.units import UNIT_LABEL


def trace(metrics: dict[str, Any] | None = None, turns: list[dict[str, Any]] | None = None, **run: Any) -> Trace:
    return Trace.model_validate({"schema_version": 2, "run": run, "turns": turns or [], "metrics": metrics or {}})


def flags(metrics: dict[str, Any] | None = None, turns: list[dict[str, Any]] | None = None, **run: Any) -> dict[str, Flag]:
    found = check_trace(trace(metrics, turns, **run))
    assert len({f.field for f in found}) == len(found)  # one flag per field
    return {f.field: f for f in found}


# bottleneck_label: NVIDIA's SOLBottleneck rule ---------------------------------------------------------

@pytest.mark.parametrize("sm, mem, label", [
    (None, 50.0, None), (50.0, None, None),
    (80.0, 10.0, "compute-bound (high throughput)"), (80.0, 80.0, "compute-bound (high throughput)"),
    (10.0, 80.0, "memory-bound (high throughput)"), (79.9, 80.0, "memory-bound (high throughput)"),
    (59.9, 59.9, "latency-bound"), (0.0, 0.0, "latency-bound"),
    (60.0, 40.0, "compute-bound"), (40.0, 60.0, "memory-bound"), (70.0, 60.0, "compute-bound"),
    (60.0, 70.0, "memory-bound"), (79.9, 69.9, "compute-bound"),
    (69.9, 60.0, "balanced"), (60.0, 69.9, "balanced"), (65.0, 65.0, "balanced"), (60.0, 59.0, "balanced"),
])
def test_bottleneck_label(sm: float | None, mem: float | None, label: str | None) -> None:
    assert bottleneck_label(sm, mem) == label


# usable and impossible values ----------------------------------------------------------------------------

def test_usable_means_present_finite_and_not_negative() -> None:
    assert usable() and usable(0, 0.0, 3, 2.5)
    for bad in (None, float("nan"), float("inf"), -1e-9, -1):
        assert not usable(bad) and not usable(1.0, bad)


def test_impossible_values_name_the_field_and_skip_indexes_booleans_and_text() -> None:
    t = trace({"nsight": {"warp_stalls_pct": {"barrier": -1.0, "wait": 5.0}, "bottleneck": "memory"}},
              [{"index": 0, "llm_s": 1.0}, {"index": 1, "tool_s": float("-inf"), "final": True}],
              wall_clock_s=0.0, tokens_total=0, truncated=False)
    found = {f.field: f.message for f in impossible_values(t)}
    assert set(found) == {"nsight.warp_stalls_pct.barrier", "turns[1].tool_s"}
    assert found["nsight.warp_stalls_pct.barrier"] == "-1 is negative: no count, time, size, rate or ratio can be."
    assert found["turns[1].tool_s"].startswith("-Infinity was recorded: no measured value is infinite")
    assert impossible_values(trace(tokens_total=-2))[0].message.startswith("-2 is negative")
    assert impossible_values(trace(wall_clock_s=float("inf")))[0].message.startswith("Infinity was recorded")


def test_an_impossible_value_gets_only_that_flag() -> None:
    # -150 is also outside 0-100; the NaN/negative flag says it all
    found = flags({"nsight": {"l2_hit_pct": -150.0, "l1_hit_pct": 150.0}})
    assert found["nsight.l2_hit_pct"].message.startswith("-150 is negative: no count")
    assert found["nsight.l1_hit_pct"].message.startswith("150% is outside 0–100")


# run-level flags ---------------------------------------------------------------------------------------------

def test_zero_tokens_beside_more_than_1000_characters() -> None:
    long = [{"index": 0, "chars": 1001}]
    assert flags(turns=long, tokens_total=0)["run.tokens_total"].message == (
        "0 tokens recorded beside 1,001 characters of model output: tokens were not counted.")
    assert "run.tokens_total" not in flags(turns=[{"index": 0, "chars": 1000}], tokens_total=0)
    assert "run.tokens_total" not in flags(turns=long, tokens_total=5)
    assert "run.tokens_total" not in flags(turns=long)  # not recorded at all is not "zero"
    # without a chars count, the reasoning text is measured; chars from several turns add up
    assert "run.tokens_total" in flags(turns=[{"index": 0, "reasoning": "x" * 1001}], tokens_total=0)
    assert "run.tokens_total" in flags(turns=[{"index": 0, "chars": 600}, {"index": 1, "chars": 401}], tokens_total=0)
    assert "run.tokens_total" not in flags(turns=[{"index": 0, "chars": 10, "reasoning": "x" * 2000}], tokens_total=0)


def test_turn_and_tool_call_counts_must_match_the_trace() -> None:
    call = {"tool": "compile_kernel"}
    turns = [{"index": 0, "calls": [call, call]}, {"index": 1, "calls": [call]}]
    found = flags(turns=turns, turns_used=3, tool_calls=2)
    assert found["run.turns_used"] == Flag("run.turns_used", "warn", "3 turns recorded, but the trace holds 2.")
    assert found["run.tool_calls"] == Flag("run.tool_calls", "warn", "2 tool calls recorded, but the trace holds 3.")
    assert flags(turns=turns, turns_used=2, tool_calls=3) == {}
    assert flags(turns_used=3, tool_calls=2) == {}  # no turns kept: nothing to count against


# timing flags ------------------------------------------------------------------------------------------------

def timing(**values: Any) -> dict[str, Any]:
    return {"timing": {"unit": "ms", **values}}


@pytest.mark.parametrize("runtime, ref, speedup, flagged", [
    (0.05, 0.02, 0.4, False),  # exact
    (0.05, 0.02, 2.99, True),
    (0.02, 0.05, 2.99, False),  # 0.055 / 0.015 = 3.67: rounding explains up to 3.7x
    (0.02, 0.05, 3.75, True), (0.02, 0.05, 1.78, True),
    (0.02, 0.05, 1.82, False),  # 0.045 / 0.025 = 1.8, with 1% slack
    (0.02, 0.05, 3.7, False),
    (0.005, 0.05, 1000.0, False),  # a runtime at the rounding step: no ratio can be checked
    (2.0, 4.0, 2.0, False), (2.0, 4.0, 2.1, True), (2.0, 4.0, 1.9, True), (2.0, 0.0, 5.0, False),
])
def test_speedup_must_match_ref_over_runtime_up_to_rounding(runtime: float, ref: float, speedup: float,
                                                             flagged: bool) -> None:
    found = flags(timing(runtime=runtime, ref_runtime=ref, speedup=speedup))
    assert ("timing.speedup" in found) is flagged
    if flagged:
        assert found["timing.speedup"].message == (
            f"speedup {speedup:g}x does not match ref/runtime = {ref / runtime:.3g}x.")


def test_speedup_rule_in_recorded_units() -> None:
    # the rounding window is 0.005 in the recorded unit, whatever it is
    assert "timing.speedup" not in flags(timing(runtime=0.02, ref_runtime=0.05, speedup=3.6))
    assert "timing.speedup" in flags(timing(runtime=20.0, ref_runtime=50.0, speedup=3.6, unit="us"))


@pytest.mark.parametrize("unit, value, flagged", [
    ("us", 1.99, True), ("us", 2.0, False), ("ns", 1999.0, True), ("ns", 2000.0, False),
    ("ms", 0.00199, True), ("ms", 0.002, False), ("s", 1e-6, True), ("s", 2e-6, False),
])
def test_runtimes_below_one_kernel_launch_are_flagged(unit: str, value: float, flagged: bool) -> None:
    found = flags({"timing": {"unit": unit, "runtime": value, "ref_runtime": value}})
    assert ("timing.runtime" in found, "timing.ref_runtime" in found) == (flagged, flagged)
    if flagged:
        assert found["timing.ref_runtime"].severity == "error"
        label = UNIT_LABEL[unit]
        assert found["timing.ref_runtime"].message == (
            f"{value:g} {label} is below the ~2 µs that even one kernel launch takes. The value is likely in ms, "
            f"not {label}: KernelBench stores ms under a field commented `# in us`.")


def test_a_runtime_contradicted_by_the_total_cuda_time() -> None:
    def cuda(runtime_us: float, total_us: float) -> dict[str, Flag]:
        return flags({"timing": {"unit": "us", "runtime": runtime_us, "ref_runtime": runtime_us},
                      "launches": {"total_cuda_time_us": total_us}})
    found = cuda(10.0, 1001.0)
    assert found["timing.runtime"].message.startswith(
        "the recorded total CUDA time is 1001 µs, 100× longer. The value is likely in ms, not μs")
    assert "timing.ref_runtime" not in found  # the total is the kernel's, not the reference's
    assert cuda(10.0, 1000.0) == {}
    assert flags({"timing": {"unit": "us", "runtime": 10.0}, "launches": {"total_cuda_time_us": 0.0}}) == {}
    both = flags({"timing": {"unit": "us", "runtime": 1.0}, "launches": {"total_cuda_time_us": 1000.0}})
    assert "below the ~2 µs" in both["timing.runtime"].message and "; the recorded total CUDA time is 1000 µs, 1,000×" in (
        both["timing.runtime"].message)


# memory and launch ratios ----------------------------------------------------------------------------------

@pytest.mark.parametrize("ratio, flagged", [(0.5, False), (0.515, False), (0.485, False), (0.521, True), (0.479, True)])
def test_memory_ratio_must_be_kernel_over_ref(ratio: float, flagged: bool) -> None:
    found = flags({"memory": {"kernel_peak_mb": 50.0, "ref_peak_mb": 100.0, "ratio": ratio}})
    assert ("memory.ratio" in found) is flagged
    if flagged:
        assert found["memory.ratio"] == Flag("memory.ratio", "warn", f"ratio {ratio:g} does not match kernel/ref = 0.5.")


def test_memory_ratio_needs_both_peaks() -> None:
    assert flags({"memory": {"kernel_peak_mb": 0.0, "ref_peak_mb": 100.0, "ratio": 3.0}}) == {}
    assert flags({"memory": {"kernel_peak_mb": 50.0, "ref_peak_mb": 0.0, "ratio": 3.0}}) == {}
    assert flags({"memory": {"kernel_peak_mb": 50.0, "ratio": 3.0}}) == {}


@pytest.mark.parametrize("fusion, flagged", [(4.0, False), (4.07, False), (3.93, False), (4.09, True), (3.91, True)])
def test_fusion_ratio_must_be_ref_over_kernel_launches(fusion: float, flagged: bool) -> None:
    found = flags({"launches": {"kernel_launches": 2, "ref_launches": 8, "fusion_ratio": fusion}})
    assert ("launches.fusion_ratio" in found) is flagged
    if flagged:
        assert found["launches.fusion_ratio"] == Flag(
            "launches.fusion_ratio", "warn", f"fusion ratio {fusion:g} does not match ref/kernel launches = 4.")


def test_fusion_ratio_needs_both_counts() -> None:
    assert flags({"launches": {"kernel_launches": 0, "ref_launches": 8, "fusion_ratio": 3.0}}) == {}
    assert flags({"launches": {"kernel_launches": 2, "ref_launches": 0, "fusion_ratio": 3.0}}) == {}


# Nsight Compute values -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["dram_util_pct", "compute_util_pct", "dominant_pipe_pct", "fp32_util_pct",
                                  "occupancy_pct", "l1_hit_pct", "l2_hit_pct"])
def test_every_percentage_must_lie_in_0_to_100(name: str) -> None:
    assert flags({"nsight": {name: 100.0}}) == {} and flags({"nsight": {name: 0.0}}) == {}
    found = flags({"nsight": {name: 100.1}})
    assert found == {f"nsight.{name}": Flag(f"nsight.{name}", "error", found[f"nsight.{name}"].message)}
    assert found[f"nsight.{name}"].message == (
        "100.1% is outside 0–100. ncu's .pct metrics are already percentages; multiplying one by 100 again gives "
        "this (the value would be 1.001%), or a ratio was shown as a percent.")


def test_a_negative_percentage_is_an_error_of_its_own() -> None:
    # check_trace reports a negative number once, as impossible; the percentage rule says why on its own too
    assert _pct_flags("nsight", "l1_hit_pct", -0.5) == [
        Flag("nsight.l1_hit_pct", "error", "-0.5% is negative: no percentage can be.")]
    assert _pct_flags("nsight", "l1_hit_pct", None) == []


def test_sol_score_lies_in_0_to_1() -> None:
    assert flags({"nsight": {"sol_score": 1.0}}) == {} and flags({"nsight": {"sol_score": 0.0}}) == {}
    assert flags({"nsight": {"sol_score": 1.01}}) == {
        "nsight.sol_score": Flag("nsight.sol_score", "error", "SOL score 1.01 is outside 0–1.")}


def test_warp_stall_shares() -> None:
    one = flags({"nsight": {"warp_stalls_pct": {"long_scoreboard": 100.01}}})
    flag = one["nsight.warp_stalls_pct.long_scoreboard"]
    assert flag.severity == "error" and flag.message == (
        "100.01% is impossible. ncu's smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio is "
        "cycles per issued instruction (1.0001 here), not a share; shown ×100 as a percent. A true share divides by "
        "the sum over all stall reasons.")
    assert flags({"nsight": {"warp_stalls_pct": {"long_scoreboard": 100.0}}}) == {}
    assert flags({"nsight": {"warp_stalls_pct": {"a": 50.0, "b": 50.5}}}) == {}
    total = flags({"nsight": {"warp_stalls_pct": {"a": 50.0, "b": 50.6}}})
    assert total == {"nsight.warp_stalls_pct": Flag("nsight.warp_stalls_pct", "error",
                                                    "the top stall shares add up to 100.6%, more than 100%.")}


def test_a_recorded_bottleneck_that_contradicts_the_utilisation() -> None:
    def bottleneck(name: str, sm: float = 20.0, mem: float = 90.0) -> dict[str, Flag]:
        return flags({"nsight": {"bottleneck": name, "compute_util_pct": sm, "dram_util_pct": mem}})
    assert bottleneck("memory-bound") == {} and bottleneck("memory-bound (high throughput)") == {}
    found = bottleneck("compute-bound")
    assert found == {"nsight.bottleneck": Flag(
        "nsight.bottleneck", "warn", "'compute-bound' contradicts the recorded utilisation (SM 20%, DRAM 90%): "
                                     "NVIDIA's SOLBottleneck rule calls this memory-bound (high throughput).")}
    assert "nsight.bottleneck" in bottleneck("latency-bound (high throughput)")
    assert "nsight.bottleneck" in bottleneck("balanced", 30.0, 30.0)
    assert flags({"nsight": {"bottleneck": "compute-bound", "compute_util_pct": 20.0}}) == {}  # no DRAM figure


@pytest.mark.parametrize("ridge, flagged", [(10.0, False), (10.5, False), (9.5, False), (10.51, True), (9.49, True)])
def test_ridge_point_is_peak_flops_over_peak_bandwidth(ridge: float, flagged: bool) -> None:
    found = flags({"nsight": {"peak_fp32_tflops": 20.0, "peak_bw_gbps": 2000.0, "ridge_point": ridge}})
    assert ("nsight.ridge_point" in found) is flagged
    if flagged:
        assert found["nsight.ridge_point"] == Flag("nsight.ridge_point", "warn",
                                                   f"ridge point {ridge:g} ≠ peak FLOP/s ÷ peak BW = 10.")


def test_ridge_point_needs_the_peaks() -> None:
    assert flags({"nsight": {"peak_fp32_tflops": 20.0, "peak_bw_gbps": 0.0, "ridge_point": 3.0}}) == {}
    assert flags({"nsight": {"peak_fp32_tflops": 20.0, "ridge_point": 3.0}}) == {}


# recorded vs reproduced ------------------------------------------------------------------------------------

def test_the_agreement_tolerance_is_25_percent_either_way() -> None:
    assert AGREEMENT_TOLERANCE == 0.25
    assert within_tolerance(1.25, 1.0) and within_tolerance(0.75, 1.0) and within_tolerance(1.0, 1.0)
    assert not within_tolerance(1.2501, 1.0) and not within_tolerance(0.7499, 1.0)
    assert not within_tolerance(1.0, 0.0) and not within_tolerance(0.0, 0.0)


def test_compare_ratio() -> None:
    assert compare_ratio(2.5, 2.0) == (True, "")
    assert compare_ratio(2.6, 2.0) == (False, "off by +30% (more than ±25%)")
    assert compare_ratio(1.0, 2.0) == (False, "off by -50% (more than ±25%)")
    assert compare_ratio(None, 2.0) == (None, "") and compare_ratio(2.0, None) == (None, "")
    assert compare_ratio(2.0, 0.0) == (None, "")


def test_compare_count_is_exact() -> None:
    assert compare_count(3, 3, "torch.profiler") == (True, "")
    assert compare_count(3, 4, "torch.profiler") == (False, "recorded 3, counted 4 (torch.profiler)")
    assert compare_count(None, 4, "x") == (None, "") and compare_count(3, None, "x") == (None, "")
    assert compare_count(0, 0, "x") == (True, "")


@pytest.mark.parametrize("recorded, unit, measured, agrees", [
    (0.5, "ms", 0.4, True), (500.0, "us", 0.4, True), (500000.0, "ns", 0.4, True), (0.0005, "s", 0.625, True),
    (0.5, "ms", 0.39, False), (500.0, "us", 0.67, False),
])
def test_runtime_agreement_across_units(recorded: float, unit: str, measured: float, agrees: bool) -> None:
    assert compare_runtime(recorded, unit, measured)[0] is agrees


def test_runtime_disagreement_messages() -> None:
    assert compare_runtime(1.3, "ms", 1.0) == (False, "off by +30% (more than ±25%)")
    assert compare_runtime(0.7, "ms", 1.0) == (False, "off by -30% (more than ±25%)")
    assert compare_runtime(1.25, "ms", 1.0) == (True, "")
    assert compare_runtime(5.0, "ms", 1.0) == (False, "off by +400% (more than ±25%)")  # not ~1000x: no mix-up


def test_unit_mix_ups_are_named_in_both_directions() -> None:
    # KernelBench's ms stored under "us": 500 "us" measured as 0.6 ms is 1000x too small
    assert compare_runtime(500.0, "ms", 0.6) == (
        False, "unit mix-up: ~1,000× off. Read as μs instead of ms, 500 μs is -17% off what we measured")
    assert compare_runtime(0.5, "us", 0.6) == (
        False, "unit mix-up: ~1,000× off. Read as ms instead of μs, 0.5 ms is -17% off what we measured")
    assert compare_runtime(500.0, "ns", 0.6)[1].startswith("unit mix-up: ~1,000× off. Read as μs instead of ns")
    assert compare_runtime(900.0, "ms", 0.5)[1].startswith("unit mix-up")  # 1.8x after rescaling: within the band
    assert compare_runtime(1000.0, "ms", 2.0)[1].startswith("unit mix-up")  # exactly half
    assert compare_runtime(1000.0, "ms", 0.5)[1].startswith("unit mix-up")  # exactly double


def test_far_off_values_that_rescaling_does_not_explain() -> None:
    ok, why = compare_runtime(1100.0, "ms", 0.5)  # 2200x: one unit step leaves it 2.2x off
    assert ok is False and why == ("2,200× off: looks like a unit mix-up, but even read as μs it is +120% off "
                                   "what we measured")
    ok, why = compare_runtime(0.0001, "ms", 1.0)  # 10000x too small
    assert why == "10,000× off: looks like a unit mix-up, but even read as s it is -90% off what we measured"
    assert compare_runtime(0.5, "ms", 40.0)[1] == "off by -99% (more than ±25%)"  # 80x: not called a mix-up
    assert compare_runtime(101.0, "ms", 1.0)[1].startswith("101× off: looks like a unit mix-up")


def test_no_unit_beyond_the_ends_of_the_ladder() -> None:
    # seconds have no larger unit, nanoseconds no smaller one: there a ~1000x error cannot be a mix-up
    assert compare_runtime(0.0006, "s", 600.0) == (False, "off by -100% (more than ±25%)")
    assert compare_runtime(600000.0, "ns", 0.0006) == (False, "off by +99900% (more than ±25%)")
    assert compare_runtime(0.6, "s", 0.6)[1].startswith("unit mix-up: ~1,000× off. Read as ms instead of s")
    assert compare_runtime(600.0, "s", 0.6)[1] == ("1,000,000× off: looks like a unit mix-up, but even read as ms "
                                                   "it is +99900% off what we measured")


def test_nothing_to_compare() -> None:
    assert compare_runtime(None, "ms", 1.0) == (None, "")
    assert compare_runtime(1.0, "ms", None) == (None, "")
    assert compare_runtime(1.0, "ms", 0.0) == (None, "")
    assert compare_runtime(1.0, "ms", -1.0) == (None, "")


def test_verdict_flip() -> None:
    assert verdict_flip(None, "correct") is None
    assert verdict_flip("correct", "correct") is None
    assert verdict_flip("correct", "incorrect") == "verdict flip: recorded correct, reproduced incorrect"


def test_measured_percentages_outside_0_to_100() -> None:
    figures = {"a": Figure(100.0, "%", ""), "b": Figure(0.0, "%", ""), "c": Figure(100.38, "%", ""),
               "d": Figure(-0.5, "%", ""), "e": Figure(250.0, "GB/s", ""), "f": object()}
    found = check_measured(figures)
    assert set(found) == {"c", "d"}
    assert found["c"] == Flag("c", "warn", "ncu itself reported 100.38%: its counters come from separate replay "
                                           "passes and can overshoot; read as about 100%.")
    assert found["d"] == Flag("d", "warn", "ncu reported -0.50%, below 0.")


# A derived figure is not checked against an impossible input: that input has its own flag already. -------

@pytest.mark.parametrize("metrics, derived", [
    ({"memory": {"kernel_peak_mb": -50.0, "ref_peak_mb": 100.0, "ratio": 0.5}}, "memory.ratio"),
    ({"memory": {"kernel_peak_mb": 50.0, "ref_peak_mb": -100.0, "ratio": 0.5}}, "memory.ratio"),
    ({"memory": {"kernel_peak_mb": 50.0, "ref_peak_mb": 100.0, "ratio": -0.5}}, "memory.ratio"),
    ({"launches": {"kernel_launches": -2, "ref_launches": 8, "fusion_ratio": 4.0}}, "launches.fusion_ratio"),
    ({"launches": {"kernel_launches": 2, "ref_launches": -8, "fusion_ratio": 4.0}}, "launches.fusion_ratio"),
    ({"launches": {"kernel_launches": 2, "ref_launches": 8, "fusion_ratio": float("inf")}}, "launches.fusion_ratio"),
    ({"nsight": {"peak_fp32_tflops": -20.0, "peak_bw_gbps": 2000.0, "ridge_point": 10.0}}, "nsight.ridge_point"),
    ({"nsight": {"peak_fp32_tflops": 20.0, "peak_bw_gbps": -2000.0, "ridge_point": 10.0}}, "nsight.ridge_point"),
    ({"nsight": {"peak_fp32_tflops": 20.0, "peak_bw_gbps": 2000.0, "ridge_point": -10.0}}, "nsight.ridge_point"),
    ({"timing": {"unit": "ms", "runtime": float("inf"), "ref_runtime": 4.0, "speedup": 2.0}}, "timing.speedup"),
    ({"timing": {"unit": "ms", "runtime": 2.0, "ref_runtime": -4.0, "speedup": 2.0}}, "timing.speedup"),
    ({"timing": {"unit": "ms", "runtime": 2.0, "ref_runtime": 4.0, "speedup": float("inf")}}, "timing.speedup"),
])
def test_no_derived_flag_from_an_impossible_input(metrics: dict[str, Any], derived: str) -> None:
    found = flags(metrics)
    assert derived not in found or found[derived].severity == "error"  # no "does not match" warning
    (flag,) = found.values()  # the impossible value's own flag only
    assert flag.severity == "error" and ("negative" in flag.message or "Infinity" in flag.message)
    assert "does not match" not in flag.message and "≠" not in flag.message


def test_each_runtime_is_checked_on_its_own() -> None:
    # a missing runtime does not stop the reference's check, and a zero runtime divides nothing
    found = flags({"timing": {"unit": "us", "ref_runtime": 1.0}})
    assert set(found) == {"timing.ref_runtime"}
    found = flags({"timing": {"unit": "us", "runtime": 0.0}, "launches": {"total_cuda_time_us": 100.0}})
    assert set(found) == {"timing.runtime"} and "total CUDA time" not in found["timing.runtime"].message


def test_whole_messages_of_value_flags() -> None:
    assert flags(wall_clock_s=float("-inf")) == {"run.wall_clock_s": Flag(
        "run.wall_clock_s", "error", "-Infinity was recorded: no measured value is infinite (an overflow or a "
                                     "division by zero upstream).")}
    assert flags(turns=[{"index": 0, "chars": 1001}], tokens_total=0) == {"run.tokens_total": Flag(
        "run.tokens_total", "warn", "0 tokens recorded beside 1,001 characters of model output: tokens were not counted.")}
    assert flags(timing(runtime=2.0, ref_runtime=4.0, speedup=3.0)) == {"timing.speedup": Flag(
        "timing.speedup", "warn", "speedup 3x does not match ref/runtime = 2x.")}


def test_tolerance_edges_are_inclusive() -> None:
    # values that land exactly on an edge in floating point: the edge itself is still "explained"
    assert flags({"memory": {"kernel_peak_mb": 1.0, "ref_peak_mb": 50.0, "ratio": 0.04}}) == {}  # |0.02 - 0.04| = 0.02
    assert flags({"launches": {"kernel_launches": 1, "ref_launches": 25, "fusion_ratio": 25.5}}) == {}  # 2% of 25
    # runtime 0.01 and ref 0.01, each rounded to 2 decimals: any speedup in [0.333 * 0.99, 3 * 1.01] is explained
    assert flags(timing(runtime=0.01, ref_runtime=0.01, speedup=0.33)) == {}
    assert flags(timing(runtime=0.01, ref_runtime=0.01, speedup=3.0300000000000002)) == {}
    assert set(flags(timing(runtime=0.01, ref_runtime=0.01, speedup=0.3299))) == {"timing.speedup"}
    assert set(flags(timing(runtime=0.01, ref_runtime=0.01, speedup=3.0301))) == {"timing.speedup"}


def test_unit_mix_up_boundaries() -> None:
    # exactly 100x (or 1/100) off is an ordinary disagreement, not yet "looks like a unit mix-up"
    assert compare_runtime(100.0, "ms", 1.0) == (False, "off by +9900% (more than ±25%)")
    assert compare_runtime(0.01, "ms", 1.0) == (False, "off by -99% (more than ±25%)")
    # nanoseconds are a unit too: a value recorded as μs can be read as ns
    assert compare_runtime(500.0, "us", 0.0006) == (
        False, "unit mix-up: ~1,000× off. Read as ns instead of μs, 500 ns is -17% off what we measured")
    assert compare_runtime(5000.0, "us", 0.0006) == (
        False, "8,333× off: looks like a unit mix-up, but even read as ns it is +733% off what we measured")
    assert compare_runtime(1000.0, "ms", 0.5) == (
        False, "unit mix-up: ~1,000× off. Read as μs instead of ms, 1000 μs is +100% off what we measured")
    assert compare_ratio(4.0, 2.0) == (False, "off by +100% (more than ±25%)")


def test_a_turn_number_is_not_a_measurement() -> None:
    # impossible-value checks cover recorded measurements; `index` only orders the turns
    assert impossible_values(trace(turns=[{"index": -1, "llm_s": 2.0}])) == []


@pytest.mark.parametrize("ref_gpu, kernel_gpu, flagged", [
    ("NVIDIA L40S", "NVIDIA H200", True), ("NVIDIA H100 PCIe", "NVIDIA H100 NVL", True),
    ("NVIDIA H200", "NVIDIA H200", False), ("NVIDIA H100 80GB HBM3", "H100", False),
    (None, "NVIDIA H200", False), ("NVIDIA H200", None, False), (" ", "NVIDIA H200", False),
])
def test_a_baseline_from_another_gpu_is_flagged_only_when_both_are_known(ref_gpu: str | None, kernel_gpu: str | None,
                                                                         flagged: bool) -> None:
    found = flags({"timing": {"unit": "ms", "runtime": 1.0, "ref_runtime": 2.0, "speedup": 2.0, "ref_gpu": ref_gpu}},
                  recorded_gpu=kernel_gpu)
    assert ("timing.ref_gpu" in found) is flagged
    if flagged:
        assert found["timing.ref_gpu"] == Flag("timing.ref_gpu", "warn", (
            f"baseline from another GPU: the reference was timed on {ref_gpu}, the kernel on {kernel_gpu}; "
            "the recorded speedup compares two machines."))


@pytest.mark.parametrize("correct, suspect, reported", [
    (True, False, True), (True, None, True), (True, True, False), (None, False, False), (False, False, False),
    (None, None, False),
])
def test_only_a_correct_kernel_that_is_not_suspect_has_a_speedup(correct: bool | None, suspect: bool | None,
                                                                 reported: bool) -> None:
    from reporter.core.checks import speedup_reported
    assert speedup_reported(correct, suspect) is reported
