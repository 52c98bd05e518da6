"""The profiled call set: device time, launch counts, attribution and peak memory from one profiler session
(pure functions of profiler events, on CPU), and the spin that makes the stream rules independent of luck."""

from __future__ import annotations

import pytest

from reporter.core import suspects
from reporter.core.schema import CheckSettings, LaunchGroup
from reporter.validate.attribution import MARKER, Event, attribute
from reporter.validate.callset import SPIN_MAX_US, SPIN_MIN_US, call_set, launch_stats, per_function_ms, spin_us, split_segments

SPIN = f"void at::cuda::(anonymous namespace)::{MARKER}(long)"
CALLER, SIDE = 7, 13


def _call(work: list[Event], spin_end: float = 2000.0, marker_at: float = 2100.0) -> list[Event]:
    """One profiled call as CUPTI reports it: the spin before it, its work, the marker after it."""
    return [Event(SPIN, CALLER, 0.0, spin_end, spin_end), *work, Event(SPIN, CALLER, marker_at, marker_at + 0.5, 0.5)]


def test_work_on_a_side_stream_that_waits_for_nothing_is_unordered_however_short() -> None:
    # The H200 failure: a 40 µs matmul on a pool stream, launched while the spin still runs, ends long before
    # the marker; the old rule (still running at the marker) missed it. It started before the spin ended.
    att = attribute(_call([Event("matmul_tiled_kernel(float const*, float const*, float*, int, int, int)", SIDE, 30.0, 70.0, 40.0)]),
                    {"matmul_tiled_kernel"}, set())
    assert (att.call_stream, att.streams, att.unwaited_streams, att.unordered_streams) == (CALLER, (SIDE,), (), (SIDE,))
    (flag,) = suspects.attribution_flags(att)
    assert flag.field == "attribution.streams"
    assert flag.message.startswith("work runs on stream(s) 13, which start(s) before the caller's earlier work has finished")


def test_a_side_stream_that_waits_for_the_caller_but_is_not_waited_for_is_unwaited() -> None:
    # It waited for the spin, so it starts as the spin ends, as the marker does: the marker overtakes it.
    att = attribute(_call([Event("k(float*)", SIDE, 2000.8, 2040.0, 39.2)], marker_at=2000.6), {"k"}, set())
    assert (att.unwaited_streams, att.unordered_streams) == ((SIDE,), ())
    (flag,) = suspects.attribution_flags(att)
    assert flag.message.startswith("work runs on stream(s) 13, which the call does not wait for")


def test_a_synchronised_side_stream_is_not_flagged() -> None:
    # synced_side_stream: waits for the caller (starts after the spin), and the caller waits for it (marker after).
    att = attribute(_call([Event("relu_kernel(float const*, float*, long)", SIDE, 2001.0, 2010.0, 9.0)], marker_at=2012.0),
                    {"relu_kernel"}, set())
    assert (att.streams, att.unwaited_streams, att.unordered_streams) == ((SIDE,), (), ())
    assert suspects.attribution_flags(att) == []
    # work on the caller's own stream is ordered whatever its times
    same = attribute(_call([Event("relu_kernel(float*)", CALLER, 2001.0, 2010.0, 9.0)]), {"relu_kernel"}, set())
    assert same.unordered_streams == () and suspects.attribution_flags(same) == []


def test_one_marker_judges_no_stream_unordered() -> None:
    # Results of the older single-marker profile: no spin before the call, so nothing is judged early.
    events = [Event("k(float*)", SIDE, 0.0, 10.0, 10.0), Event(SPIN, CALLER, 20.0, 21.0, 1.0)]
    assert attribute(events, {"k"}, set()).unordered_streams == ()


def test_the_spin_outlasts_the_host_side_of_the_call() -> None:
    assert spin_us(0.0) == SPIN_MIN_US
    assert spin_us(0.001) == pytest.approx(4000.0)  # a 1 ms host call: four times that
    assert spin_us(10.0) == SPIN_MAX_US


