"""Leaderboard, grid and problem aggregates on small hand-made tables, every expected value worked out by hand."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest

from reporter import aggregates as ag
from reporter.frames import from_records


def run(model: str, pid: int, correct: bool | None, speedup: float | None, *, reval: bool | None = None, level: int = 1,
        submitted: bool = True, verdict: str = "", tokens: int | None = 1000, turns: int = 3, **extra: Any) -> dict[str, Any]:
    verdict = verdict or ("correct" if (reval if reval is not None else correct) else "incorrect")
    return {"run_id": f"{model}-{level}-{pid}-{speedup}-{reval}", "benchmark": "kernelbench", "level": level,
            "problem_id": pid, "problem": f"{pid}_p.py", "model": model, "configuration": None, "complete": True,
            "submitted": submitted, "recorded_correct": correct, "revalidated_correct": reval,
            "correct": bool(reval if reval is not None else correct), "verdict": verdict,
            "compiled": None if verdict in ("not_evaluated", "no_submission") else (submitted and verdict != "compile_error"),
            "speedup": speedup, "speedup_source": None if speedup is None else ("re-validated" if reval is not None else "recorded"),
            "tokens_total": tokens, "turns": turns, "revalidated_verdict": None if reval is None else verdict, **extra}


# Model A, level 1: 5 problems attempted.
#   p1 correct 2.0x, p2 correct 0.5x, p3 incorrect "9x" (never counts), p4 compile error, p5 no submission.
# Model B, level 1: 4 problems attempted (p2 twice).
#   p1 correct 1.0x (not > 1), p2: recorded correct 1.2x but our re-validation says incorrect; a second
#   sample re-validated correct at 1.1x (the best run counts), p3 correct 4.0x, p4 correct, speedup unknown.
SET = from_records([
    run("A", 1, True, 2.0), run("A", 2, True, 0.5), run("A", 3, False, 9.0),
    run("A", 4, None, None, verdict="compile_error"), run("A", 5, None, None, submitted=False, verdict="no_submission"),
    run("B", 1, True, 1.0), run("B", 2, True, 1.2, reval=False), run("B", 2, True, 1.1, reval=True),
    run("B", 3, True, 4.0, tokens=0), run("B", 4, True, None),
    run("A", 1, True, 3.0, level=2),  # another level: its own leaderboard
])


def row(board: pd.DataFrame, model: str, level: int = 1) -> pd.Series:
    hit = board[(board["model"] == model) & (board["level"] == level)]
    assert len(hit) == 1
    return hit.iloc[0]


def test_fast_p_is_kernelbench_definition_over_all_attempted_problems() -> None:
    board = ag.leaderboard(SET)
    a, b = row(board, "A"), row(board, "B")
    assert a["attempted"] == 5 and b["attempted"] == 4
    # A: correct with speedup > p among 5 problems: p=0 -> {2.0, 0.5}; p=1 -> {2.0}; p=2 -> {} (strictly greater)
    assert (a["fast_0.0_n"], a["fast_1.0_n"], a["fast_2.0_n"]) == (2, 1, 0)
    assert a["fast_0.0"] == pytest.approx(2 / 5) and a["fast_1.0"] == pytest.approx(1 / 5)
    # B: best runs 1.0, 1.1, 4.0, unknown: p=0 -> 3 (the unknown speedup is correct but never fast); p=1 -> {1.1, 4.0}
    assert (b["fast_0.0_n"], b["fast_1.0_n"], b["fast_1.5_n"]) == (3, 2, 1)
    assert b["fast_1.0"] == pytest.approx(2 / 4)
    assert row(board, "A", 2)["attempted"] == 1 and row(board, "A", 2)["fast_2.0_n"] == 1


def test_geomean_over_correct_runs_with_a_speedup() -> None:
    board = ag.leaderboard(SET)
    a, b = row(board, "A"), row(board, "B")
    assert a["geomean"] == pytest.approx(1.0) and a["geomean_n"] == 2  # sqrt(2.0 * 0.5); the wrong 9x is left out
    assert b["geomean"] == pytest.approx(math.exp((math.log(1.0) + math.log(1.1) + math.log(4.0)) / 3)) and b["geomean_n"] == 3


def test_denominators_counts_and_compiled_needs_a_submission() -> None:
    board = ag.leaderboard(SET)
    a, b = row(board, "A"), row(board, "B")
    assert (a["submitted"], a["compiled"], a["correct"], a["correct_recorded"], a["revalidated"]) == (4, 3, 2, 2, 0)
    assert (b["correct"], b["correct_recorded"], b["correct_revalidated"], b["revalidated"]) == (4, 4, 1, 1)
    # speedups from the harness: A's p1, p2 and p3 (wrong, but its speedup is still the harness's); B's p1 and p3
    assert (a["recorded_only"], b["recorded_only"]) == (3, 2)
    assert b["median_tokens"] == 1000.0  # the run that recorded 0 tokens is left out
    assert list(board[board["level"] == 1]["model"]) == ["B", "A"]  # ordered by fast_1.0


def test_revalidated_only_and_excluded_runs() -> None:
    board = ag.leaderboard(SET, revalidated_only=True)
    assert list(board["model"]) == ["B"]
    b = row(board, "B")
    assert (b["attempted"], b["correct"], b["fast_1.0_n"]) == (1, 1, 1)  # only B p2 was re-validated: correct 1.1x
    suspect = SET.assign(suspect=SET["run_id"].str.startswith("A-1-1-2.0"))
    a = row(ag.leaderboard(suspect), "A")  # suspect runs are excluded by default
    assert (a["attempted"], a["excluded"], a["fast_0.0_n"], a["fast_1.0_n"], a["geomean_n"]) == (5, 1, 1, 0, 1)
    assert row(ag.leaderboard(suspect, exclude=None), "A")["fast_1.0_n"] == 1  # a reviewer's view: counted again
    assert dict(zip(ag.grid(suspect)["run_id"], ag.grid(suspect)["state"]))["A-1-1-2.0-None"] == "suspect"


def test_speedups_that_are_not_real_numbers_never_count() -> None:
    odd = from_records([run("C", 1, True, float("inf")), run("C", 2, True, -1.0), run("C", 3, True, float("nan"))])
    c = row(ag.leaderboard(odd), "C")
    assert (c["attempted"], c["correct"], c["fast_0.0_n"], c["geomean_n"]) == (3, 3, 0, 0)


def test_grid_states_never_call_an_unknown_speedup_slower() -> None:
    got = dict(zip(ag.grid(SET)["run_id"], ag.grid(SET)["state"]))
    assert got["A-1-1-2.0-None"] == "faster" and got["A-1-2-0.5-None"] == "slower"
    assert got["B-1-1-1.0-None"] == "slower"  # 1.0 is not faster
    assert got["B-1-4-None-None"] == "correct"
    assert got["B-1-2-1.2-False"] == "incorrect"  # our re-validation wins over the record
    assert got["A-1-4-None-None"] == "compile_error" and got["A-1-5-None-None"] == "no_submission"
    table = ag.grid_table(SET)
    assert table.loc[("kernelbench", 1, 2, "2_p.py"), "B"] == pytest.approx(1.1)
    assert math.isnan(table.loc[("kernelbench", 1, 5, "5_p.py"), "B"])  # not attempted by B


def test_problem_comparison() -> None:
    p = ag.problems(SET).set_index(["level", "problem_id"])
    assert (p.loc[(1, 2), "runs"], p.loc[(1, 2), "models"], p.loc[(1, 2), "correct"], p.loc[(1, 2), "revalidated"]) == (3, 2, 2, 2)
    assert p.loc[(1, 2), "best_speedup"] == pytest.approx(1.1)  # the recorded 1.2x failed re-validation
    assert p.loc[(1, 3), "best_speedup"] == pytest.approx(4.0)  # A's wrong 9x is not a speedup


def test_all_levels_leaderboard_groups_by_benchmark_only() -> None:
    a = row(ag.leaderboard(SET, by=("benchmark",)).assign(level=1), "A")
    assert a["attempted"] == 6 and a["fast_1.0_n"] == 2  # level 1's five problems and level 2's one
