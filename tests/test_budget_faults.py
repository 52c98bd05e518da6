"""The run budget (`reporter.render.budget.run_budget`) against the cases round three's planted faults showed
untested: the memory limit is growth above what the process already holds, the CPU timer and the address-space
limit are gone after the block, and `OverBudget` passes through a guard that catches `Exception`.

Nothing here waits for a timer or measures speed: the tests read the limits (`getrlimit`, `getitimer`) the
block sets and leaves, and deliver the timer's signal themselves. Each test puts back what it found.
"""

from __future__ import annotations

import contextlib
import resource
import signal
from collections.abc import Iterator

import pytest

from reporter.render.budget import OverBudget, run_budget

_MIB = 2**20


def _vm_bytes() -> int:
    """The process's address space now (the test's own reading of /proc, not the module's)."""
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[0]) * resource.getpagesize()


@pytest.fixture
def restored(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A CPU budget no test here spends, 64 MiB of memory, and the process's limits put back afterwards."""
    monkeypatch.setenv("REPORTER_RUN_CPU_S", "600")
    monkeypatch.setenv("REPORTER_RUN_MEMORY_MB", "64")
    limit = resource.getrlimit(resource.RLIMIT_AS)
    handler = signal.getsignal(signal.SIGPROF)
    timer = signal.getitimer(signal.ITIMER_PROF)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, *timer)
        resource.setrlimit(resource.RLIMIT_AS, limit)
        signal.signal(signal.SIGPROF, handler)


# bud-rlimit-absolute: the address space may grow by the budget; it is not capped at the budget
def test_the_memory_limit_is_what_the_process_holds_plus_the_budget(restored: None) -> None:
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    before = _vm_bytes()
    if hard != resource.RLIM_INFINITY and before + 64 * _MIB >= hard:
        pytest.skip("this machine's hard address-space limit leaves no room for the budget")
    assert before > 16 * _MIB  # any Python process: a limit of 64 MiB alone would sit near or below it
    with run_budget():
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    assert soft != resource.RLIM_INFINITY
    assert before + 60 * _MIB < soft < before + 68 * _MIB


# bud-limit-left: the address-space limit is put back when the block ends, by an error too
@pytest.mark.parametrize("how", ["returns", "raises"])
def test_the_memory_limit_is_put_back_after_the_block(restored: None, how: str) -> None:
    before = resource.getrlimit(resource.RLIMIT_AS)
    with pytest.raises(KeyError) if how == "raises" else contextlib.nullcontext(), run_budget():
        assert resource.getrlimit(resource.RLIMIT_AS) != before
        if how == "raises":
            raise KeyError("a run's own failure")
    assert resource.getrlimit(resource.RLIMIT_AS) == before


# bud-timer-left: the CPU timer runs inside the block only; the signal's handler is put back
@pytest.mark.parametrize("how", ["returns", "raises"])
def test_the_cpu_timer_is_stopped_after_the_block(restored: None, how: str) -> None:
    signal.setitimer(signal.ITIMER_PROF, 0)
    handler = signal.getsignal(signal.SIGPROF)
    with pytest.raises(KeyError) if how == "raises" else contextlib.nullcontext(), run_budget():
        left, interval = signal.getitimer(signal.ITIMER_PROF)
        assert 0 < left <= 601 and interval == 0  # the kernel rounds to its clock tick
        if how == "raises":
            raise KeyError("a run's own failure")
    after = signal.getitimer(signal.ITIMER_PROF)
    signal.setitimer(signal.ITIMER_PROF, 0)  # never let a left timer's signal reach the rest of the session
    assert after == (0.0, 0.0)
    assert signal.getsignal(signal.SIGPROF) is handler


# bud-base-exc: OverBudget is no Exception, so a guard in the run's work cannot swallow it
def test_over_budget_is_not_an_exception() -> None:
    assert issubclass(OverBudget, BaseException)
    assert not issubclass(OverBudget, Exception)


def test_the_timer_signal_passes_through_a_guard_that_catches_exception(restored: None) -> None:
    swallowed = []
    with pytest.raises(OverBudget, match="600 CPU seconds"), run_budget():
        for row in range(3):
            try:
                if row == 1:
                    signal.raise_signal(signal.SIGPROF)  # what the timer delivers when the budget is spent
            except Exception as exc:  # noqa: BLE001 - a row guard, as the run's work has them
                swallowed.append(exc)
    assert swallowed == []


def test_memory_error_in_the_block_is_over_budget(restored: None) -> None:
    with pytest.raises(OverBudget, match="64 MiB"), run_budget():
        raise MemoryError

