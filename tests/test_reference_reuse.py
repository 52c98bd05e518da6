"""A reference timed once per problem and reused: the store's counting and drift guard, the step that times a
reference on its own before a check, and the worker using (or refusing) a stored timing, on CPU."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from conftest import KERNELS
from reporter.core.schema import (
    EXCLUSIVE,
    BasisStats,
    CheckSettings,
    GpuReading,
    ReferenceTiming,
    TimingFigures,
    Verdict,
    WorkerJob,
    WorkerResult,
)
from reporter.validate import refstore, steps
from reporter.validate.refstore import ReferenceStore, Stored, moved, shared_problems, store_key

SETTINGS = CheckSettings(nominal_trials=2, jitter_trials=0, perf_trials=3, warmup=1, time_cap_s=0.05)
REFERENCE = (KERNELS / "reference.py").read_text()
JOB = WorkerJob(REFERENCE, (KERNELS / "correct.py").read_text(), SETTINGS, "cpu")


def figures(ms: float) -> TimingFigures:
    return TimingFigures(device=BasisStats(median_ms=ms, min_ms=ms, max_ms=ms, n=30))


def timing(ms: float = 1.0, clock: int = 1980, at: str = "2026-12-01T10:00:00Z") -> ReferenceTiming:
    return ReferenceTiming(taken_at=at, gpu="GPU-1", torch="2.11.0", input_shapes=("8x16x64",),
                           reading=GpuReading(clock, 40), figures=figures(ms))


def test_the_drift_guard_names_what_moved() -> None:
    then = GpuReading(1980, 40)
    assert moved(then, GpuReading(1900, 40)) == "the SM clock moved from 1980 to 1900 MHz"  # 4% > 2%
    assert moved(then, GpuReading(1960, 49)) is None  # 1% and 9 degrees: within the bounds
    assert moved(then, GpuReading(1980, 51)) == "the GPU's temperature moved from 40 to 51 °C"
    assert moved(then, None) is None and moved(GpuReading(), GpuReading(1500, 90)) is None  # nothing to compare


def test_a_store_key_is_one_problem_precision_settings_and_gpu() -> None:
    key = store_key(JOB, "0")
    assert key == store_key(replace(JOB, kernel="another kernel of the problem"), "0")
    assert len({key, store_key(JOB, "1"), store_key(replace(JOB, precision="fp16"), "0"),
                store_key(replace(JOB, settings=replace(SETTINGS, seed=7)), "0"),
                store_key(replace(JOB, reference=REFERENCE + "\n# another problem\n"), "0")}) == 5
    assert shared_problems([JOB, replace(JOB, kernel="b"), replace(JOB, precision="fp16")]) == {refstore.problem_key(JOB)}


def test_a_stored_timing_is_counted_and_taken_again_after_its_uses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(refstore, "REFERENCE_RETIME_AFTER", 2)
    store = ReferenceStore(tmp_path, "0")
    stored = store.keep("k", timing(), None)
    assert store.due(stored) is None and stored.timing.replaced is None
    assert store.use("k", stored).uses == 0  # the first check to use it
    again = store.read("k")
    assert again is not None and store.use("k", again).uses == 1
    again = store.read("k")
    assert again is not None and store.due(again) == "2 checks used it"
    new = store.keep("k", timing(1.05, at="2026-12-01T11:00:00Z"), again)
    assert new.timing.uses == 0
    assert new.timing.replaced == "taken again (2 checks used it): device time +5.0% from the timing of 2026-12-01T10:00:00Z"
    store.retime("k", "the SM clock moved from 1980 to 1700 MHz")
    assert store.due(store.read("k")) == "the SM clock moved from 1980 to 1700 MHz"


def _fake_steps(monkeypatch: pytest.MonkeyPatch, check_reading: GpuReading) -> list[tuple[str, WorkerJob]]:
    """steps' worker children replaced: a reference timed at 1980 MHz; a check that uses what it is given,
    unless `check_reading` moved since."""
    ran: list[tuple[str, WorkerJob]] = []

    def attempt(server: object, mode: str, job: WorkerJob, *args: object) -> tuple[WorkerResult, float]:
        ran.append((mode, job))
        if mode == "reference":
            took = timing(at=f"2026-12-01T1{len(ran)}:00:00Z")
            return WorkerResult(Verdict.CORRECT, reference_timing=took.figures, reference_from=replace(took, figures=None),
                                phase_s={EXCLUSIVE: 1.0}), 2.0
        st = job.stored_reference
        why = moved(st.reading, check_reading) if st else None
        return WorkerResult(Verdict.CORRECT, phase_s={EXCLUSIVE: 0.5}, gpu_reading=check_reading, reference_not_reused=why,
                            reference_from=replace(st, figures=None) if st and not why else None), 3.0
    monkeypatch.setattr(steps, "_attempt", attempt)
    return ran


def _check(tmp_path: Path, store: ReferenceStore, shared: bool) -> steps.StepResult:
    return steps.check(None, JOB, tmp_path, "build", {}, tmp_path, 60.0, None, refs=store, shared=shared)  # type: ignore[arg-type]


def test_a_shared_problem_times_its_reference_once_in_a_worker_of_its_own(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    ran = _fake_steps(monkeypatch, GpuReading(1980, 41))
    store = ReferenceStore(tmp_path, "0")
    alone = _check(tmp_path, store, shared=False)  # one kernel of its problem, nothing stored: timed beside it
    assert [m for m, _ in ran] == ["check"] and ran[0][1].stored_reference is None and alone.cpu_s == 3.0
    first = _check(tmp_path, store, shared=True)
    assert [m for m, _ in ran[1:]] == ["reference", "check"]
    handed = ran[2][1].stored_reference
    assert handed is not None and handed.uses == 0 and handed.figures == figures(1.0)
    assert first.result.phase_s[EXCLUSIVE] == 1.5 and "reference" in first.result.phase_s and first.cpu_s == 5.0
    _check(tmp_path, store, shared=False)  # stored now: a later call's single kernel reuses it too
    assert [m for m, _ in ran[3:]] == ["check"] and ran[3][1].stored_reference.uses == 1  # type: ignore[union-attr]


def test_a_check_that_finds_the_clock_moved_has_the_next_one_time_it_again(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    ran = _fake_steps(monkeypatch, GpuReading(1700, 41))
    store = ReferenceStore(tmp_path, "0")
    out = _check(tmp_path, store, shared=True)
    assert out.result.reference_not_reused == "the SM clock moved from 1980 to 1700 MHz"
    _check(tmp_path, store, shared=True)
    assert [m for m, _ in ran] == ["reference", "check", "reference", "check"]
    again = ran[3][1].stored_reference
    assert again is not None and again.replaced is not None
    assert again.replaced.startswith("taken again (the SM clock moved from 1980 to 1700 MHz): device time +0.0% from")


# The worker, in this process on CPU ---------------------------------------------------------------------

def _run(tmp_path: Path, mode: str, job: WorkerJob) -> WorkerResult:
    from reporter.validate import worker
    (tmp_path / "job.json").write_text(job.to_json(), encoding="utf-8")
    assert worker.main([mode, str(tmp_path)]) == 0
    return WorkerResult.from_json((tmp_path / f"{mode}.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def taken(tmp_path_factory: pytest.TempPathFactory) -> WorkerResult:
    pytest.importorskip("torch")
    return _run(tmp_path_factory.mktemp("reference"), "reference", JOB)


def test_the_reference_mode_times_the_reference_alone(taken: WorkerResult) -> None:
    import torch
    assert (taken.verdict, taken.reference_timing is not None, taken.kernel_timing) == (Verdict.CORRECT, True, None)
    assert taken.reference_timing.wall is not None  # type: ignore[union-attr]
    ref = taken.reference_from
    assert ref is not None and (ref.gpu, ref.torch, ref.input_shapes, ref.uses) == ("cpu", torch.__version__, ("8x16x64",), 0)


def test_a_check_uses_a_stored_timing_that_fits(tmp_path: Path, taken: WorkerResult) -> None:
    assert taken.reference_from is not None
    stored = replace(taken.reference_from, figures=taken.reference_timing, uses=3)
    out = _run(tmp_path, "check", replace(JOB, stored_reference=stored))
    # (the reason may add "speedup ... review by hand": CPU timings of two processes say nothing here)
    assert out.verdict == Verdict.CORRECT and out.reason.startswith("all 2 trials passed")
    assert out.reference_timing == taken.reference_timing  # the stored figures, not a new timing
    assert out.reference_from == replace(stored, figures=None) and out.reference_not_reused is None
    assert out.kernel_timing is not None and out.kernel_timing.wall is not None


def test_a_check_times_the_reference_itself_when_the_stored_shapes_differ(tmp_path: Path, taken: WorkerResult) -> None:
    assert taken.reference_from is not None
    stored = replace(taken.reference_from, figures=taken.reference_timing, input_shapes=("4x4",))
    out = _run(tmp_path, "check", replace(JOB, stored_reference=stored))
    assert out.reference_not_reused == "it was taken at other input shapes (4x4)"
    assert out.reference_from is None and out.reference_timing is not None and out.reference_timing != taken.reference_timing


def test_stored_records_read_back_whole(tmp_path: Path) -> None:
    store = ReferenceStore(tmp_path, "0")
    store.write("k", Stored(timing(), retime="why"))
    assert store.read("k") == Stored(timing(), retime="why")
    (tmp_path / refstore.FOLDER / "k.json").write_text("{}", encoding="utf-8")
    assert store.read("k") is None  # unreadable: the reference is timed again, never guessed


def test_the_run_page_says_which_reference_timing_the_speedup_used() -> None:
    from reporter.core.records import measured
    from reporter.render.timing_view import reference_line

    def page(**kw: object) -> str:
        return reference_line(measured(WorkerResult(Verdict.CORRECT, **kw), kernel_sha256="k", reference_sha256="r",  # type: ignore[arg-type]
                                       settings={}))
    assert page() == ""  # timed in the check, interleaved with the kernel: the method line says so
    used = replace(timing(), figures=None, uses=3)
    assert page(reference_from=used) == (
        "The reference's timing was taken on its own at 2026-12-01T10:00:00Z, in a worker that ran no submission, on this "
        "GPU (SM clock 1980 MHz, 40 °C), and reused: used by 3 checks before this one.")
    again = replace(used, uses=0, replaced="taken again (20 checks used it): device time +0.4% from the timing of T")
    assert page(reference_from=again).endswith("the first check to use it. It replaced an earlier timing: taken again "
                                               "(20 checks used it): device time +0.4% from the timing of T.")
    assert page(reference_not_reused="the SM clock moved from 1980 to 1700 MHz since it was taken at T") == (
        "A stored timing of the reference was not used (the SM clock moved from 1980 to 1700 MHz since it was taken at T): "
        "the reference was timed here.")