def test_one_session_gives_device_time_launches_and_attribution() -> None:
    # Round 0 is the call set (kernel then reference), round 1 a plain device-time round (reference first).
    def ev(name: str, us: float, stream: int = CALLER, start: float = 0.0) -> Event:
        return Event(name, stream, start, start + us, us)
    flush, m = ev("at::native::FillFunctor", 80.0), ev(SPIN, 0.5)
    mine, gemm, copy = ev("scale_relu_kernel(float*, long)", 3.0), ev("sm90_xmma_gemm_f32f32_cublas", 9.0), ev("Memcpy DtoD (Device -> Device)", 1.0)
    relu = ev("void at::native::vectorized_elementwise_kernel<4, at::native::ReluFunctor>(int)", 2.0)
    events = [flush, m, gemm, mine, copy, m, flush, m, gemm, relu, m,  # round 0: kernel, reference
              flush, m, gemm, relu, m, flush, m, gemm, mine, copy, m]  # round 1: reference, kernel
    calls = [0, 1, 1, 0]
    segments = split_segments(events, len(calls))
    assert per_function_ms(segments, calls, 2) == [[0.013, 0.013], [0.011, 0.011]]
    got = call_set(segments[:2], calls[:2], [({"scale_relu_kernel"}, set()), None], [1024, 512])
    kernel, reference = got.launches
    assert kernel is not None and reference is not None and got.peak_bytes == (1024, 512)
    assert (kernel.launches, kernel.memcpy, kernel.cuda_time_us) == (2, 1, 12.0)
    assert kernel.attribution is not None and kernel.attribution.launches(LaunchGroup.SUBMISSION) == 1
    assert (reference.launches, reference.attribution) == (2, None)
    assert launch_stats([m, m], None).launches == 0


class FakeGPU:
    """A timeline of streams as CUDA runs them, for the worker's device code on CPU: each launch costs the
    host LAUNCH_US; a kernel starts once the host launched it and its stream (and, unless it waits for
    nothing, the caller's stream) is free; the spin runs at 1,000 cycles per µs."""

    LAUNCH_US = 5.0

    def __init__(self) -> None:
        self.host, self.ready, self.log, self.sessions = 0.0, {CALLER: 0.0}, None, []
        self.allocated = self.peak = 0
        self.cuda_only_works = True

    def launch(self, name: str, us: float, stream: int = CALLER, waits: bool = True) -> Event:
        self.host += self.LAUNCH_US
        start = max(self.host, self.ready.get(stream, 0.0), self.ready[CALLER] if waits else 0.0)
        self.ready[stream] = start + us
        e = Event(name, stream, start, start + us, us)
        if self.log is not None:
            self.log.append(e)
        return e

    def sync(self) -> None:
        self.host = max(self.host, *self.ready.values())

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import torch

        from reporter.validate import timing
        gpu = self

        class Ev:
            def __init__(self, enable_timing: bool = False) -> None:
                self.t = 0.0

            def record(self) -> None:
                gpu.host += gpu.LAUNCH_US
                self.t = max(gpu.host, gpu.ready[CALLER])

            def synchronize(self) -> None:
                gpu.sync()

            def elapsed_time(self, other: Ev) -> float:
                return (other.t - self.t) / 1e3

        class Flush:
            def zero_(self) -> None:
                gpu.launch("at::native::FillFunctor", 80.0)

        class Session:
            def __init__(self, cuda_only: bool) -> None:
                self.cuda_only = cuda_only

            def __enter__(self) -> Session:
                gpu.log, self.events = [], []
                return self

            def __exit__(self, *exc: object) -> None:
                got = gpu.log or []
                self.events = got if gpu.cuda_only_works or not self.cuda_only else []
                gpu.log = None
                gpu.sessions.append(self.cuda_only)

        def empty(*args: object, **kwargs: object) -> Flush:
            gpu.allocated += 256
            return Flush()

        def reset_peak() -> None:
            gpu.peak = gpu.allocated
        monkeypatch.setattr(torch.cuda, "_sleep", lambda cycles: gpu.launch(SPIN, cycles / 1000))
        monkeypatch.setattr(torch.cuda, "synchronize", gpu.sync)
        monkeypatch.setattr(torch.cuda, "Event", Ev)
        monkeypatch.setattr(torch.cuda, "memory_allocated", lambda: gpu.allocated)
        monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda: gpu.peak)
        monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", reset_peak)
        monkeypatch.setattr(torch, "empty", empty)
        monkeypatch.setattr(timing, "_profiler", Session)
        monkeypatch.setattr(timing, "profiled_events", lambda prof: sorted(prof.events, key=lambda e: e.start_us))


SETTINGS = CheckSettings(warmup=2, perf_trials=30, ci_target_pct=1.0, time_cap_s=5.0, flush_l2_mb=1)


def _fns(gpu: FakeGPU, cheat: str) -> list:
    def kernel(x: object) -> None:
        gpu.peak = max(gpu.peak, gpu.allocated + 64)
        if cheat == "pool stream":  # side_stream_unwaited: a short matmul on a stream that waits for nothing
            gpu.launch("matmul_tiled_kernel(float const*, float const*, float*, int, int, int)", 10.0, SIDE, waits=False)
        elif cheat == "waits, not waited for":
            gpu.launch("matmul_tiled_kernel(float const*, float const*, float*, int, int, int)", 10.0, SIDE)
        else:  # synced_side_stream: waits for the caller, and the caller waits for it
            e = gpu.launch("matmul_tiled_kernel(float const*, float const*, float*, int, int, int)", 10.0, SIDE)
            gpu.ready[CALLER] = max(gpu.ready[CALLER], e.end_us)
        gpu.host += 20.0  # the host's way back out of the extension and Python (more with the profiler on)

    def reference(x: object) -> None:
        gpu.peak = max(gpu.peak, gpu.allocated + 32)
        gpu.launch("sm90_xmma_gemm_f32f32_cublas", 20.0)
    return [kernel, reference]


