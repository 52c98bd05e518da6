"""Timing statistics, the adaptive stop, the worker/validate contract and old-format results (CPU only)."""

from __future__ import annotations

import json
import math
import random
import statistics
from pathlib import Path

import pytest

from reporter.core import cache
from reporter.core.records import ValidationResult, measured
from reporter.core.schema import Basis, BasisStats, LaunchStats, StopReason, TimingFigures, TrialResult, Verdict, WorkerResult
from reporter.validate import manifest
from reporter.validate.stats import adaptive, ci_halfwidth_pct, median_ci, summarize


def test_median_ci_uses_the_order_statistics_of_the_binomial_interval() -> None:
    xs = [float(i) for i in range(1, 101)]  # value == rank
    random.Random(1).shuffle(xs)
    # n = 100: ranks 50 ± 1.96·√100/2 = 40.2 .. 59.8 -> the 40th and 61st order statistics
    assert median_ci(xs) == (40.0, 61.0)
    assert median_ci([3.0, 1.0, 2.0]) == (1.0, 3.0)  # too few samples: the whole range


def test_ci_halfwidth_is_relative_to_the_median() -> None:
    xs = [10.0] * 50 + [10.0 + i / 100 for i in range(50)]
    lo, hi = median_ci(xs)
    assert ci_halfwidth_pct(xs) == pytest.approx((hi - lo) / 2 / statistics.median(xs) * 100)
    assert ci_halfwidth_pct([1.0]) == math.inf


def test_summary_figures() -> None:
    xs = [1.0, 2.0, 3.0, 4.0, 100.0]
    s = summarize(xs, StopReason.CONVERGED)
    assert (s.median_ms, s.min_ms, s.max_ms, s.n) == (3.0, 1.0, 100.0, 5)
    assert s.iqr_ms == pytest.approx(2.0)  # inclusive quartiles 2 and 4: the outlier does not move them
    assert s.stop is StopReason.CONVERGED


class FakeClock:
    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_adaptive_stops_once_every_median_is_tight() -> None:
    rng = random.Random(0)
    batches = []

    def batch() -> list[list[float]]:
        batches.append(1)
        return [[1.0 + rng.random() * 0.01 for _ in range(10)], [2.0 + rng.random() * 0.02 for _ in range(10)]]

    samples, stop = adaptive(batch, 2, min_n=30, target_pct=1.0, cap_s=1e9, clock=FakeClock(0.001))
    assert stop is StopReason.CONVERGED
    assert len(samples[0]) == len(samples[1]) == 30  # tight at once, but never before min_n
    assert all(ci_halfwidth_pct(s) <= 1.0 for s in samples)


def test_adaptive_stops_at_the_cap_when_one_side_stays_noisy() -> None:
    rng = random.Random(0)

    def batch() -> list[list[float]]:
        return [[1.0] * 10, [rng.choice([1.0, 3.0]) for _ in range(10)]]  # bimodal: the median's CI stays wide

    clock = FakeClock(1.0)
    samples, stop = adaptive(batch, 2, min_n=10, target_pct=1.0, cap_s=5.0, clock=clock)
    assert stop is StopReason.TIME_CAP
    assert 10 <= len(samples[0]) <= 60


def test_device_events_split_into_calls_between_markers() -> None:
    from reporter.validate.attribution import Event
    from reporter.validate.callset import per_function_ms, split_segments

    def ev(name: str, us: float) -> Event:
        return Event(name, 7, 0.0, 0.0, us)
    m = ev("at::cuda::(anonymous namespace)::spin_kernel(long)", 1.1)
    flush = ev("vectorized_elementwise_kernel<FillFunctor>", 80.0)
    events = [flush, m, ev("gemm", 10.0), ev("Memcpy DtoD", 2.0), m, flush, m, ev("relu", 4.0), m]
    segments = split_segments(events, 2)
    assert segments == [[m, ev("gemm", 10.0), ev("Memcpy DtoD", 2.0), m], [m, ev("relu", 4.0), m]]
    assert per_function_ms(segments, [0, 1], 2) == [[0.012], [0.004]]
    with pytest.raises(RuntimeError, match="marker"):
        split_segments(events[:-1], 2)


