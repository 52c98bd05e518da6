"""The validation pipeline on CPU: streaming results, resuming, the build cache and the timing gate."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import KERNELS, SIGMOID_NO_JITTER, kernel_run
from reporter.collect import collect
from reporter.core import cache
from reporter.core.records import ValidationSettings
from reporter.validate import buildcache, manifest, validate_runs
from reporter.validate.gate import CompileGuard, timing_window
from reporter.validate.recorder import RunStats

pytest.importorskip("torch")

SETTINGS = ValidationSettings(nominal_trials=2, jitter_trials=2, perf_trials=3, warmup=1, timeout_s=60, time_cap_s=0.05)


@pytest.fixture
def build_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "builds"
    monkeypatch.setenv("REPORTER_BUILD_CACHE", str(root))
    return root


@pytest.mark.slow  # minutes of builds on two cores: CI runs it (-m slow), the README's command leaves it out
def test_first_result_is_written_before_the_last_compile_ends(tmp_path: Path, build_root: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # One quick kernel and one whose build takes seconds: the quick one is checked and written while
    # the slow one still compiles (compiling everything first would write nothing until both built).
    # The slow build is held until the quick result is stored, so a busy machine cannot reorder them;
    # a pipeline that compiled everything first would never store it, and the hold runs out (120 s).
    kernel_run(tmp_path, "correct", (KERNELS / "correct.py").read_text())
    kernel_run(tmp_path, "slow_build", (KERNELS / "slow_build.py").read_text())
    stored = tmp_path / "quick-result-stored"
    monkeypatch.setenv("SLOW_BUILD_UNTIL", str(stored))
    real_store = manifest.store

    def store(data: Path, key: str, result, *args, **kwargs):  # type: ignore[no-untyped-def]
        path = real_store(data, key, result, *args, **kwargs)
        # the slow build is released a second later: the recorder notes the store's time as store returns,
        # and releasing it at once let the slow build's end be recorded first (7 ms apart, once, under load)
        threading.Timer(1.0, stored.touch).start()
        return path

    monkeypatch.setattr(manifest, "store", store)
    stats: list[RunStats] = []
    results = validate_runs(tmp_path, collect(tmp_path).runs, SETTINGS, device="cpu", jobs=2, stats=stats)
    assert {k: r.verdict for k, (r, _) in results.items()} == {"correct": "correct", "slow_build": "correct"}
    run = stats[0]
    last_compile_end = max(o.compiled_at for o in run.outcomes)
    slow = next(o for o in run.outcomes if o.item.run_id == "slow_build")
    assert slow.compile_s >= 3.5 and slow.compiled_at == last_compile_end
    assert run.stored_at["correct"] < last_compile_end
    assert run.timing_windows >= 2  # each check's timing ran inside the gate
    assert cache.lookup(tmp_path, next(o.item.key for o in run.outcomes if o.item.run_id == "correct")) is not None


@pytest.mark.slow  # minutes of builds on two cores: CI runs it (-m slow), the README's command leaves it out
def test_interrupted_run_resumes_where_it_stopped(tmp_path: Path, build_root: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("correct", "wrong", "slow_build"):
        kernel_run(tmp_path, name, (KERNELS / f"{name}.py").read_text())
    # whichever result is stored first, the interruption follows it: the slow build need not be 4 s slow
    monkeypatch.setenv("SLOW_BUILD_S", "1")
    real_store, stored = manifest.store, []

    def store_then_interrupt(*args, **kwargs):  # type: ignore[no-untyped-def]
        path = real_store(*args, **kwargs)
        stored.append(path)
        raise KeyboardInterrupt  # the user presses Ctrl-C right after the first result is written

    monkeypatch.setattr(manifest, "store", store_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        validate_runs(tmp_path, collect(tmp_path).runs, SETTINGS, device="cpu", jobs=3)
    monkeypatch.setattr(manifest, "store", real_store)
    assert len(stored) == 1
    stats: list[RunStats] = []
    again = validate_runs(tmp_path, collect(tmp_path).runs, SETTINGS, device="cpu", jobs=3, stats=stats)
    assert sum(cached for _, cached in again.values()) == 1
    assert sorted(again) == ["correct", "slow_build", "wrong"]
    assert len(stats[0].outcomes) == 2


@pytest.mark.slow  # minutes of builds on two cores: CI runs it (-m slow), the README's command leaves it out
def test_same_kernel_is_built_once_and_a_failed_acceleration_is_rebuilt_plainly(tmp_path: Path, build_root: Path) -> None:
    kernel = (KERNELS / "correct.py").read_text()
    kernel_run(tmp_path, "a", kernel)
    kernel_run(tmp_path, "b", kernel, reference=(KERNELS / "reference.py").read_text() + "\n# another problem\n")
    kernel_run(tmp_path, "accel_fails", (KERNELS / "accel_fails.py").read_text())
    stats: list[RunStats] = []
    results = validate_runs(tmp_path, collect(tmp_path).runs, SETTINGS, device="cpu", jobs=3, stats=stats)
    builds = {o.item.run_id: o.build for o in stats[0].outcomes}
    assert sorted([builds["a"], builds["b"]]) == ["accelerated", "cached"]
    assert builds["accel_fails"] == "plain-retry"
    assert results["accel_fails"][0].verdict == "correct"
    # A forced re-measure (another run, same machine) loads every build instead of compiling it.
    stats.clear()
    validate_runs(tmp_path, collect(tmp_path).runs, SETTINGS, device="cpu", force=True, stats=stats)
    assert {o.build for o in stats[0].outcomes} == {"cached"}


@pytest.mark.slow  # minutes of builds on two cores: CI runs it (-m slow), the README's command leaves it out
@pytest.mark.parametrize("jobs", [1, 4])
def test_one_kernel_two_references_get_their_own_checks(tmp_path: Path, build_root: Path, jobs: int) -> None:
    # One kernel (one build key) checked against two references at once: each check must see its own
    # job. A shared check folder gave both the wrong verdict, or run B the jittered trials of run A.
    kernel = (KERNELS / "correct.py").read_text()
    assert "torch.relu" in (KERNELS / "reference.py").read_text() and "sigmoid" in SIGMOID_NO_JITTER
    kernel_run(tmp_path, "a_right", kernel)
    kernel_run(tmp_path, "b_wrong", kernel, reference=SIGMOID_NO_JITTER)
    results = validate_runs(tmp_path, collect(tmp_path).runs, SETTINGS, device="cpu", jobs=jobs)
    a, b = results["a_right"][0], results["b_wrong"][0]
    assert (a.verdict, b.verdict) == ("correct", "incorrect"), (a.reason, b.reason)
    assert [t.jittered for t in a.trials] == [False, False, True, True]
    assert b.reason.startswith("trial 0 (nominal shapes) failed") and [t.jittered for t in b.trials] == [False, False]
    # ...and what is cached under each content key is that run's own result
    for run in collect(tmp_path).runs:
        key = cache.content_key(run.trace.final_kernel.source, run.trace.reference_source)  # type: ignore[union-attr]
        hit = cache.lookup(tmp_path, key)
        assert hit is not None and hit[0].verdict == results[run.run_id][0].verdict


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_compiles_stop_for_a_timing_window(tmp_path: Path) -> None:
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
    guard = CompileGuard(tmp_path / "gate")
    try:
        guard.register(busy.pid)
        time.sleep(0.05)
        assert _state(busy.pid) in "RS"
        with timing_window(str(tmp_path / "gate")):
            assert _state(busy.pid) == "T"  # stopped for the whole window
        deadline = time.monotonic() + 2
        while _state(busy.pid) == "T" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _state(busy.pid) in "RS"
        assert guard.windows == 1 and guard.paused_s > 0
    finally:
        guard.close()
        busy.kill()
        busy.wait()


def test_timing_window_does_not_wait_without_a_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without a gate folder the window neither locks nor polls (measured by what it calls, not by the clock:
    # a 50 ms bound failed on a busy machine).
    from reporter.validate import gate
    monkeypatch.delenv("REPORTER_GATE_DIR", raising=False)

    def forbidden(*args: object) -> None:
        raise AssertionError("timing_window waited without a gate")

    monkeypatch.setattr(gate.time, "sleep", forbidden)
    monkeypatch.setattr(gate.fcntl, "flock", forbidden)
    with timing_window():
        pass


def test_compile_pool_is_sized_from_measured_builds(tmp_path: Path) -> None:
    # 16 cores, a build keeping 80/58 = 1.38 cores busy: 12 builds fill the machine, one more covers links.
    assert buildcache.pool_size(16, 58.0, 80.0) == 13
    assert buildcache.pool_size(2, 10.0, 5.0) == 3
    # 30 builds: two even waves of 15 rather than 13 + 13 + a last wave of 4 that leaves cores idle
    assert buildcache.pool_size(16, 58.0, 80.0, builds=30) == 15
    assert buildcache.pool_size(16, 58.0, 80.0, builds=5) == 5
    assert buildcache.measured_cost(tmp_path) == (buildcache.PRIOR_BUILD_WALL_S, buildcache.PRIOR_BUILD_CPU_S, 0)
    for key, wall, cpu in (("a", 40.0, 100.0), ("b", 50.0, 90.0), ("c", 60.0, 120.0), ("d", 0.2, 0.1)):
        (tmp_path / key).mkdir()
        buildcache.mark_built(tmp_path, key, {}, wall, cpu)
    assert buildcache.measured_cost(tmp_path) == (50.0, 100.0, 3)


def test_the_progress_line_gives_a_checks_phases_in_the_order_they_ran() -> None:
    from reporter.validate.recorder import phases_text
    got = phases_text({"graph": 0.31, "load": 0.52, "compile": 40.0, "device": 1.26, "correctness": 1.04, "jitter": 0.2,
                       "exclusive": 1.94, "start": 0.04})
    assert got == ": start 0.0, load 0.5, correctness 1.0, device 1.3, jitter 0.2, graph 0.3; the GPU to itself 1.9"
    assert phases_text({"compile": 40.0}) == "" and phases_text({}) == ""


def test_an_interrupted_call_stores_no_verdict_for_the_workers_it_killed(tmp_path: Path, build_root: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # Ctrl-C (or a deadline's SIGINT) while a build is running: the executor kills its workers, and the killed
    # build must not be stored as a "crashed" kernel (an H200 call's deadline stored 18 such verdicts).
    kernel_run(tmp_path, "slow_build", (KERNELS / "slow_build.py").read_text())
    monkeypatch.setenv("SLOW_BUILD_S", "30")
    from reporter.validate.executors import local
    real_wait, calls = local.wait, []

    def wait_then_interrupt(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) > 20:  # ~2 s into the build (0.1 s a call)
            raise KeyboardInterrupt
        return real_wait(*args, **kwargs)
    monkeypatch.setattr(local, "wait", wait_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        validate_runs(tmp_path, collect(tmp_path).runs, SETTINGS, device="cpu", jobs=1)
    time.sleep(1.0)  # a worker thread that outlived the call would store its outcome now
    assert not list((tmp_path / "validation").glob("*/*.json"))
