"""Timing on three bases, inside the worker (standard library and torch only).

- wall: CUDA events around the eager call, L2 flushed before it, inputs rotated (KernelBench's basis) and at a
  fresh address each call (`fresh`); persisting L2 lines are made ordinary before each flush (`l2`).
  For small calls this measures the host as much as the GPU.
- device: the summed durations of the kernels and memcpy/memset one call launches, from CUPTI through
  torch.profiler. Calls are told apart by `torch.cuda._sleep` marker kernels launched around each.
- graph: the call captured once into a CUDA graph and replayed, timed with CUDA events: no launch
  overhead, but the gaps between kernels stay. Capture can fail (host syncs, allocations, dynamic
  shapes); the reason is recorded instead.

Every basis times its functions interleaved (order alternating each round) and repeats adaptively
(`stats.adaptive`), trying the stop rule after every batch. Only the timed loops hold the GPU to
themselves (`gate.timing_window`): the warm-up and the wall basis with the host quiet too, each device
session (its calls, not the reading back of its events) and the graph replays. The profiled call set
(`callset`: launch counts, launch attribution and peak memory, one call per function) is a profiler
session of its own between the wall and the device basis, outside any window: it needs no quiet GPU,
and it starts CUPTI, which, once attached, adds to every launch, after the wall basis is done. A
device session's start-up counts against the basis's time cap; a basis whose CI is met after the
first session stops there. Graph capture (`time_graphs`) runs after every correctness check: a failed
capture is the step most likely to upset the CUDA context.

`s`, the settings these functions take, is the job's typed `CheckSettings`.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Collection, MutableMapping
from typing import Any

import torch

from ..core.schema import BasisStats, CheckSettings, GpuReading, TimingFigures
from .attribution import MARKER, Event
from .callset import CallSet, call_set, per_function_ms, spin_us, split_segments
from .dynamic import settle
from .fresh import FreshInputs
from .gate import timing_window
from .graphs import capture, context_ok, replay_recomputes  # noqa: F401 - `replay_recomputes` is part of this module's interface
from .l2 import guard
from .stats import adaptive, summarize

BATCH = 10  # rounds per adaptive batch
DEVICE_BATCH = 25  # rounds per later profiler session: starting and reading one costs more than the calls
SPIN_CYCLES = 1000  # marker kernel length: long enough to show up, short enough to cost nothing
PREROLL_CYCLES = 400_000  # ~0.2 ms at the H200's 1.98 GHz: longer than a graph submission takes the host
CALIBRATION_CYCLES = 1_000_000  # one spin timed with CUDA events gives the spin's cycles per microsecond


def _host(x: Any) -> Any:
    if isinstance(x, torch.Tensor):
        return x.detach().to("cpu", copy=True)
    if isinstance(x, dict):
        return {k: _host(v) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(type(x), "_make"):  # a namedtuple takes its fields, not one iterable
        return type(x)._make(_host(v) for v in x)  # type: ignore[attr-defined]
    return type(x)(_host(v) for v in x) if isinstance(x, (list, tuple)) else x


def _order(n: int, i: int) -> list[int]:
    return list(range(n)) if i % 2 == 0 else list(reversed(range(n)))


def sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def warm_up(fns: list[Callable[..., Any]], inputs_for: Callable[[int], list[Any]], warmup: int, device: str,
            min_s: float = 0.25) -> None:
    """`inputs_for(round)`: that round's inputs, each call its own (`FreshInputs.next`): no call gets the input sets'
    own tensors, so nothing a call writes there reaches a later call or the check of the timed outputs."""
    t0, done = time.perf_counter(), 0
    while done < warmup or time.perf_counter() - t0 < min_s:
        for fn in fns:
            fn(*inputs_for(done))
        sync(device)
        done += 1


class _Timer:
    """One basis's batches over the functions timed; `self.round` keeps inputs rotating and order alternating
    across batches. The device basis's first session holds `first_rounds` rounds (the stop rule's floor), so
    a basis that converges there costs one profiler session. `spent` adds up the timing windows' seconds."""

    def __init__(self, fns: list[Callable[..., Any]], input_sets: list[list[Any]], device: str, flush_mb: int,
                 first_rounds: int = DEVICE_BATCH, spent: MutableMapping[str, float] | None = None, fresh: bool = True) -> None:
        self.fns, self.input_sets, self.device, self.round = fns, input_sets, device, 0
        self.cuda_only, self.sessions = True, 0
        # (basis, input set) -> (round, output) of one kernel (fns[0]) call of each batch, chosen at random after it
        # returned (`_keep`), the latest per set: checked after the loop, so a kernel that answers differently while it
        # is timed (it sniffed the loop) fails. None: not kept.
        self.kept: MutableMapping[tuple[str, int], tuple[int, Any]] | None = None
        self._picked = False  # this batch's (or profiler session's) kernel output is kept already
        self.last_inputs: list[Any] = []  # the kernel's last timed call's inputs, at their address (the re-check's)
        self.first_rounds = max(DEVICE_BATCH, first_rounds)
        self.spent: MutableMapping[str, float] = spent if spent is not None else {}
        cuda = device == "cuda"
        before = torch.cuda.memory_allocated() if cuda else 0
        self.flush = torch.empty(flush_mb * 1024 * 1024 // 4, dtype=torch.float32, device=device) if cuda else None
        # Every eager timed call's inputs at an address no call saw before (a graph replays its captured addresses).
        self.fresh = FreshInputs(input_sets if fresh else [])
        # What the flush buffer and the pool add to the allocator's count: peak memory is the call's, not the timer's.
        self.flush_bytes = torch.cuda.memory_allocated() - before if cuda else 0

    def _flush(self) -> None:
        guard().before_call()  # persisting L2 lines would survive the flush: made ordinary first
        if self.flush is not None:
            self.flush.zero_()

    def wall(self) -> list[list[float]]:
        out: list[list[float]] = [[] for _ in self.fns]
        self._picked = False
        for b in range(BATCH):
            for j in _order(len(self.fns), self.round):
                inputs = self.fresh.next(self.round)  # copied before the flush: the call finds its inputs in memory
                threads = set(threading.enumerate()) if j == 0 else set()
                self._flush()
                sync(self.device)
                if self.device == "cuda":
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    start.record()
                    got = self.fns[j](*inputs)
                    end.record()
                    torch.cuda.synchronize()
                    out[j].append(start.elapsed_time(end))
                else:
                    t1 = time.perf_counter()
                    got = self.fns[j](*inputs)
                    out[j].append((time.perf_counter() - t1) * 1e3)
                if j == 0:
                    self.last_inputs = inputs
                    self._keep("wall", got, threads, BATCH - b)
            self.round += 1
        return out

    def _keep(self, basis: str, got: Any, threads: set[threading.Thread], left: int) -> bool:
        """Whether this kernel call's output is the one of its batch kept (its work settled, as a trial judges it:
        deferred work is `dynamic.output_after_return`'s finding; copied to the host at once, so no later call can
        rewrite it and it adds nothing to the device memory measured next). Chosen after the call returned, each of the
        `left` calls still to come as likely as this one, so no call can know it will be checked: a kernel that answers
        wrong in some timed calls is caught by chance 1 - (share right) per kept call."""
        if self.kept is None or self._picked or secrets.randbelow(left) != 0:
            return False
        settle(self.device, threads)
        self.kept[basis, self.round % len(self.input_sets)] = (self.round, _host(got))
        self._picked = True
        return True

    def _spins(self, fns: list[Callable[..., Any]]) -> list[int]:
        """The spin before each function's profiled call (`callset.spin_us`), from one warm call's host time."""
        per_us, spins = _cycles_per_us(), []
        for fn in fns:
            torch.cuda.synchronize()
            inputs = self.fresh.next(0)
            t0 = time.perf_counter()
            fn(*inputs)
            host = time.perf_counter() - t0
            torch.cuda.synchronize()
            spins.append(int(spin_us(host) * per_us))
        return spins

    def _profiled_call(self, fn: Callable[..., Any], spin: int) -> int:
        """A call set's call (on the first input set, as every launch count was); its peak memory."""
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        inputs = self.fresh.next(0)
        torch.cuda._sleep(spin)
        fn(*inputs)
        torch.cuda._sleep(SPIN_CYCLES)
        torch.cuda.synchronize()
        return int(torch.cuda.max_memory_allocated()) - self.flush_bytes

    def profile_calls(self, fns: list[Callable[..., Any]], names: list[tuple[set[str], set[str]] | None]) -> CallSet:
        """The call set: one profiled call of each of `fns` (`names`: the submission's kernel names, or None)."""
        spins = self._spins(fns)
        peaks: list[int | None] = []
        with _profiler(self.cuda_only) as prof:
            for fn, spin in zip(fns, spins, strict=True):
                self._flush()
                peaks.append(self._profiled_call(fn, spin))
        events = profiled_events(prof)
        if self.cuda_only and not any(MARKER in e.name for e in events):
            # Some builds report device events only with CPU activity on: slower to read back, but measured.
            self.cuda_only = False
            return self.profile_calls(fns, names)
        return call_set(split_segments(events, len(fns)), list(range(len(fns))), names, peaks)

    def device_time(self) -> list[list[float]]:
        """One profiler session of device-time samples: its calls hold the GPU (a timing window), reading its
        events back does not."""
        first = self.sessions == 0
        calls: list[int] = []
        rounds, self._picked = self.first_rounds if first else DEVICE_BATCH, False
        with timing_window(quiet_host=False, spent=self.spent), _profiler(self.cuda_only) as prof:
            for r in range(rounds):
                for j in _order(len(self.fns), self.round):
                    inputs = self.fresh.next(self.round)
                    threads = set(threading.enumerate()) if j == 0 else set()
                    self._flush()
                    torch.cuda._sleep(SPIN_CYCLES)
                    got = self.fns[j](*inputs)
                    torch.cuda._sleep(SPIN_CYCLES)
                    torch.cuda.synchronize()
                    calls.append(j)
                    if j == 0:  # a kept output's copy runs after the closing marker: outside every call's segment
                        self.last_inputs = inputs
                        self._keep("device", got, threads, rounds - r)
                self.round += 1
        self.sessions += 1
        events = profiled_events(prof)
        if first and self.cuda_only and not any(MARKER in e.name for e in events):
            self.cuda_only, self.sessions = False, 0  # as in `profile_calls`, when no call set ran before
            return self.device_time()
        return per_function_ms(split_segments(events, len(calls)), calls, len(self.fns))


def gpu_reading(device: str) -> GpuReading | None:
    """The GPU's SM clock and temperature now, through NVML (torch asks nvidia-ml-py); None off CUDA."""
    if device != "cuda":
        return None

    def read(fn: Callable[[], Any]) -> int | None:
        try:
            return int(fn())
        except Exception:  # noqa: BLE001 - no nvidia-ml-py, or a query the device refuses: unknown
            return None
    return GpuReading(read(torch.cuda.clock_rate), read(torch.cuda.temperature))


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
             names: list[tuple[set[str], set[str]] | None] | None = None, phases: MutableMapping[str, float] | None = None,
             reuse: Callable[[GpuReading | None], Collection[int]] | None = None,
             profile: bool = True, kept: MutableMapping[tuple[str, int], tuple[int, Any]] | None = None,
             last_inputs: list[Any] | None = None) -> tuple[list[TimingFigures | None], CallSet | None, GpuReading | None]:
    """Wall and device time for each function, in the order given; the profiled call set of every function
    (launches, attribution with `names`, peak memory) unless `profile` is False; the GPU's reading after the
    warm-up. `reuse` gets that reading and names the functions not to time (a stored reference timing is
    used instead): their figures are None. The graph basis is `time_graphs`'.

    Wall time comes first, before any profiler session: CUPTI, once attached, adds to every launch. No
    CUDA-graph capture happens here: a failed capture can leave the process unable to compute, and the
    worker runs every correctness check (the re-check after this loop among them) before it captures.
    `phases` gets the seconds of warm-up, each basis and the call set, and the timing windows' totals; `kept`,
    (basis, input set) -> (round, output) of the kernel's (fns[0]'s) timed calls (`_Timer._keep`); `last_inputs`, the
    inputs of the kernel's last timed call, at the address it saw them.
    """
    phases = phases if phases is not None else {}
    timer = _Timer(fns, input_sets, device, s.flush_l2_mb, s.perf_trials, phases)
    timer.kept = kept
    with timing_window(quiet_host=True, spent=phases):
        t0 = time.perf_counter()
        warm_up(fns, timer.fresh.next, s.warmup, device)
        reading = gpu_reading(device)
        skip = set(reuse(reading)) if reuse is not None else set()
        timed = [i for i in range(len(fns)) if i not in skip]
        timer.fns = [fns[i] for i in timed]
        t1 = time.perf_counter()
        wall = _run(timer.wall, len(timed), s)
        phases.update(warmup=t1 - t0, wall=time.perf_counter() - t1)
    out: list[TimingFigures | None] = [None] * len(fns)
    if device != "cuda":
        for i, w in zip(timed, wall, strict=True):
            out[i] = TimingFigures(wall=w, device_note="no CUDA device", graph_note="no CUDA device")
        if last_inputs is not None:
            last_inputs[:] = timer.last_inputs
        return out, None, reading
    t2 = time.perf_counter()
    calls = None
    if profile:
        try:
            calls = timer.profile_calls(fns, list(names) if names is not None else [None] * len(fns))
        except Exception:  # noqa: BLE001 - without launch counts the worker still measures peak memory alone
            calls = None
    t3 = time.perf_counter()
    dev: list[BasisStats | None] = [None] * len(timed)
    dev_note = None
    try:
        dev = list(_run(timer.device_time, len(timed), s))
    except Exception as exc:  # noqa: BLE001 - a profiler failure loses one figure, not the result
        dev_note = f"torch.profiler failed: {type(exc).__name__}: {str(exc)[:200]}"
    phases.update(callset=t3 - t2, device=time.perf_counter() - t3)
    for k, i in enumerate(timed):
        out[i] = TimingFigures(device=dev[k], wall=wall[k], device_note=dev_note)
    if last_inputs is not None:
        last_inputs[:] = timer.last_inputs
    return out, calls, reading


def time_graphs(fns: list[Callable[..., Any]], input_sets: list[list[Any]], s: CheckSettings, device: str,
                phases: MutableMapping[str, float] | None = None) -> list[tuple[BasisStats | None, str | None]]:
    """(CUDA-graph time, or why there is none) for each function: each call captured once (outside the
    timing window: capture needs no quiet GPU) and replayed (inside it, with the host quiet).

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
        timer = _Timer(fns, input_sets, device, s.flush_l2_mb, fresh=False)
        with timing_window(quiet_host=True, spent=phases):
            stats = _run(_replays([captured[i][0] for i in ok], timer), len(ok), s)
        for i, st in zip(ok, stats, strict=True):
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