def test_worker_result_is_what_validation_result_reads() -> None:
    # The worker's JSON comes back as the record it wrote, and becomes the stored result's fields.
    # (That ValidationResult has WorkerResult's fields at all: test_boundaries.py.)
    stats = BasisStats(median_ms=1.0, min_ms=0.9, max_ms=1.5, n=40, iqr_ms=0.1, ci_low_ms=0.98, ci_high_ms=1.02,
                       stop=StopReason.CONVERGED)
    out = WorkerResult(Verdict.CORRECT, "ok", trials=(TrialResult(0, 1, False, True, ("8x8",), math.inf, 0.0),),
                       kernel_timing=TimingFigures(device=stats, wall=stats, graph_note="why"),
                       reference_timing=TimingFigures(device=stats), kernel_launches=LaunchStats(3, 12.5),
                       phase_s={"load": 0.5})
    assert WorkerResult.from_json(out.to_json()) == out  # an infinite error too
    res = measured(WorkerResult.from_json(out.to_json()), kernel_sha256="k", reference_sha256="r", settings={})
    assert res.kernel_timing == out.kernel_timing and res.trials == out.trials and res.phase_s == {"load": 0.5}
    assert res.verdict is Verdict.CORRECT and res.speedup == pytest.approx(1.0)
    assert ValidationResult.model_validate_json(res.model_dump_json()) == res  # infinities survive too


FORMAT_3 = {
    "format": 3, "kernel_sha256": "k", "reference_sha256": "r", "settings": {"perf_trials": 100},
    "verdict": "correct", "trials": [{"index": 0, "seed": 1, "jittered": False, "input_shapes": [], "passed": True}],
    "kernel_timing": {"median_ms": 0.5, "mean_ms": 0.5, "std_ms": 0.01, "min_ms": 0.48, "max_ms": 0.57, "trials": 100},
    "reference_timing": {"median_ms": 0.2, "mean_ms": 0.2, "std_ms": 0.01, "min_ms": 0.19, "max_ms": 0.3, "trials": 100},
}


