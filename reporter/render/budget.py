"""A CPU-time and memory budget for one run's read, redaction and rendering (`core.limits.run_budget`).

Traces are written by programs we do not control: a 60 MB trace of tiny turns, or a reasoning the
redactor finds slow, must cost its own run, never the site. Inside `run_budget()` the process's CPU time
is watched by an interval timer (ITIMER_PROF: user and system time of this process) and its address space
may grow by the memory budget only (RLIMIT_AS); past either, `OverBudget` names the budget and how to
raise it. Python checks for the timer's signal between bytecodes, so a single C call (one regular
expression, one JSON parse) finishes first: the budget bounds Python's work, the bounded reader and
linear-time patterns bound the rest.
"""

from __future__ import annotations

import contextlib
import resource
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from ..core import limits


class OverBudget(BaseException):
    """A run took more CPU time or memory than its budget; the message names the budget. Not an `Exception`,
    so no guard inside the run's work (a row that fails is left out, say) swallows it and runs on unbounded."""


def _vm_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[0]) * resource.getpagesize()


@contextlib.contextmanager
def run_budget() -> Iterator[None]:
    """Run the block within one run's budget; `OverBudget` when it is spent. Outside the main thread (where
    no signal can be handled) or where the kernel has no /proc, the block runs unbounded."""
    cpu_s, memory = limits.run_budget()
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def spent(_signum: int, _frame: FrameType | None) -> None:
        raise OverBudget(f"the run took more than its {cpu_s:g} CPU seconds (RUN_CPU_S in reporter/core/limits.py; "
                         f"set {limits.RUN_BUDGET_ENV['RUN_CPU_S']} to raise it): its page is not built")

    old_handler = signal.signal(signal.SIGPROF, spent)
    old_limit = resource.getrlimit(resource.RLIMIT_AS)
    with contextlib.suppress(OSError, ValueError):
        soft = _vm_bytes() + memory
        if old_limit[1] == resource.RLIM_INFINITY or soft < old_limit[1]:
            resource.setrlimit(resource.RLIMIT_AS, (soft, old_limit[1]))
    signal.setitimer(signal.ITIMER_PROF, cpu_s)
    try:
        yield
    except MemoryError as exc:
        raise OverBudget(f"the run needed more than its {memory / 2**20:,.0f} MiB of memory (RUN_MEMORY_BYTES in "
                         f"reporter/core/limits.py; set {limits.RUN_BUDGET_ENV['RUN_MEMORY_BYTES']} to raise it): its page is not built") from exc
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        with contextlib.suppress(OSError, ValueError):
            resource.setrlimit(resource.RLIMIT_AS, old_limit)
        signal.signal(signal.SIGPROF, old_handler)
