"""Timing on three bases, inside the worker (standard library and torch only).

- wall: CUDA events around the eager call, L2 flushed before it, inputs rotated (KernelBench's basis).
  For small calls this measures the host as much as the GPU.
- device: the summed durations of the kernels and memcpy/memset one call launches, from CUPTI through
  torch.profiler. Calls are told apart by `torch.cuda._sleep` marker kernels launched around each. The
  first round of the first session is the profiled call set (`callset`): launch counts, launch
  attribution and peak memory come from those calls, which are device-time samples too.
- graph: the call captured once into a CUDA graph and replayed, timed with CUDA events: no launch
  overhead, but the gaps between kernels stay. Capture can fail (host syncs, allocations, dynamic
  shapes); the reason is recorded instead.

Every basis times all functions interleaved (order alternating each round) and repeats adaptively
(`stats.adaptive`), trying the stop rule after every batch; the device basis's first session holds
`perf_trials` rounds, so a basis that converges there pays for one profiler session (CUPTI starting up
and the events read back cost more than the calls). That session's start-up counts against the basis's
time cap; a basis whose CI is met after it stops as converged whatever its length. Graph capture is a
step of its own (`time_graphs`), which the worker runs after every correctness check: a failed capture
is the step most likely to upset the CUDA context.

`s`, the settings these functions take, is the job's typed `CheckSettings`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch

from ..core.schema import BasisStats, CheckSettings, TimingFigures
from .attribution import MARKER, Event
from .callset import CallSet, call_set, per_function_ms, spin_us, split_segments
from .stats import adaptive, summarize

BATCH = 10  # rounds per adaptive batch
DEVICE_BATCH = 25  # rounds per later profiler session: starting and reading one costs more than the calls
SPIN_CYCLES = 1000  # marker kernel length: long enough to show up, short enough to cost nothing
PREROLL_CYCLES = 400_000  # ~0.2 ms at the H200's 1.98 GHz: longer than a graph submission takes the host
CALIBRATION_CYCLES = 1_000_000  # one spin timed with CUDA events gives the spin's cycles per microsecond


def _order(n: int, i: int) -> list[int]:
    return list(range(n)) if i % 2 == 0 else list(reversed(range(n)))


def sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def warm_up(fns: list[Callable[..., Any]], input_sets: list[list[Any]], warmup: int, device: str,
            min_s: float = 0.25) -> None:
    t0, done = time.perf_counter(), 0
    while done < warmup or time.perf_counter() - t0 < min_s:
        for fn in fns:
            fn(*input_sets[done % len(input_sets)])
        sync(device)
        done += 1


class _Timer:
    """One basis's batches; `self.round` keeps inputs rotating and order alternating across batches.

    `names` (per function: the submission's kernel names, or None) and `first_rounds` are for the device
    basis: its first session holds the profiled call set (`callset`) and enough rounds to reach the stop
    rule's floor, so a basis that converges there costs one profiler session.
    """

    def __init__(self, fns: list[Callable[..., Any]], input_sets: list[list[Any]], device: str, flush_mb: int,
                 names: list[tuple[set[str], set[str]] | None] | None = None, first_rounds: int = DEVICE_BATCH) -> None:
        self.fns, self.input_sets, self.device, self.round = fns, input_sets, device, 0
        self.cuda_only = True
        self.names: list[tuple[set[str], set[str]] | None] = list(names) if names is not None else [None] * len(fns)
        self.first_rounds, self.spins = max(DEVICE_BATCH, first_rounds), [0] * len(fns)
        self.call_set: CallSet | None = None
        cuda = device == "cuda"
        before = torch.cuda.memory_allocated() if cuda else 0
        self.flush = torch.empty(flush_mb * 1024 * 1024 // 4, dtype=torch.float32, device=device) if cuda else None
        # What the flush buffer adds to the allocator's count: peak memory is the call's, not the timer's.
        self.flush_bytes = torch.cuda.memory_allocated() - before if cuda else 0

    def _flush(self) -> None:
        if self.flush is not None:
            self.flush.zero_()

    def wall(self) -> list[list[float]]:
        out: list[list[float]] = [[] for _ in self.fns]
        for _ in range(BATCH):
            inputs = self.input_sets[self.round % len(self.input_sets)]
            for j in _order(len(self.fns), self.round):
                self._flush()
                sync(self.device)
                if self.device == "cuda":
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    start.record()
                    self.fns[j](*inputs)
                    end.record()
                    torch.cuda.synchronize()
                    out[j].append(start.elapsed_time(end))
                else:
                    t1 = time.perf_counter()
                    self.fns[j](*inputs)
                    out[j].append((time.perf_counter() - t1) * 1e3)
            self.round += 1
        return out

    def size_spins(self) -> None:
        """The spin before each function's profiled call (`callset.spin_us`), from one warm call's host time."""
        per_us = _cycles_per_us()
        for j, fn in enumerate(self.fns):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            fn(*self.input_sets[0])
            host = time.perf_counter() - t0
            torch.cuda.synchronize()
            self.spins[j] = int(spin_us(host) * per_us)

    def _profiled_call(self, j: int) -> int:
        """The call set's call of function j (on the first input set, as every launch count was); its peak memory."""
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        torch.cuda._sleep(self.spins[j])
        self.fns[j](*self.input_sets[0])
        torch.cuda._sleep(SPIN_CYCLES)
        torch.cuda.synchronize()
        return int(torch.cuda.max_memory_allocated()) - self.flush_bytes

    def device_time(self) -> list[list[float]]:
        first = self.call_set is None
        rounds = self.first_rounds if first else DEVICE_BATCH
        calls: list[int] = []
        peaks: list[int | None] = [None] * len(self.fns)
        with _profiler(self.cuda_only) as prof:
            for r in range(rounds):
                inputs = self.input_sets[self.round % len(self.input_sets)]
                for j in _order(len(self.fns), self.round):
                    self._flush()
                    if first and r == 0:
                        peaks[j] = self._profiled_call(j)
                    else:
                        torch.cuda._sleep(SPIN_CYCLES)
                        self.fns[j](*inputs)
                        torch.cuda._sleep(SPIN_CYCLES)
                        torch.cuda.synchronize()
                    calls.append(j)
                self.round += 1
        events = profiled_events(prof)
        if first and self.cuda_only and not any(MARKER in e.name for e in events):
            # Some builds report device events only with CPU activity on: slower to read back, but measured.
            self.cuda_only = False
            return self.device_time()
        segments = split_segments(events, len(calls))
        if first:
            n = len(self.fns)
            self.call_set = call_set(segments[:n], calls[:n], self.names, peaks)
        return per_function_ms(segments, calls, len(self.fns))


def _cycles_per_us() -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    torch.cuda._sleep(CALIBRATION_CYCLES)
    end.record()
    end.synchronize()
    return CALIBRATION_CYCLES / max(1e-3, float(start.elapsed_time(end)) * 1e3)


def _profiler(cuda_only: bool) -> Any:
    from torch.profiler import ProfilerActivity, profile
    return profile(activities=[ProfilerActivity.CUDA] if cuda_only else [ProfilerActivity.CPU, ProfilerActivity.CUDA])


def capture(fn: Callable[..., Any], inputs: list[Any]) -> tuple[Any, str | None]:
    """The call captured into a CUDA graph and checked once against the eager output, or why not."""
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):
                fn(*inputs)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            captured = fn(*inputs)
        same = replay_recomputes(graph.replay, captured, lambda: fn(*inputs), torch.cuda.synchronize)
    except Exception as exc:  # noqa: BLE001 - any capture failure is a reason to show, not a crash
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return None, f"{type(exc).__name__}: {first}"[:300]
    if not same:
        return None, ("the replayed graph's output differs from the eager call's (work launched outside the captured "
                      "stream, such as on the legacy default stream, host-side logic or a changing shape)")
    return graph, None


