"""Timing on three bases, inside the worker (standard library and torch only).

- wall: CUDA events around the eager call, L2 flushed before it, inputs rotated (KernelBench's basis).
  For small calls this measures the host as much as the GPU.
- device: the summed durations of the kernels and memcpy/memset one call launches, from CUPTI through
  torch.profiler. Calls are told apart by `torch.cuda._sleep` marker kernels launched around each.
- graph: the call captured once into a CUDA graph and replayed, timed with CUDA events: no launch
  overhead, but the gaps between kernels stay. Capture can fail (host syncs, allocations, dynamic
  shapes); the reason is recorded instead.

Every basis times all functions interleaved (order alternating each round) and repeats adaptively
(`stats.adaptive`). Graph capture is a step of its own (`time_graphs`), which the worker runs after
every correctness check: a failed capture is the step most likely to upset the CUDA context.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch

from ..core.schema import BasisStats, LaunchStats, TimingFigures
from .attribution import Event, attribute
from .stats import adaptive, summarize

BATCH = 10  # rounds per adaptive batch
DEVICE_BATCH = 25  # rounds per profiler session: starting and reading one costs more than the calls
SPIN_CYCLES = 1000  # marker kernel length: long enough to show up, short enough to cost nothing
MARKER = "spin_kernel"
PREROLL_CYCLES = 400_000  # ~0.2 ms at the H200's 1.98 GHz: longer than a graph submission takes the host


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
    """One basis's batches; `self.round` keeps inputs rotating and order alternating across batches."""

    def __init__(self, fns: list[Callable[..., Any]], input_sets: list[list[Any]], device: str, flush_mb: int) -> None:
        self.fns, self.input_sets, self.device, self.round = fns, input_sets, device, 0
        self.cuda_only = False
        cuda = device == "cuda"
        self.flush = torch.empty(flush_mb * 1024 * 1024 // 4, dtype=torch.float32, device=device) if cuda else None

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

    def device_time(self) -> list[list[float]]:
        calls: list[int] = []
        with _profiler(self.cuda_only) as prof:
            for _ in range(DEVICE_BATCH):
                inputs = self.input_sets[self.round % len(self.input_sets)]
                for j in _order(len(self.fns), self.round):
                    self._flush()
                    torch.cuda._sleep(SPIN_CYCLES)
                    self.fns[j](*inputs)
                    torch.cuda._sleep(SPIN_CYCLES)
                    torch.cuda.synchronize()
                    calls.append(j)
                self.round += 1
        return split_calls(_device_events(prof), calls, len(self.fns))

    def pick_profiler(self) -> None:
        """Start CUPTI outside the time cap, and keep CPU activity off when device events come without it.

        Reading back CPU op events is what makes a profiler session slow (seconds for a busy reference);
        device time needs only the device events.
        """
        for cuda_only in (True, False):
            with _profiler(cuda_only) as prof:
                torch.cuda._sleep(SPIN_CYCLES)
                torch.cuda.synchronize()
            if any(MARKER in name for name, _ in _device_events(prof)):
                self.cuda_only = cuda_only
                return


def _profiler(cuda_only: bool) -> Any:
    from torch.profiler import ProfilerActivity, profile
    return profile(activities=[ProfilerActivity.CUDA] if cuda_only else [ProfilerActivity.CPU, ProfilerActivity.CUDA])


def _device_events(prof: Any) -> list[tuple[str, float]]:
    from torch.profiler import DeviceType
    events = sorted((e for e in prof.events() if e.device_type == DeviceType.CUDA), key=lambda e: e.time_range.start)
    return [(e.name, float(e.device_time_total)) for e in events]


def split_calls(events: list[tuple[str, float]], calls: list[int], n_fns: int) -> list[list[float]]:
    """Device events (name, µs) in start order -> ms per call for each function.

    Each call sits between two marker kernels: segments between markers alternate flush, call, flush,
    call, ... so the calls are the odd segments.
    """
    segments: list[float] = [0.0]
    for name, us in events:
        if MARKER in name:
            segments.append(0.0)
        else:
            segments[-1] += us
    per_call = segments[1::2]
    if len(segments) != 2 * len(calls) + 1:
        raise RuntimeError(f"profiler saw {len(segments) - 1} marker kernels for {len(calls)} calls")
    out: list[list[float]] = [[] for _ in range(n_fns)]
    for j, us in zip(calls, per_call):
        out[j].append(us / 1e3)
    return out


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


def _run(batch: Callable[[], list[list[float]]], n: int, s: dict[str, Any]) -> list[BasisStats]:
    samples, stop = adaptive(batch, n, min_n=s["perf_trials"], target_pct=s["ci_target_pct"], cap_s=s["time_cap_s"])
    return [summarize(x, stop) for x in samples]


def time_all(fns: list[Callable[..., Any]], input_sets: list[list[Any]], s: dict[str, Any],
             device: str) -> list[TimingFigures]:
    """Wall and device time for each function, in the order given; the graph basis is `time_graphs`' work.

    No CUDA-graph capture happens here: a failed capture can leave the process unable to compute, and the
    worker runs every correctness check (the re-check after this loop among them) before it captures.
    """
    n = len(fns)
    warm_up(fns, input_sets, s["warmup"], device)
    timer = _Timer(fns, input_sets, device, s["flush_l2_mb"])
    wall = _run(timer.wall, n, s)
    if device != "cuda":
        note = "no CUDA device"
        return [TimingFigures(wall=w, device_note=note, graph_note=note) for w in wall]
    dev: list[BasisStats | None] = [None] * n
    dev_note = None
    try:
        timer.pick_profiler()
        dev = list(_run(timer.device_time, n, s))
    except Exception as exc:  # noqa: BLE001 - a profiler failure loses one figure, not the result
        dev_note = f"torch.profiler failed: {type(exc).__name__}: {str(exc)[:200]}"
    return [TimingFigures(device=dev[i], wall=wall[i], device_note=dev_note) for i in range(n)]


def time_graphs(fns: list[Callable[..., Any]], input_sets: list[list[Any]], s: dict[str, Any],
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
        timer = _Timer(fns, input_sets, device, s["flush_l2_mb"])
        for i, st in zip(ok, _run(_replays([captured[i][0] for i in ok], timer), len(ok), s)):
            graph[i] = st
    return list(zip(graph, notes))


def count_launches(fn: Callable[..., Any], inputs: list[Any], device: str,
                   names: tuple[set[str], set[str]] | None = None) -> LaunchStats | None:
    """Launches and CUDA time of one warm call; with `names` (the submission's kernels in its source and in its
    extension) also where that call's kernel time went and on which streams (`attribution.attribute`)."""
    if device != "cuda":
        return None
    from torch.profiler import ProfilerActivity, profile
    fn(*inputs)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn(*inputs)
        # On the caller's stream, once the call has returned: a kernel elsewhere still running when this
        # starts was not waited for by the caller's stream (see attribution._unwaited).
        torch.cuda._sleep(SPIN_CYCLES)
        torch.cuda.synchronize()
    events = profiled_events(prof)
    dev = [e for e in events if MARKER not in e.name]
    kernels = [e for e in dev if not e.is_copy]
    return LaunchStats(launches=len(kernels), cuda_time_us=float(sum(e.device_us for e in kernels)),
                       memcpy=sum(1 for e in dev if e.name.startswith("Memcpy")),
                       memset=sum(1 for e in dev if e.name.startswith("Memset")),
                       kernel_names=tuple(sorted({e.name[:120] for e in kernels})),
                       attribution=attribute(events, *names) if names is not None else None)


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
    if device != "cuda":
        return None
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    fn(*inputs)
    torch.cuda.synchronize()
    return int(torch.cuda.max_memory_allocated())

