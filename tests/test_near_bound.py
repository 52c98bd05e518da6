"""Our audit tries a verdict again where it passed near the tolerance's edge (issue 42, item 6): a nominal trial whose
worst value came within `AT_BOUND_BAND` of the bound brings `EXTRA_TRIALS_NEAR_BOUND` more trials on fresh seeds,
each saying so, and one that fails makes the kernel incorrect. On CPU, the worker in this process."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from test_worker_verdicts import GOES_STALE, check  # noqa: E402

from reporter.core.schema import TrialResult  # noqa: E402
from reporter.validate import worker  # noqa: E402

# The reference's answer moved by FACTOR of the fp32 tolerance (atol = rtol = 1e-4) on every value: a pass whose
# worst value sits at FACTOR of the bound, on any input.
OFF_BY = GOES_STALE.replace("        return y if self.calls <= 4 else y + 1\n",
                            "        return (y.double() + FACTOR * (1e-4 + 1e-4 * y.double().abs())).float()\n")


def off_by(tmp_path: Path, factor: float) -> dict[str, Any]:
    assert "FACTOR" in OFF_BY
    return check(tmp_path, OFF_BY.replace("FACTOR", str(factor)))


def test_a_pass_at_seven_tenths_of_the_bound_is_tried_ten_times_more(tmp_path: Path) -> None:
    out = off_by(tmp_path, 0.7)
    nominal = [t for t in out["trials"] if not t["jittered"]]
    assert out["verdict"] == "correct" and len(nominal) == 2 + 10
    assert all(0.65 < t["worst_ratio"] < 0.75 for t in nominal)  # every pass recorded with its margin
    extra = nominal[2:]
    assert {t["inputs"] for t in extra} == {"near the bound: one more seed"} and [t["index"] for t in extra] == list(range(2, 12))
    gen = random.Random(nominal[1]["seed"])  # fresh seeds, drawn from the last nominal one: a re-run draws the same
    assert [t["seed"] for t in extra] == [gen.randrange(2**31) for _ in range(10)]


def test_a_pass_far_from_the_bound_is_not(tmp_path: Path) -> None:
    out = off_by(tmp_path, 0.2)
    nominal = [t for t in out["trials"] if not t["jittered"]]
    assert out["verdict"] == "correct" and len(nominal) == 2 and all(0.15 < t["worst_ratio"] < 0.25 for t in nominal)


def test_an_extra_trial_that_fails_makes_the_kernel_incorrect(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = worker._trial

    def trial(*args: Any, **kwargs: Any) -> tuple[TrialResult, bool]:
        row, raised = real(*args, **kwargs)
        if args[4] == 5:  # the fourth extra trial: say its draw landed past the edge
            return replace(row, passed=False, problem="values differ beyond atol=0.0001, rtol=0.0001"), raised
        return row, raised
    monkeypatch.setattr(worker, "_trial", trial)
    out = off_by(tmp_path, 0.7)
    assert out["verdict"] == "incorrect"
    assert out["reason"] == "trial 5 (near the bound: one more seed, at the nominal shapes) failed: values differ beyond atol=0.0001, rtol=0.0001"