def replay_recomputes(replay: Callable[[], Any], captured: Any, eager: Callable[[], Any], sync: Callable[[], Any]) -> bool:
    """Whether replaying the graph writes the output the eager call computes.

    The captured output is poisoned first: a kernel launched outside the capturing stream runs once
    during capture and is left out of the graph, so its output would otherwise still hold the right
    values from that run while every replay does nothing (timed at ~1 µs on the H200).
    """
    for t in _float_tensors(captured):
        t.fill_(float("nan"))
    replay()
    sync()
    expected = eager()
    sync()
    return _same(captured, expected)


def _float_tensors(x: Any) -> list[torch.Tensor]:
    if isinstance(x, torch.Tensor):
        return [x] if x.is_floating_point() or x.is_complex() else []
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _float_tensors(v)]
    return []


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and bool(torch.allclose(a.float(), b.float(), rtol=1e-3, atol=1e-5, equal_nan=True))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b)


def context_ok() -> bool:
    """Whether the CUDA context still runs work (a failed capture can leave it unusable)."""
    try:
        torch.ones(1, device="cuda").add_(1)
        torch.cuda.synchronize()
        return True
    except Exception:  # noqa: BLE001
        return False


def _replays(graphs: list[Any], timer: _Timer) -> Callable[[], list[list[float]]]:
    def batch() -> list[list[float]]:
        out: list[list[float]] = [[] for _ in graphs]
        for _ in range(BATCH):
            for j in _order(len(graphs), timer.round):
                timer._flush()
                torch.cuda.synchronize()
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                # Keep the GPU busy while the host records `start` and submits the graph, so the interval
                # holds the graph's own execution, not the host's submission latency.
                torch.cuda._sleep(PREROLL_CYCLES)
                start.record()
                graphs[j].replay()
                end.record()
                torch.cuda.synchronize()
                out[j].append(start.elapsed_time(end))
            timer.round += 1
        return out
    return batch


