"""Eval entries without a kernel file at their edges (issue 32's blind round: kb-* survivors): filed at the folder's
one level, never at level 0, and an entry recorded incorrect stays an attempted failure."""

from __future__ import annotations

from reporter.collect.kbgaps import attempted_failure, without_kernel
from reporter.core.vocab import RunVerdict


def test_an_entry_without_a_kernel_takes_the_folder_s_one_level() -> None:
    kernels = {(2, 1, 0), (2, 3, 0)}
    results = {(0, 7, 0): {}, (2, 1, 0): {}, (0, 3, 0): {}}  # problem 7 has no kernel; 1 and 3 have theirs
    assert without_kernel(results, kernels) == {(0, 7, 0): (2, 7, 0)}


def test_in_a_folder_of_several_levels_an_unplaced_entry_is_left_unknown() -> None:
    kernels = {(1, 1, 0), (2, 1, 0)}
    assert without_kernel({(0, 9, 0): {}, (2, 5, 0): {}}, kernels) == {(2, 5, 0): (2, 5, 0)}
    assert without_kernel({(0, 9, 0): {}}, set()) == {}  # no kernel at all: no level to file it under


def test_an_entry_recorded_incorrect_is_an_attempted_failure_not_a_missing_submission() -> None:
    trace = {"run": {"source_note": "Imported."}, "final_kernel": {"source": "x"}, "metrics": {"runtime_ms": 1.0}}
    for recorded in (RunVerdict.INCORRECT, RunVerdict.COMPILE_ERROR, RunVerdict.RUNTIME_ERROR):
        out = attempted_failure(trace, recorded)
        assert out["run"]["recorded_verdict"] == recorded and out["final_kernel"] is None and out["metrics"] == {}
    assert attempted_failure(trace, RunVerdict.CORRECT)["run"]["recorded_verdict"] == RunVerdict.NO_SUBMISSION