@pytest.mark.parametrize("cheat, unwaited, unordered", [("pool stream", (), (SIDE,)), ("waits, not waited for", (SIDE,), ()),
                                                         ("honest", (), ())])
def test_the_call_set_on_a_cuda_timeline(monkeypatch: pytest.MonkeyPatch, cheat: str, unwaited: tuple[int, ...],
                                         unordered: tuple[int, ...]) -> None:
    from reporter.validate import timing
    gpu = FakeGPU()
    gpu.install(monkeypatch)
    phases: dict[str, float] = {}
    names = [({"matmul_tiled_kernel"}, set()), None]
    figures, calls, _ = timing.time_all(_fns(gpu, cheat), [[1], [2]], SETTINGS, "cuda", names, phases)
    assert calls is not None and set(phases) == {"warmup", "wall", "callset", "device", "exclusive", "host_quiet", "gate_wait"}
    kernel, reference = calls.launches
    assert kernel is not None and kernel.attribution is not None and reference is not None
    att = kernel.attribution
    assert (att.call_stream, att.unwaited_streams, att.unordered_streams) == (CALLER, unwaited, unordered)
    assert bool(suspects.attribution_flags(att)) == (cheat != "honest")
    assert (reference.launches, reference.attribution) == (1, None)
    assert calls.peak_bytes == (64, 32)  # the flush buffer the timer holds is not the call's memory
    assert figures[1].device is not None and figures[1].device.median_ms == pytest.approx(0.020)
    if cheat != "pool stream":  # (work that waits for nothing may start before the call's first marker: not timed)
        # Deterministic durations converge at the floor: one device-time session after the call set's own.
        assert gpu.sessions == [True, True]
        assert [f.device.n for f in figures if f.device] == [SETTINGS.perf_trials] * 2


def test_without_the_spin_the_short_side_kernel_ends_before_the_marker(monkeypatch: pytest.MonkeyPatch) -> None:
    # What the H200 saw: the marker right after the return starts after the side kernel ended, so the rule
    # "still running at the marker" alone never trips for it.
    gpu = FakeGPU()
    gpu.install(monkeypatch)
    gpu.log = []
    _fns(gpu, "pool stream")[0](None)
    gpu.launch(SPIN, 1.0)
    assert attribute(gpu.log, {"matmul_tiled_kernel"}, set()).unwaited_streams == ()


def test_device_events_that_need_cpu_activity_are_still_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from reporter.validate import timing
    gpu = FakeGPU()
    gpu.install(monkeypatch)
    gpu.cuda_only_works = False
    figures, calls, _ = timing.time_all(_fns(gpu, "honest"), [[1]], SETTINGS, "cuda", None)
    # the call set's session finds no marker, tries again with CPU activity, and the device basis keeps it
    assert gpu.sessions == [True, False, False] and calls is not None and figures[0].device is not None


def test_only_the_timed_loops_hold_the_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    # Warm-up and wall time in a window with the host quiet, each device-time session in one without (CPU
    # load does not move device time); the call set's profiled calls in none: they need no quiet GPU.
    import contextlib

    from reporter.validate import timing
    gpu = FakeGPU()
    gpu.install(monkeypatch)
    held: list[bool | None] = [None]  # the open window's quiet_host, None when none is open
    seen: list[tuple[str, bool | None]] = []

    @contextlib.contextmanager
    def window(folder: str | None = None, quiet_host: bool = True, spent: object = None, lane: str | None = None):  # type: ignore[no-untyped-def]
        held[0] = quiet_host
        yield
        held[0] = None

    real_wall, real_profiler = timing._Timer.wall, timing._profiler

    def wall(self: timing._Timer) -> list[list[float]]:
        seen.append(("wall", held[0]))
        return real_wall(self)

    def profiler(cuda_only: bool) -> object:
        seen.append(("profiler session", held[0]))
        return real_profiler(cuda_only)
    monkeypatch.setattr(timing, "timing_window", window)
    monkeypatch.setattr(timing._Timer, "wall", wall)
    monkeypatch.setattr(timing, "_profiler", profiler)
    timing.time_all(_fns(gpu, "honest"), [[1]], SETTINGS, "cuda", None)
    assert seen[0] == ("wall", True) and {s for s in seen if s[0] == "wall"} == {("wall", True)}
    sessions = [h for what, h in seen if what == "profiler session"]
    assert sessions == [None, False]  # the call set outside any window, then one device-time session