def _run(batch: Callable[[], list[list[float]]], n: int, s: CheckSettings) -> list[BasisStats]:
    samples, stop = adaptive(batch, n, min_n=s.perf_trials, target_pct=s.ci_target_pct, cap_s=s.time_cap_s)
    return [summarize(x, stop) for x in samples]


def time_all(fns: list[Callable[..., Any]], input_sets: list[list[Any]], s: CheckSettings, device: str,
             names: list[tuple[set[str], set[str]] | None] | None = None,
             phases: dict[str, float] | None = None) -> tuple[list[TimingFigures], CallSet | None]:
    """Wall and device time for each function, in the order given, and the profiled call set (launches,
    attribution with `names`, peak memory) taken inside the device basis; the graph basis is `time_graphs`'.

    Wall time comes first, before any profiler session: CUPTI, once attached, adds to every launch.
    No CUDA-graph capture happens here: a failed capture can leave the process unable to compute, and the
    worker runs every correctness check (the re-check after this loop among them) before it captures.
    `phases` gets the seconds of warm-up and of each basis.
    """
    n, phases = len(fns), phases if phases is not None else {}
    t0 = time.perf_counter()
    warm_up(fns, input_sets, s.warmup, device)
    timer = _Timer(fns, input_sets, device, s.flush_l2_mb, names, s.perf_trials)
    t1 = time.perf_counter()
    wall = _run(timer.wall, n, s)
    t2 = time.perf_counter()
    phases.update(warmup=t1 - t0, wall=t2 - t1)
    if device != "cuda":
        note = "no CUDA device"
        return [TimingFigures(wall=w, device_note=note, graph_note=note) for w in wall], None
    dev: list[BasisStats | None] = [None] * n
    dev_note = None
    try:
        timer.size_spins()
        dev = list(_run(timer.device_time, n, s))
    except Exception as exc:  # noqa: BLE001 - a profiler failure loses one figure, not the result
        dev_note = f"torch.profiler failed: {type(exc).__name__}: {str(exc)[:200]}"
    phases["device+profile"] = time.perf_counter() - t2
    return [TimingFigures(device=dev[i], wall=wall[i], device_note=dev_note) for i in range(n)], timer.call_set


def time_graphs(fns: list[Callable[..., Any]], input_sets: list[list[Any]], s: CheckSettings,
                device: str) -> list[tuple[BasisStats | None, str | None]]:
    """(CUDA-graph time, or why there is none) for each function: each call captured once and replayed.

    The worker runs this after every correctness check: capture is the step most likely to upset the
    CUDA context, and whatever it breaks can no longer change a verdict or another basis.
    """
    if device != "cuda":
        return [(None, "no CUDA device") for _ in fns]
    captured = [capture(fn, input_sets[0]) for fn in fns]
    notes = [why for _, why in captured]
    ok = [i for i, (g, _) in enumerate(captured) if g is not None]
    if len(ok) < len(fns) and not context_ok():
        return [(None, why or "not timed: the CUDA context failed after another side's capture") for why in notes]
    graph: list[BasisStats | None] = [None] * len(fns)
    if ok:
        timer = _Timer(fns, input_sets, device, s.flush_l2_mb)
        for i, st in zip(ok, _run(_replays([captured[i][0] for i in ok], timer), len(ok), s)):
            graph[i] = st
    return list(zip(graph, notes))


def profiled_events(prof: Any) -> list[Event]:
    """The device events of a torch.profiler session, with streams (`device_resource_id`) and times in µs."""
    from torch.profiler import DeviceType
    out = []
    for e in prof.events():
        if e.device_type != DeviceType.CUDA:
            continue
        stream = getattr(e, "device_resource_id", None)
        out.append(Event(e.name, int(stream) if isinstance(stream, int) else -1, float(e.time_range.start),
                         float(e.time_range.end), float(e.device_time_total)))
    return sorted(out, key=lambda e: e.start_us)


def peak_memory(fn: Callable[..., Any], inputs: list[Any], device: str) -> int | None:
    """Peak memory of one call on its own: when the profiled call set could not run."""
    if device != "cuda":
        return None
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    fn(*inputs)
    torch.cuda.synchronize()
    return int(torch.cuda.max_memory_allocated())

