"""One GPU shared by several checks: a check that ran out of GPU memory beside others is run again alone."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from reporter.core.records import ValidationSettings
from reporter.core.schema import DynamicCheck, DynamicResult, TrialResult, Verdict, WorkerJob, WorkerResult
from reporter.validate import steps
from reporter.validate.executors import local
from reporter.validate.recorder import Item, check_settings
from reporter.validate.slots import GpuSlots, ran_out_of_memory
from reporter.validate.steps import StepResult

OOM = StepResult(WorkerResult(Verdict.RUNTIME_ERROR, "OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
                              phase_s={"check": 2.0}), wall_s=2.0)
OK = StepResult(WorkerResult(Verdict.CORRECT, phase_s={"check": 3.0}), wall_s=3.0)


def test_out_of_memory_is_read_from_the_verdict_and_from_any_trial() -> None:
    assert ran_out_of_memory(OOM.result)
    trials = (TrialResult(0, 1, False, True), TrialResult(1, 2, True, False, problem="raised OutOfMemoryError: CUDA out of memory."))
    assert ran_out_of_memory(WorkerResult(Verdict.INCORRECT, "2 of 5 trials failed", trials=trials))
    assert not ran_out_of_memory(WorkerResult(Verdict.INCORRECT, "2 of 5 trials failed", trials=trials[:1]))
    assert not ran_out_of_memory(OK.result)
    assert not ran_out_of_memory(WorkerResult(Verdict.RUNTIME_ERROR, "RuntimeError: illegal memory access"))
    # A correct kernel whose dynamic checks could not run beside another process's memory: retried alone, or the
    # run would only say "checks incomplete".
    oom_check = DynamicResult(DynamicCheck.OUTPUT_REUSED, None, "not run: OutOfMemoryError: CUDA out of memory.")
    assert ran_out_of_memory(WorkerResult(Verdict.CORRECT, dynamic_checks=(oom_check,)))
    assert not ran_out_of_memory(WorkerResult(Verdict.CORRECT, dynamic_checks=(DynamicResult(DynamicCheck.OUTPUT_REUSED, False, "each call returned new storage"),)))


def _in_thread(target: Any) -> threading.Thread:
    t = threading.Thread(target=target, daemon=True)
    t.start()
    return t


def test_alone_waits_for_shared_checks_and_holds_new_ones_back() -> None:
    slots = GpuSlots()
    order: list[str] = []
    first_in, release_first = threading.Event(), threading.Event()

    def shared(name: str, hold: threading.Event | None = None) -> None:
        with slots.shared():
            order.append(f"{name} in")
            if hold is not None:
                first_in.set()
                hold.wait(5)
            order.append(f"{name} out")

    def alone() -> None:
        with slots.alone():
            order.append("alone in")
            time.sleep(0.05)
            order.append("alone out")

    a = _in_thread(lambda: shared("a", release_first))
    assert first_in.wait(5)
    b = _in_thread(alone)
    deadline = time.monotonic() + 10
    while slots._waiting_alone == 0 and time.monotonic() < deadline:  # not a fixed sleep: a busy machine is slow
        time.sleep(0.01)
    assert slots._waiting_alone == 1  # b now waits for a; a shared check arriving after it must wait for b
    c = _in_thread(lambda: shared("c"))
    time.sleep(0.1)
    assert order == ["a in"]
    release_first.set()
    for t in (a, b, c):
        t.join(5)
    assert order == ["a in", "a out", "alone in", "alone out", "c in", "c out"]


class _NoServer:
    def __init__(self, env: dict[str, str]) -> None:
        pass

    def close(self) -> None:
        pass


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, checks_per_gpu: int, results: list[StepResult]
         ) -> tuple[StepResult, list[bool], local._Run]:
    monkeypatch.setattr(local, "ForkServer", _NoServer)
    ex = local.LocalExecutor([], 1, tmp_path, {}, 60, gate=False, checks_per_gpu=checks_per_gpu)
    run = local._Run(ex, lambda o: None)
    alone_when_called: list[bool] = []

    def fake_check(*args: Any, **kwargs: Any) -> StepResult:
        alone_when_called.append(run.slots["default"]._alone)
        return results[len(alone_when_called) - 1]

    monkeypatch.setattr(steps, "check", fake_check)
    item = Item("r1", "key", "build", WorkerJob("ref", "kernel", check_settings(ValidationSettings()), "cpu"))
    built = StepResult(WorkerResult(Verdict.CORRECT, phase_s={"compile": 1.0}), build="cached")
    out = run.check_one("default", _NoServer({}), item, built)
    return out, alone_when_called, run


def test_a_check_that_ran_out_of_memory_beside_others_is_run_again_alone(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    out, alone, run = _run(tmp_path, monkeypatch, 4, [OOM, OK])
    assert alone == [False, True]
    assert out.result.verdict == "correct"  # only the check that ran alone counts
    assert out.wall_s == 5.0 and out.result.phase_s == {"compile": 1.0, "check": 3.0, "check_shared_out_of_memory": 2.0}
    assert run.retried_alone == ["r1"]


def test_a_check_that_runs_out_of_memory_alone_keeps_its_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out, alone, _ = _run(tmp_path, monkeypatch, 4, [OOM, OOM])
    assert alone == [False, True] and out.result.verdict == "runtime_error"
    out, alone, run = _run(tmp_path, monkeypatch, 1, [OOM])  # one check per GPU: it was alone already
    assert alone == [False] and out.result.verdict == "runtime_error" and run.retried_alone == []
