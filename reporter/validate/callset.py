"""The profiled call set: one torch.profiler session that gives device time, launch counts, launch
attribution and peak memory for every timed function at once (standard library only: pure functions of
profiler events, tested on CPU; `timing` drives the device).

Each call in a device-time session sits between two marker kernels on the caller's stream, so the
events split into calls without correlating CPU and GPU records (which would need the profiler's CPU
activity, the slow part of reading a session back). The first round of the first session is the
profiled call set: its markers are the spin before the call and the marker after it that
`attribution` judges streams by, and peak memory is read around it. Every call of the session, that
round included, is a device-time sample: one session serves what used to take four passes (peak
memory, launch counts, a profiler probe, the first device-time batch).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.schema import LaunchStats
from .attribution import MARKER, Event, attribute

# The spin before a profiled call holds the caller's stream for longer than the host needs to make the
# call, so work of the call that does not wait for the caller starts before the spin ends. At least
# SPIN_MIN_US, and SPIN_HOST_FACTOR times the host time of one warm call (a call that launches many small
# kernels), up to SPIN_MAX_US (a host-bound reference: what it launches late is simply not judged early).
SPIN_MIN_US = 2_000.0
SPIN_HOST_FACTOR = 4.0
SPIN_MAX_US = 100_000.0


@dataclass(frozen=True)
class CallSet:
    """Per timed function, in the order timed: its profiled call's launches and peak memory (bytes)."""

    launches: tuple[LaunchStats | None, ...]
    peak_bytes: tuple[int | None, ...]


def spin_us(host_s: float) -> float:
    """How long the spin before a profiled call lasts, for a call whose host side took `host_s` seconds."""
    return min(SPIN_MAX_US, max(SPIN_MIN_US, SPIN_HOST_FACTOR * host_s * 1e6))


def split_segments(events: list[Event], n_calls: int) -> list[list[Event]]:
    """Device events in start order -> for each call, its events with the two markers around it.

    The markers alternate before and after a call: segments between them alternate flush, call, flush,
    call, ... so a call's events are the odd segments, bracketed by markers 2i and 2i+1.
    """
    markers = [i for i, e in enumerate(events) if MARKER in e.name]
    if len(markers) != 2 * n_calls:
        raise RuntimeError(f"profiler saw {len(markers)} marker kernels for {n_calls} calls")
    return [events[markers[2 * i]:markers[2 * i + 1] + 1] for i in range(n_calls)]


def per_function_ms(segments: list[list[Event]], calls: list[int], n_fns: int) -> list[list[float]]:
    """Each call's device time (ms: kernels, memcpy and memset between its markers), grouped by function."""
    out: list[list[float]] = [[] for _ in range(n_fns)]
    for j, seg in zip(calls, segments, strict=True):
        out[j].append(sum(e.device_us for e in seg if MARKER not in e.name) / 1e3)
    return out


def launch_stats(segment: list[Event], names: tuple[set[str], set[str]] | None) -> LaunchStats:
    """Launches and CUDA time of one profiled call (its segment, markers included); with `names` (the
    submission's kernels in its source and in its extension) also where its kernel time went and on which
    streams (`attribution.attribute`)."""
    dev = [e for e in segment if MARKER not in e.name]
    kernels = [e for e in dev if not e.is_copy]
    return LaunchStats(launches=len(kernels), cuda_time_us=float(sum(e.device_us for e in kernels)),
                       memcpy=sum(1 for e in dev if e.name.startswith("Memcpy")),
                       memset=sum(1 for e in dev if e.name.startswith("Memset")),
                       kernel_names=tuple(sorted({e.name[:120] for e in kernels})),
                       attribution=attribute(segment, *names) if names is not None else None)


def call_set(segments: list[list[Event]], calls: list[int], names: list[tuple[set[str], set[str]] | None],
             peaks: list[int | None]) -> CallSet:
    """The call set from the first round's segments (one call per function, in `calls` order)."""
    launches: list[LaunchStats | None] = [None] * len(names)
    for j, seg in zip(calls, segments, strict=True):
        launches[j] = launch_stats(seg, names[j])
    return CallSet(tuple(launches), tuple(peaks))
