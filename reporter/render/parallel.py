"""Run per-run work over all cores with a process pool; results come back in job order.

Workers get their shared, read-only state (URLs, asset names, settings) once, from the pool's
initializer, and load each run themselves: the parent sends paths and receives small results, so it
never holds a full trace. `REPORTER_JOBS` (or `--jobs`) sets the number of processes; 1 runs in-process,
which is what a profiler or a debugger wants.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

J = TypeVar("J")
R = TypeVar("R")

_STATE: dict[str, Any] = {}


def state() -> dict[str, Any]:
    """The shared state this process was given (in the parent too, when running in-process)."""
    return _STATE


def _init(shared: dict[str, Any]) -> None:
    _STATE.clear()
    _STATE.update(shared)


def jobs_wanted(jobs: int | None = None) -> int:
    if jobs is None:
        env = os.environ.get("REPORTER_JOBS", "")
        jobs = int(env) if env.isdigit() and int(env) > 0 else (os.cpu_count() or 1)
    return max(1, jobs)


def run_all(fn: Callable[[J], R], items: list[J], shared: dict[str, Any], jobs: int | None = None) -> Iterator[R]:
    """`fn(item)` for every item, in order, spread over `jobs` processes."""
    n = min(jobs_wanted(jobs), len(items))
    if n <= 1:
        _init(shared)
        yield from map(fn, items)
        return
    # fork starts a worker in milliseconds with the modules already imported; spawn elsewhere.
    ctx = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
    with ctx.Pool(n, initializer=_init, initargs=(shared,), maxtasksperchild=200) as pool:
        yield from pool.imap(fn, items, chunksize=max(1, min(16, len(items) // (n * 8))))
