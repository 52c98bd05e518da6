"""Records that cross a stage boundary cannot be edited after they are made: a stage that wants a
different record builds a new one (`dataclasses.replace`)."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from conftest import DATA
from reporter.collect import collect
from reporter.collect.validation import load_validations
from reporter.validate.recorder import Item, Outcome, RunStats


def _rejects(container: Any, *edits: str) -> None:
    """Every named in-place edit of `container` raises: tuples have no append/extend, views take no items."""
    for edit in edits:
        with pytest.raises((AttributeError, TypeError)):
            if edit == "setitem":
                container["new"] = 1
            elif edit == "delitem":
                del container[next(iter(container))]
            else:
                getattr(container, edit)(None)


def test_a_collected_run_cannot_be_edited() -> None:
    col = collect(DATA)
    run = next(r for r in col.runs if r.profiles and r.flags)
    for name in ("slug", "findings", "redactions", "clearance", "trace", "flags"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(run, name, getattr(run, name))
    for name in ("flags", "unknown", "findings", "attachment_errors"):
        _rejects(getattr(run, name), "append", "extend", "sort")
    _rejects(run.profiles, "setitem", "delitem", "clear", "update", "pop")
    profiled = [p.profiler for r in col.runs for p in r.profiles.values() if p.profiler is not None]
    assert profiled and all(isinstance(p.kernels, tuple) for p in profiled)
    counted = [k for r in col.runs for p in r.profiles.values() for k in p.ncu_kernels]
    assert counted and all(isinstance(k.stalls_pct, tuple) for k in counted)
    _rejects(counted[0].figures, "setitem", "clear")
    _rejects(counted[0].stalls_raw_cycles, "setitem", "clear")
    _rejects(run.redactions, "setitem", "clear", "update")
    with pytest.raises(ValidationError, match="frozen"):
        run.trace.run.model = "someone else"  # type: ignore[misc]  # the trace models are frozen pydantic models
    for seq in (run.trace.turns, run.trace.attachments, run.trace.turns[0].calls):
        _rejects(seq, "append", "extend")
    with pytest.raises(dataclasses.FrozenInstanceError):
        col.runs = ()  # type: ignore[misc]
    _rejects(col.runs, "append", "extend", "sort")
    _rejects(col.errors, "append", "extend")


def test_replace_makes_a_new_frozen_record_and_keeps_the_old() -> None:
    run = collect(DATA).runs[0]
    moved = dataclasses.replace(run, slug="elsewhere", flags=[*run.flags], redactions={"github-token": 1})
    assert run.slug != "elsewhere" and moved.slug == "elsewhere"
    assert isinstance(moved.flags, tuple) and moved.flags == run.flags
    _rejects(moved.redactions, "setitem", "clear")


def test_reading_cached_results_leaves_the_runs_as_collected(sample_data: Path) -> None:
    from reporter.collect.redact import Redactor
    runs = collect(sample_data).runs
    before = [(r.redactions, r.slug, r.findings) for r in runs]
    found, _ = load_validations(sample_data, runs, Redactor())
    cached = next(c for c in found.values() if c is not None)
    assert [(r.redactions, r.slug, r.findings) for r in runs] == before
    with pytest.raises(dataclasses.FrozenInstanceError):
        cached.result = cached.result  # type: ignore[misc]
    _rejects(cached.ncu, "setitem", "clear")
    _rejects(cached.redactions, "setitem", "clear")


def test_validation_pipeline_records_are_frozen() -> None:
    from reporter.core.schema import CheckSettings, TrialResult, Verdict, WorkerJob, WorkerResult
    from reporter.validate.steps import StepResult
    result = WorkerResult(Verdict.CORRECT, trials=(TrialResult(0, 1, False, True),))
    item = Item("run", "key", "build", WorkerJob("r", "k", CheckSettings(), "cpu"))
    outcome = Outcome(item, result)
    stats = RunStats(outcomes=(outcome,))
    step = StepResult(result, build="cached")
    for record, name in ((item, "key"), (item.job, "settings"), (item.job.settings, "seed"), (outcome, "finished_at"),
                         (stats, "wall_s"), (result, "verdict"), (step, "result")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(record, name, getattr(record, name))
    for seq in (stats.outcomes, result.trials, result.problem_names, result.dynamic_checks):
        _rejects(seq, "append")



def test_the_build_report_is_frozen(tmp_path: Path) -> None:
    from reporter.render.incremental import build_incremental
    data = tmp_path / "data"  # one sample run: the point is the report's types, not its size
    shutil.copytree(DATA / "seed-000-l2-p10", data / "seed-000-l2-p10")
    report = build_incremental(data, tmp_path / "site", jobs=1)
    assert report.committed and report.pages > 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.committed = False  # type: ignore[misc]
    for seq in (report.errors, report.digests, report.page_problems):
        _rejects(seq, "append")


def test_result_sequences_are_tuples_and_still_redacted() -> None:
    from collections import Counter

    from reporter.collect.redact import Redactor
    from reporter.core.records import ValidationResult
    from reporter.core.schema import LaunchStats, TrialResult, Verdict
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    res = ValidationResult(kernel_sha256="k", reference_sha256="r", settings={}, verdict=Verdict.CORRECT,  # type: ignore[arg-type]
                           trials=[TrialResult(0, 1, False, True, (f"8x{token}",))],
                           kernel_launches=LaunchStats(1, 2.0, kernel_names=(f"kern_{token}",)))
    assert isinstance(res.trials[0].input_shapes, tuple) and isinstance(res.kernel_launches.kernel_names, tuple)  # type: ignore[union-attr]
    counts: Counter[str] = Counter()
    clean = Redactor().result(res, counts)
    assert token not in clean.model_dump_json() and counts["github-token"] == 2
