"""Speed-of-light figures at their edges (issue 32's blind round: sol-*, xg-* survivors): ranks restart in each
group of the cross-GPU board, a GPU with recorded and re-measured times is one GPU, and TF32's peak needs both
tolerances loose."""

from __future__ import annotations

from test_sol_boards import run

from reporter.aggregates.sol import cross_gpu
from reporter.core.sol import TF32_TOLERANCE, admits_tf32
from reporter.frames import from_records


def test_cross_gpu_ranks_restart_in_each_group() -> None:
    frame = from_records([run("a", 1, 0.9), run("b", 1, 0.5), run("c", 1, 0.7, benchmark="other"),
                          run("d", 1, 0.2, benchmark="other")])
    t = cross_gpu(frame)
    assert [(r["benchmark"], r["model"], int(r["rank"])) for r in t.to_dict("records")] == [
        ("kb", "a", 1), ("kb", "b", 2), ("other", "c", 1), ("other", "d", 2)]


def test_one_gpu_with_recorded_and_re_measured_times_counts_once() -> None:
    frame = from_records([run("a", 1, 0.9, gpu="L40S", source="recorded"), run("a", 2, 0.4, gpu="L40S")])
    (row,) = cross_gpu(frame).to_dict("records")
    assert row["gpus"] == "L40S re-measured ×1 · L40S recorded ×1" and row["gpu_count"] == 1


def test_tf32_s_peak_needs_both_tolerances_at_least_its_own() -> None:
    loose, tight = TF32_TOLERANCE, TF32_TOLERANCE / 100
    assert admits_tf32(loose, loose) and not admits_tf32(loose, tight) and not admits_tf32(tight, loose)
    assert not admits_tf32(None, loose)