def test_format_3_results_read_as_wall_time_only(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    path.write_text(json.dumps(FORMAT_3), encoding="utf-8")
    res = cache.read_result(path)  # never a crash on an old cached result
    assert res.format == 3
    assert res.kernel_timing is not None and res.kernel_timing.wall == BasisStats(0.5, 0.48, 0.57, 100)
    assert res.kernel_timing.device is None and "format-3" in (res.kernel_timing.device_note or "")
    assert res.speedup is None  # no device time: no headline speedup from an old result
    assert res.speedup_on(Basis.WALL) == pytest.approx(0.4)


def test_a_graph_whose_replay_writes_nothing_is_not_capturable() -> None:
    # A kernel launched outside the capturing stream runs during capture, not in the graph: its output
    # holds the right values, but replays do nothing. Poisoning the output first shows it.
    torch = pytest.importorskip("torch")
    from reporter.validate.timing import replay_recomputes
    x = torch.arange(6, dtype=torch.float32)
    captured = (x * 2, torch.arange(3))  # an integer output is left as it is
    assert not replay_recomputes(lambda: None, captured, lambda: (x * 2, torch.arange(3)), lambda: None)

    def replay() -> None:
        captured[0].copy_(x * 2)
    assert replay_recomputes(replay, captured, lambda: (x * 2, torch.arange(3)), lambda: None)


def test_a_basis_far_below_the_device_time_is_not_used() -> None:
    from reporter.core.bases import checked_bases, doubtful_basis
    from reporter.core.schema import Basis, BasisStats, TimingFigures

    def stats(ms: float) -> BasisStats:
        return BasisStats(median_ms=ms, min_ms=ms, max_ms=ms, n=30)
    # KernelBench L1 P2's ReLU, launched on the legacy default stream: an empty graph replayed in 1.28 µs
    fig = TimingFigures(device=stats(0.0049), graph=stats(0.00128), wall=stats(0.0243))
    checked = checked_bases(fig)
    assert checked.graph is None and checked.device == fig.device and checked.wall == fig.wall
    assert checked.graph_note is not None and "1.28 µs, below the 4.9 µs" in checked.graph_note
    ok = TimingFigures(device=stats(0.0049), graph=stats(0.0049 * 0.8))  # at the limit: launch gaps only add time
    assert doubtful_basis(ok, Basis.GRAPH) is None and checked_bases(ok) is ok
    assert doubtful_basis(TimingFigures(device=stats(0.0049), graph=stats(0.0049 * 0.79)), Basis.GRAPH) is not None
    assert doubtful_basis(TimingFigures(graph=stats(0.001)), Basis.GRAPH) is None  # nothing to compare with
    # 1 ms of work on a side stream the call does not wait for (the H200): the graph and the eager events on the
    # caller's stream both missed it; neither becomes a speedup, and each note keeps the time it measured.
    side = checked_bases(TimingFigures(device=stats(1.060), graph=stats(0.0013), wall=stats(0.0081)))
    assert side.graph is None and side.wall is None and side.device is not None
    assert side.wall_note is not None and "8.1 µs, below the 1.06e+03 µs" in side.wall_note
    # A kernel that patches time.perf_counter and Event.elapsed_time at import: its wall time (and the
    # reference's, timed in the same process) is not shown, whatever it says.
    patched = checked_bases(TimingFigures(device=stats(0.5), wall=stats(0.6)), "line 3: torch.cuda.Event.elapsed_time = fake")
    assert patched.wall is None and patched.device is not None
    assert patched.wall_note is not None and "replaces a timer (line 3: torch.cuda.Event.elapsed_time = fake)" in patched.wall_note
    assert checked_bases(TimingFigures(device=stats(0.5), wall=stats(0.6))).wall is not None  # honest: kept


def test_cached_results_lose_a_graph_figure_that_cannot_be_the_calls_time(tmp_path: Path) -> None:
    # Stored results keep what was measured; the loader applies the rule, so no page or table shows the figure.
    from conftest import KERNELS, kernel_run
    from reporter.collect import collect
    from reporter.collect.validation import load_validation
    from reporter.core.records import Environment, ValidationSettings, sha256_text
    from reporter.core.schema import BasisStats, TimingFigures

    def stats(ms: float) -> BasisStats:
        return BasisStats(median_ms=ms, min_ms=ms, max_ms=ms, n=30)
    kernel = (KERNELS / "correct.py").read_text()
    kernel_run(tmp_path, "relu", kernel)
    run = collect(tmp_path).runs[0]
    ref = run.source.reference_source
    assert ref is not None
    empty_graph = TimingFigures(device=stats(0.0049), graph=stats(0.00128))
    real_graph = TimingFigures(device=stats(0.0038), graph=stats(0.0060))
    manifest.store(tmp_path, cache.content_key(kernel, ref), ValidationResult(
        kernel_sha256=sha256_text(kernel), reference_sha256=sha256_text(ref), settings=ValidationSettings(),
        environment=Environment(gpu="Test GPU"), verdict="correct", measured_at="2030-01-01T00:00:00Z",  # type: ignore[arg-type]
        kernel_timing=empty_graph, reference_timing=real_graph))
    loaded = load_validation(tmp_path, run)
    assert loaded is not None
    kt, rt = loaded.result.kernel_timing, loaded.result.reference_timing
    assert kt is not None and kt.graph is None and kt.graph_note and "leaves work out" in kt.graph_note
    assert kt.device == empty_graph.device
    assert rt == real_graph
