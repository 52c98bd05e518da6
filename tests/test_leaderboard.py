"""Leaderboard arithmetic on a small hand-made set: denominators, geomean over correct runs only."""

from __future__ import annotations

import math

import pytest

from reporter.render.leaderboard import Outcome, best_per_problem, fast_p, geomean_speedup, leaderboard


def out(model: str, pid: int, correct: bool | None, speedup: float | None, *, reval: bool | None = None,
        compiled: bool = True, submitted: bool = True, verdict: str = "", tokens: int | None = 1000, turns: int = 3) -> Outcome:
    return Outcome(run_id=f"{model}-{pid}-{speedup}", href="runs/x.html", model=model, group=("c", "v"), problem=(1, pid, f"{pid}_p.py"),
                   recorded_correct=correct, revalidated_correct=reval, compiled=compiled, submitted=submitted,
                   speedup=speedup, speedup_source="re-validated" if reval is not None else "recorded",
                   kernel_ms=None, ref_ms=None, turns=turns, tokens=tokens, flagged=False,
                   verdict=verdict or ("correct" if correct else "incorrect"))


SET = [
    out("A", 1, True, 2.0), out("A", 2, True, 0.5), out("A", 3, False, 9.0),  # wrong but "fast": never counts
    out("A", 4, None, None, compiled=False, verdict="compile_error"), out("A", 5, None, None, submitted=False, verdict="no_submission"),
    out("B", 1, True, 1.0), out("B", 2, True, 1.2, reval=False),  # the harness said correct, our re-validation did not
    out("B", 2, True, 1.1, reval=True), out("B", 3, True, 4.0, tokens=0),
]


def test_fast_p_divides_by_all_attempted_problems() -> None:
    a = [o for o in SET if o.model == "A"]
    assert fast_p(a, 0.0) == (2, 5)
    assert fast_p(a, 1.0) == (1, 5)  # strictly greater than p
    assert fast_p(a, 2.0) == (0, 5)


def test_geomean_over_correct_runs_only() -> None:
    a = [o for o in SET if o.model == "A"]
    gm, n = geomean_speedup(a)
    assert n == 2 and gm == pytest.approx(1.0)  # sqrt(2.0 * 0.5); the incorrect 9x is left out
    assert geomean_speedup([out("C", 1, False, 3.0)]) == (None, 0)


def test_best_run_per_problem_and_revalidation_wins_over_the_record() -> None:
    b = [o for o in SET if o.model == "B"]
    best = best_per_problem(b)
    assert len(best) == 3 and best[(1, 2, "2_p.py")].speedup == 1.1  # the 1.2x run failed our re-validation
    (row_a,) = [r for r in leaderboard(SET) if r.model == "A"]
    (row_b,) = [r for r in leaderboard(SET) if r.model == "B"]
    assert (row_a.attempted, row_a.compiled, row_a.correct_recorded, row_a.revalidated) == (5, 4, 2, 0)
    assert (row_b.attempted, row_b.correct_recorded, row_b.correct_revalidated, row_b.revalidated) == (3, 3, 1, 1)
    assert row_b.fast[1.0] == (2, 3)
    assert row_b.geomean == pytest.approx(math.exp((math.log(1.0) + math.log(1.1) + math.log(4.0)) / 3))
    assert row_b.median_tokens == 1000.0  # the run that recorded 0 tokens is left out
    assert [r.model for r in leaderboard(SET)] == ["B", "A"]  # ordered by fast_1


def test_grid_states() -> None:
    assert out("A", 1, True, 2.0).state == "faster"
    assert out("A", 1, True, 1.0).state == "slower"
    assert out("A", 1, True, 2.0, reval=False).state == "incorrect"
    assert out("A", 1, None, None, compiled=False, verdict="compile_error").state == "compile_error"
    assert out("A", 1, None, None, submitted=False).state == "no_submission"


def test_suspect_runs_do_not_count_but_stay_in_the_denominator() -> None:
    import dataclasses
    clean, cheat = out("S", 1, True, 2.0), dataclasses.replace(out("S", 2, True, 3.0), suspect=True)
    assert fast_p([clean, cheat], 1.0) == (1, 2)
    assert geomean_speedup([clean, cheat]) == (pytest.approx(2.0), 1)
    assert cheat.state == "suspect" and not cheat.counts
    (row,) = leaderboard([clean, cheat])
    assert row.suspect == 1 and row.fast[1.0] == (1, 2)
    # A clean run of the same problem beats a faster suspect one as "best".
    slow_clean = out("S", 2, True, 1.5)
    assert best_per_problem([cheat, slow_clean])[(1, 2, "2_p.py")] is slow_clean


@pytest.mark.parametrize("bad", [float("inf"), float("nan"), -2.0])
def test_a_speedup_that_is_not_a_real_number_never_counts(bad: float) -> None:
    runs = [out("N", 1, True, 2.0), out("N", 2, True, bad)]
    assert fast_p(runs, 1.0) == (1, 2)
    gm, n = geomean_speedup(runs)
    assert n == 1 and gm is not None and math.isfinite(gm)
    from reporter.render.text import speedup
    assert "inf" not in speedup(leaderboard(runs)[0].geomean) and "nan" not in speedup(gm)


def test_leaderboard_on_each_timing_basis() -> None:
    from dataclasses import replace
    host_bound = replace(out("A", 1, True, 0.1, reval=True), speedups=(("device", 0.1), ("graph", 0.2), ("wall", 0.7)))
    recorded = out("A", 2, True, 2.0)  # recorded only: one figure whatever the basis
    assert host_bound.on_basis("wall").speedup == 0.7 and host_bound.on_basis("device").speedup == 0.1
    assert recorded.on_basis("wall") is recorded
    gm = {b: geomean_speedup([host_bound.on_basis(b), recorded.on_basis(b)])[0] for b in ("device", "wall")}
    assert gm["device"] == pytest.approx(math.sqrt(0.2)) and gm["wall"] == pytest.approx(math.sqrt(1.4))
