"""The leaderboard as printed: which run is a problem's best, row order, every cell's text, grid cells."""

from __future__ import annotations

import dataclasses

import pytest
from test_leaderboard import out

from reporter.render.leaderboard import (
    FAST_P,
    FastCell,
    LeaderRow,
    best_per_problem,
    grid_cell,
    leaderboard,
    leaderboard_rows,
)


def test_the_first_of_equally_good_runs_stays_best() -> None:
    first, second = out("A", 1, True, 2.0), dataclasses.replace(out("A", 1, True, 2.0), run_id="second")
    assert best_per_problem([first, second])[(1, 1, "1_p.py")] is first


def test_a_later_worse_run_does_not_replace_the_best() -> None:
    good, worse = out("A", 1, True, 2.0), out("A", 1, True, 1.5)
    assert best_per_problem([good, worse])[(1, 1, "1_p.py")] is good
    assert best_per_problem([worse, good])[(1, 1, "1_p.py")] is good
    # runs of different problems never compete
    assert len(best_per_problem([good, out("A", 2, True, 0.5)])) == 2


def test_an_incorrect_runs_speedup_makes_it_no_better_than_another_incorrect_run() -> None:
    slow, fast = out("A", 1, False, 1.0), out("A", 1, False, 9.0)
    assert best_per_problem([slow, fast])[(1, 1, "1_p.py")] is slow  # first stays: neither counts
    # a correct run with unknown speedup beats an incorrect one, a counting one beats both
    unknown, counting = out("A", 1, True, None), out("A", 1, True, 0.5)
    assert best_per_problem([fast, unknown])[(1, 1, "1_p.py")] is unknown
    assert best_per_problem([unknown, counting, fast])[(1, 1, "1_p.py")] is counting


def test_rows_are_ordered_by_fast_1_share_then_geomean_then_name() -> None:
    runs = [
        out("one-of-one", 1, True, 1.5),  # fast_1 1/1, fast_2 0/1
        out("two-of-four", 1, True, 3.0), out("two-of-four", 2, True, 1.2),
        out("two-of-four", 3, False, None), out("two-of-four", 4, False, None),  # fast_1 2/4, fast_2 1/4
        out("b-slow", 1, True, 0.9),  # fast_1 0/1, geomean 0.9
        out("a-nothing", 1, False, None),  # fast_1 0/1, no geomean
        out("c-slower", 1, True, 0.5),  # fast_1 0/1, geomean 0.5
        out("a-slow", 1, True, 0.9),  # ties b-slow: by name
    ]
    assert [r.model for r in leaderboard(runs)] == ["one-of-one", "two-of-four", "a-slow", "b-slow", "c-slower",
                                                    "a-nothing"]


def test_a_row_counts_best_runs_but_medians_cover_every_run() -> None:
    runs = [out("M", 1, True, 2.0, reval=True, turns=4, tokens=100), out("M", 1, False, None, turns=8, tokens=300),
            out("M", 2, True, 0.5, turns=5, tokens=0), dataclasses.replace(out("M", 3, True, 8.0), turns=None)]
    (row,) = leaderboard(runs)
    assert (row.attempted, row.revalidated, row.correct_revalidated, row.recorded_only) == (3, 1, 1, 2)
    assert row.geomean == pytest.approx(2.0) and row.geomean_n == 3  # (2 * 0.5 * 8) ** (1/3)
    assert row.median_turns == 5.0  # 4, 8, 5: the run without a turn count is left out
    assert row.median_tokens == 300.0  # 100, 300 and 1000 (the default): 0 tokens is "not counted"
    assert {p: row.fast[p] for p in (0.0, 1.0, 2.0)} == {0.0: (3, 3), 1.0: (2, 3), 2.0: (1, 3)}


def test_printed_row() -> None:
    runs = [out("M", 1, True, 2.0, reval=True, turns=4, tokens=1234), out("M", 2, True, 0.5, turns=5, tokens=2000),
            out("M", 3, False, None, turns=7, tokens=None)]
    (row,) = leaderboard_rows(runs)
    shares = {0.0: (2, 3), 0.5: (1, 3), 0.8: (1, 3), 1.0: (1, 3), 1.5: (1, 3), 2.0: (0, 3)}
    assert row == LeaderRow(
        model="M", attempted=3, compiled=3, correct_recorded=2, revalidated_sort=1,
        revalidated_shown="1 of 1 re-validated",
        fast=tuple(FastCell(f"{n / d:.6f}", f"{n / d:.2f}" if n else "0", f"{n}/{d}") for n, d in
                   (shares[p] for p in FAST_P)),
        geomean_sort="1.000000", geomean_shown="1.00x", geomean_n="n=2", median_turns="5.0", median_tokens="1,617",
        recorded_only=2, suspect=0)


def test_printed_row_without_revalidation_or_speedups() -> None:
    (row,) = leaderboard_rows([out("N", 1, False, None, tokens=None), dataclasses.replace(
        out("N", 2, True, 2.0), suspect=True)])
    assert (row.revalidated_sort, row.revalidated_shown) == (-1, "— (none re-validated)")
    assert (row.geomean_sort, row.geomean_shown, row.geomean_n) == ("", "—", "n=0")
    assert row.fast[FAST_P.index(1.0)] == FastCell("0.000000", "0", "0/2") and row.suspect == 1
    assert row.median_tokens == "1,000"
    (row,) = leaderboard_rows([dataclasses.replace(out("N", 1, True, 2.0, tokens=0), turns=None)])
    assert (row.median_turns, row.median_tokens) == ("—", "—")  # nothing recorded: unknown, not 0


def test_grid_cells() -> None:
    fast = grid_cell(out("A", 1, True, 2.5, reval=True))
    assert (fast.css, fast.title, fast.shown, fast.flagged) == ("s-faster", "correct and faster", "2.50x", False)
    slow = grid_cell(dataclasses.replace(out("A", 1, True, 0.5), flagged=True))
    assert (slow.css, slow.title, slow.shown, slow.flagged) == (
        "s-slower recorded", "correct but slower · flagged · not re-validated", "0.50x", True)
    broken = grid_cell(out("A", 1, None, None, compiled=False, verdict="compile_error", reval=False))
    assert (broken.css, broken.title, broken.shown) == ("s-compile-error", "failed to compile", "failed to compile")
    assert grid_cell(out("A", 1, True, None)).shown == "correct, speedup unknown"
    assert grid_cell(out("A", 1, True, 2.0)).href == "runs/x.html"


@pytest.mark.parametrize("verdict, state", [
    ("runtime_error", "runtime_error"), ("incorrect", "incorrect"), ("timeout", "runtime_error"),
    ("crashed", "runtime_error"), ("unknown", "unknown"), ("not_evaluated", "unknown"), ("partial", "unknown"),
    ("something new", "incorrect"),
])
def test_states_of_runs_that_are_not_correct(verdict: str, state: str) -> None:
    assert out("A", 1, False, None, verdict=verdict).state == state
    assert out("A", 1, None, None, verdict=verdict).state == state
