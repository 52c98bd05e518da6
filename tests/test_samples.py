"""Every sample counted (issue 37, items 2-4): pass@k and fast_1@k by the unbiased estimator, best-of-k, tokens per
correct and per fast kernel, dollars only from the user's prices, audited counts and the "audit pending" rule."""

from __future__ import annotations

import math
from typing import Any

import pytest

from reporter import aggregates as ag
from reporter.aggregates.samples import best_of_k, pass_at_k, sample_rows
from reporter.core.audit import PageOptions
from reporter.frames import from_records
from reporter.render.research import frontier, sample_board


def test_the_estimators_against_hand_counts() -> None:
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 3) == pytest.approx(1 - 1 / 10)  # C(3,3)/C(5,3)
    assert pass_at_k(4, 0, 2) == 0.0 and pass_at_k(4, 3, 2) == 1.0
    # maxima of the six pairs of (0, 1, 2, 3): 1, 2, 3, 2, 3, 3
    assert best_of_k([3.0, 0.0, 2.0, 1.0], 2) == pytest.approx(14 / 6)
    assert best_of_k([3.0, 0.0, 2.0, 1.0], 4) == 3.0 and best_of_k([3.0, 0.0, 2.0, 1.0], 1) == pytest.approx(1.5)
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def _run(model: str, pid: int, sample: int, correct: bool, speedup: float | None, tokens: int | None = None,
         review: str | None = None, **more: Any) -> dict[str, Any]:
    return {"run_id": f"{model}/p{pid}-s{sample}", "benchmark": "kb", "configuration": "c", "level": 1, "problem_id": pid,
            "problem": f"{pid}_P.py", "model": model, "sample": sample, "complete": True, "submitted": True,
            "correct": correct, "recorded_correct": correct, "verdict": "correct" if correct else "incorrect",
            "speedup": speedup if correct else None, "recorded_speedup": speedup, "speedup_source": "recorded",
            "tokens_total": tokens, "review": review, "suspect": False, **more}


# model a: problem 1 three samples (2 correct: 2.0x and 0.5x), problem 2 two samples (1 correct, 1.5x)
# model b: one sample per problem, both correct and fast; one flagged token count, one reviewed
RUNS = [_run("a", 1, 0, True, 2.0, 1000, review="clean"), _run("a", 1, 1, True, 0.5, 3000), _run("a", 1, 2, False, None, 2000),
        _run("a", 2, 0, True, 1.5, 4000), _run("a", 2, 1, False, None, 0),
        _run("b", 1, 0, True, 3.0, 500, review="clean"), _run("b", 2, 0, True, 4.0, 9999, flag_fields="run.tokens_total")]


def _figures() -> tuple[Any, dict[tuple[object, ...], dict[str, Any]]]:
    runs, _ = ag.scopes(from_records(RUNS), bases=(ag.DEFAULT_BASIS,))[ag.DEFAULT_BASIS]
    table = ag.board_table(runs, None, ag.LEADERBOARD_KEYS)
    return (runs, table), sample_rows(runs, ag.LEADERBOARD_KEYS, {("kb", 1, "c", m): 2 for m in "ab"})


def test_pass_at_k_counts_every_sample_up_to_the_fewest_samples_of_a_problem() -> None:
    _, rows = _figures()
    a, b = rows[("kb", 1, "c", "a")], rows[("kb", 1, "c", "b")]
    assert (a["samples_min"], a["samples_max"], a["k_max"]) == (2, 3, 2)
    assert a["pass@1"] == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert a["pass@2"] == pytest.approx((1 + 1) / 2)  # 3 samples, 2 pass: any 2 hold one; 2 samples, 1 passes
    assert a["fast_1.0@1"] == pytest.approx((1 / 3 + 1 / 2) / 2)
    assert a["fast_1.0@2"] == pytest.approx(((1 - 1 / 3) + 1) / 2)
    # best of 2: problem 1 draws from (2.0, 0.5, 0) -> (2 + 2 + 0.5) / 3; problem 2 from (1.5, 0) -> 1.5
    assert a["best_of_2"] == pytest.approx(math.sqrt(1.5 * 1.5))
    assert (b["k_max"], "pass@2" in b) == (1, False)


def test_tokens_per_correct_and_fast_leave_out_uncounted_and_flagged_counts() -> None:
    _, rows = _figures()
    a, b = rows[("kb", 1, "c", "a")], rows[("kb", 1, "c", "b")]
    assert (a["tokens_runs"], a["tokens"], a["correct_samples"], a["fast_samples"]) == (4, 10000, 3, 2)  # the 0 is no count
    assert a["tokens_per_correct"] == pytest.approx(10000 / 3) and a["tokens_per_fast"] == 5000
    assert (b["tokens_runs"], b["tokens"], b["tokens_per_correct"]) == (1, 500, 500)  # the flagged 9999 is left out
    assert (a["counting"], a["audited"], a["fast_1.0_audited_n"]) == (3, 1, 1)


def test_dollars_only_where_priced_and_audit_pending_for_the_top_rows() -> None:
    (runs, table), _ = _figures()
    board, marks = sample_board(table, runs, ag.LEADERBOARD_KEYS, PageOptions(1, (("a", 2.0),)), "device")
    rows = {r.model: r for r in board.rows}
    assert rows["a"].dollars.shown == "$0.0067 · $0.0100" and rows["b"].dollars.shown == "—"
    assert "never guessed" in rows["b"].dollars.title
    # b ranks first (fast_1 2/2) and has one of its two counting runs reviewed: pending; a ranks second, past top 1
    assert (rows["b"].pending, rows["a"].pending) == (True, False)
    assert marks == {"b": ("audit pending", "pending"), "a": ("audited 1/3", "")}
    assert sample_board(table, runs, ag.LEADERBOARD_KEYS, PageOptions(0, ()), "device")[1]["b"] == ("audited 1/2", "")
    assert (board.repeated, board.priced, board.tokens) == (True, True, True)


def test_the_frontier_keeps_the_models_no_other_beats_on_both_axes() -> None:
    pts = [("a", 1000.0, 0.5), ("b", 500.0, 0.5), ("c", 2000.0, 0.8), ("d", 3000.0, 0.7), ("e", 100.0, 0.1)]
    assert [p[0] for p in frontier(pts)] == ["e", "b", "c"]
