"""Every-sample figures at their edges (issue 32's blind round: smp-*, res-* survivors): a 1.00x sample is not fast,
a suspect sample never passes nor enters best-of-k, pass@k is over the board's n, only counting samples count as
audited; the second table's dashes, caveats and audited share; the frontier's ties. Figures counted by hand."""

from __future__ import annotations

from typing import Any

import pytest
from test_samples import RUNS, _figures, _run

from reporter import aggregates as ag
from reporter.aggregates.samples import sample_rows
from reporter.core.audit import PageOptions
from reporter.frames import from_records
from reporter.render.research import frontier, sample_board


def _rows(runs: list[dict[str, Any]], n: int) -> dict[tuple[object, ...], dict[str, Any]]:
    scoped, _ = ag.scopes(from_records(runs), bases=(ag.DEFAULT_BASIS,))[ag.DEFAULT_BASIS]
    return sample_rows(scoped, ag.LEADERBOARD_KEYS, {("kb", 1, "c", "m"): n})


def test_a_sample_of_exactly_1x_is_not_fast_and_a_suspect_one_never_passes() -> None:
    # problem 1: a counting 1.00x and a suspect 5.0x; problem 2: a counting 2.0x; the board's n is 3
    r = _rows([_run("m", 1, 0, True, 1.0), _run("m", 1, 1, True, 5.0, suspect=True), _run("m", 2, 0, True, 2.0),
               _run("m", 2, 1, False, None)], 3)[("kb", 1, "c", "m")]
    assert r["pass@1"] == pytest.approx((1 / 2 + 1 / 2) / 3)  # the suspect sample fails; over n = 3, not the 2 attempted
    assert r["fast_1.0@1"] == pytest.approx((0 + 1 / 2) / 3)  # 1.00x is not faster than 1x
    assert r["pass@2"] == pytest.approx((1 + 1) / 3)
    # best of 2: problem 1 holds one counting 1.0 (the suspect's 5.0 is worth 0): 1.0; problem 2: 2.0
    assert r["best_of_2"] == pytest.approx((1.0 * 2.0) ** 0.5) and r["best_of_2_n"] == 2


def test_only_counting_samples_count_as_audited() -> None:
    r = _rows([_run("m", 1, 0, True, 2.0, review="clean"), _run("m", 1, 1, False, None, review="harness_bug"),
               _run("m", 2, 0, True, 3.0)], 2)[("kb", 1, "c", "m")]
    assert (r["counting"], r["audited"], r["reviewed"]) == (2, 1, 2)


def test_the_second_table_shows_dashes_for_one_sample_the_token_caveat_and_audited_fast_over_n() -> None:
    (runs, table), _ = _figures()
    board, _ = sample_board(table, runs, ag.LEADERBOARD_KEYS, PageOptions(3, ()), "device")
    rows = {r.model: r for r in board.rows}
    a, b = rows["a"], rows["b"]
    assert [c.shown for c in b.cells] == ["1.00", "—", "1.00", "—", "—"]  # one sample each: pass@k, fast@k, best-of-k dashed
    assert "(4 of 5 samples recorded tokens; the others are left out)" in a.tokens.title  # the 0 is no count
    assert "(1 of 2 samples recorded tokens" in b.tokens.title  # b's flagged 9999 is no count either
    # a: fast_1 counting audited runs only: problem 1's reviewed 2.0x, of the board's n = 2 (not of a's 3 counting runs)
    assert (a.fast_audited.shown, a.fast_audited.title.split(":")[0]) == ("0.50", "1/2")
    assert len(RUNS) == 7  # the runs the counts above were made from (test_samples.RUNS)


def test_the_frontier_keeps_one_of_two_models_with_the_same_tokens_the_better_one() -> None:
    assert [p[0] for p in frontier([("x", 100.0, 0.5), ("y", 100.0, 0.8), ("z", 50.0, 0.2)])] == ["z", "y"]


def test_a_weak_check_win_is_worth_nothing_in_best_of_k() -> None:
    # problem 1: a counting 1.5x and a correct 5.0x on a problem whose check accepts a wrong answer (no win here)
    r = _rows([_run("m", 1, 0, True, 1.5), _run("m", 1, 1, True, 5.0, weak_check="zeros")], 1)[("kb", 1, "c", "m")]
    assert r["best_of_2"] == pytest.approx(1.5) and r["best_of_1"] == pytest.approx(0.75)  # (1.5 + 0) / 2
