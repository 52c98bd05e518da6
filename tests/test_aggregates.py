"""Leaderboard, grid and problem aggregates on small hand-made tables, every expected value worked out by hand."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest

from reporter import aggregates as ag
from reporter.frames import UNIVERSE_COLUMNS, from_records


def run(model: str, pid: int, correct: bool | None, speedup: float | None, *, reval: bool | None = None, level: int = 1,
        submitted: bool = True, verdict: str = "", tokens: int | None = 1000, turns: int = 3, **extra: Any) -> dict[str, Any]:
    verdict = verdict or ("correct" if (reval if reval is not None else correct) else "incorrect")
    return {"run_id": f"{model}-{level}-{pid}-{speedup}-{reval}", "benchmark": "kernelbench", "level": level,
            "problem_id": pid, "problem": f"{pid}_p.py", "model": model, "configuration": None, "complete": True,
            "submitted": submitted, "recorded_correct": correct, "revalidated_correct": reval,
            "correct": bool(reval if reval is not None else correct), "verdict": verdict,
            "compiled": None if verdict in ("not_evaluated", "no_submission") else (submitted and verdict != "compile_error"),
            "speedup": speedup, "speedup_source": None if speedup is None else ("re-validated" if reval is not None else "recorded"),
            "tokens_total": tokens, "turns": turns, "revalidated_verdict": None if reval is None else verdict,
            # a re-validated run's headline speedup is its device-time one
            "speedup_device": speedup if reval is not None else None, **extra}


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


def timed(pid: int, correct: bool, device: float, graph: float | None, wall: float) -> dict[str, Any]:
    """A re-validated run of model H with a speedup on each basis (kernel 1 ms on device time)."""
    return run("H", pid, correct, device, reval=correct, speedup_graph=graph, speedup_wall=wall,
               kernel_device_ms=1.0, ref_device_ms=device, kernel_wall_ms=2.0, ref_wall_ms=2.0 * wall)


# Model H: p1 host-bound (0.5x on device time, 1.6x on wall time); p2 not capturable as a CUDA graph;
# p3 recorded only (1.2x on every basis); p4 re-validated incorrect (its 5x never counts on any basis).
BASES = from_records([timed(1, True, 0.5, 0.9, 1.6), timed(2, True, 3.0, None, 2.5), run("H", 3, True, 1.2),
                      timed(4, False, 5.0, 5.0, 5.0)])


@pytest.mark.parametrize("basis, fast, geomean, n", [
    # fast_p over all 4 attempted problems at p = 0, 1, 1.5, 2 (strictly greater)
    ("device", (3, 2, 1, 1), (0.5 * 3.0 * 1.2) ** (1 / 3), 3),
    ("graph", (2, 1, 0, 0), (0.9 * 1.2) ** (1 / 2), 2),  # p2 has no graph figure: correct, never counts
    ("wall", (3, 3, 2, 1), (1.6 * 2.5 * 1.2) ** (1 / 3), 3),
])
def test_leaderboard_on_each_timing_basis(basis: str, fast: tuple[int, ...], geomean: float, n: int) -> None:
    h = row(ag.leaderboard(BASES, basis=basis), "H")
    assert (h["attempted"], h["correct"]) == (4, 3)
    assert tuple(h[f"{ag.fast_column(p)}_n"] for p in (0.0, 1.0, 1.5, 2.0)) == fast
    assert h["fast_1.0"] == pytest.approx(fast[1] / 4)
    assert h["geomean"] == pytest.approx(geomean) and h["geomean_n"] == n
    assert h["recorded_only"] == 1  # p3's recorded figure stands on every basis


def test_basis_picks_each_runs_figures_and_unknown_is_never_slower() -> None:
    wall = ag.scoped(BASES, basis="wall").set_index("problem_id")
    assert (wall.loc[1, "kernel_ms"], wall.loc[1, "ref_ms"], wall.loc[1, "speedup"]) == (2.0, 3.2, 1.6)
    assert wall.loc[3, "speedup"] == 1.2 and wall.loc[3, "speedup_source"] == "recorded"
    assert set(wall["basis"]) == {"wall"}
    states = {b: ag.grid_table(BASES, "state", basis=b) for b in ("device", "graph", "wall")}
    p1, p2 = ("kernelbench", 1, 1, "1_p.py"), ("kernelbench", 1, 2, "2_p.py")
    assert (states["device"].loc[p1, "H"], states["wall"].loc[p1, "H"]) == ("slower", "faster")
    assert states["graph"].loc[p2, "H"] == "correct"  # correct, speedup unknown on this basis
    assert math.isnan(ag.grid_table(BASES, basis="graph").loc[p2, "H"])
    assert math.isnan(ag.problems(BASES, basis="graph").set_index("problem_id").loc[2, "best_speedup"])
    with pytest.raises(ValueError):
        ag.leaderboard(BASES, basis="cuda-events")


def best_of(*runs: dict[str, Any]) -> str:
    """The run id `best_per_problem` keeps for model A's problem 1 among `runs`."""
    best = ag.best_per_problem(ag.scoped(from_records(list(runs))), ())
    assert len(best) == 1
    return str(best.iloc[0]["run_id"])


def test_best_run_correct_first_then_fastest_then_first_by_id() -> None:
    good, worse = run("A", 1, True, 2.0), run("A", 1, True, 1.5)
    assert best_of(good, worse) == best_of(worse, good) == good["run_id"]  # the order of the table does not matter
    tie = {**good, "run_id": "A-0-tie"}
    assert best_of(tie, good) == best_of(good, tie) == "A-0-tie"  # equally good: the first by run id
    slow_wrong, fast_wrong = run("A", 1, False, 1.0), run("A", 1, False, 9.0)
    assert best_of(fast_wrong, slow_wrong) == min(slow_wrong["run_id"], fast_wrong["run_id"])  # neither counts
    unknown, counting = run("A", 1, True, None), run("A", 1, True, 0.5)
    assert best_of(fast_wrong, unknown) == unknown["run_id"]  # correct beats incorrect, even without a speedup
    assert best_of(unknown, fast_wrong, counting) == counting["run_id"]  # counting beats both
    cheat = run("A", 1, True, 3.0, suspect=True)
    assert best_of(cheat, counting) == counting["run_id"]  # a clean slower run beats a faster suspect one


def test_rows_are_ordered_by_fast_1_share_then_geomean_then_name() -> None:
    board = ag.leaderboard(from_records([
        run("one-of-one", 1, True, 1.5),  # fast_1 1/1
        run("two-of-four", 1, True, 3.0), run("two-of-four", 2, True, 1.2),
        run("two-of-four", 3, False, None), run("two-of-four", 4, False, None),  # fast_1 2/4
        run("b-slow", 1, True, 0.9),  # fast_1 0/1, geomean 0.9
        run("a-nothing", 1, False, None),  # fast_1 0/1, no geomean
        run("c-slower", 1, True, 0.5),  # fast_1 0/1, geomean 0.5
        run("a-slow", 1, True, 0.9),  # ties b-slow: by name
    ]))
    assert list(board["model"]) == ["one-of-one", "two-of-four", "a-slow", "b-slow", "c-slower", "a-nothing"]


def test_a_row_counts_best_runs_but_medians_cover_every_run() -> None:
    m = row(ag.leaderboard(from_records([
        run("M", 1, True, 2.0, reval=True, turns=4, tokens=100), run("M", 1, False, None, turns=8, tokens=300),
        run("M", 2, True, 0.5, turns=5, tokens=0), run("M", 3, True, 8.0, turns=None)])), "M")
    assert (m["attempted"], m["revalidated"], m["correct_revalidated"], m["recorded_only"]) == (3, 1, 1, 2)
    assert m["geomean"] == pytest.approx(2.0) and m["geomean_n"] == 3  # (2 * 0.5 * 8) ** (1/3)
    assert m["median_turns"] == 5.0  # 4, 8, 5: the run without a turn count is left out
    assert m["median_tokens"] == 300.0  # 100, 300 and 1000: 0 tokens is "not counted"
    assert (m["fast_0.0_n"], m["fast_1.0_n"], m["fast_2.0_n"]) == (3, 2, 1)  # 2.0 is not > 2


@pytest.mark.parametrize("verdict, state", [
    ("runtime_error", "runtime_error"), ("incorrect", "incorrect"), ("timeout", "runtime_error"),
    ("crashed", "runtime_error"), ("unknown", "unknown"), ("not_evaluated", "unknown"), ("partial", "unknown"),
    ("something new", "incorrect"),
])
def test_states_of_runs_that_are_not_correct(verdict: str, state: str) -> None:
    for recorded in (False, None):
        assert list(ag.grid(from_records([run("A", 1, recorded, None, verdict=verdict)]))["state"]) == [state]


def test_index_counts_cover_every_run_and_name_missing_labels() -> None:
    # Partial runs count too; a missing benchmark is grouped under the missing label, not dropped.
    table = from_records([
        {**run("A", 1, True, 2.0, reval=True), "verdict_source": "re-validated", "flags": 2},
        {**run("B", 1, True, 1.0), "verdict_source": "recorded", "flags": 0},
        {**run("B", 2, False, None), "verdict_source": "recorded", "flags": 1},
        {**run("A", 1, None, None, verdict="partial"), "verdict_source": "partial", "complete": False,
         "benchmark": None, "flags": 3, "run_id": "partial-1"},
    ])
    out = ag.counts(table, ("benchmark", "configuration"))
    assert list(out["benchmark"]) == [ag.MISSING_KEY, "kernelbench"]  # "" (not recorded) sorts first
    assert list(out["configuration"]) == [ag.MISSING_KEY, ag.MISSING_KEY]
    missing, kb = out.iloc[0], out.iloc[1]
    assert (kb["runs"], kb["models"], kb["correct"], kb["revalidated"], kb["flags"]) == (3, 2, 2, 1, 3)
    assert (missing["runs"], missing["models"], missing["correct"], missing["revalidated"], missing["flags"]) == (1, 1, 0, 0, 3)
    assert all(str(out[c].dtype) == "int64" for c in ("runs", "models", "correct", "revalidated", "flags"))


def test_row_counts_other_gpu_baselines_and_one_token_runs() -> None:
    m = row(ag.leaderboard(from_records([
        run("M", 1, True, 2.0, tokens=1, baseline_other_gpu=True), run("M", 2, True, 1.5, tokens=3),
        run("M", 3, True, 1.2, tokens=0, baseline_other_gpu=False)])), "M")
    assert m["baseline_other_gpu"] == 1
    assert m["median_tokens"] == 2.0  # 1 and 3: only 0 means "not counted"


def test_without_fast_1_rows_are_ordered_by_the_last_threshold() -> None:
    board = ag.leaderboard(from_records([
        run("x-fast", 1, True, 3.0), run("x-fast", 2, False, None),  # fast_2: 1/2, geomean 3
        run("y-steady", 1, True, 1.9), run("y-steady", 2, True, 1.9),  # fast_2: 0/2, geomean 1.9
    ]), fast_ps=(0.0, 2.0))
    assert list(board["model"]) == ["x-fast", "y-steady"]
    assert "fast_1.0" not in board and list(board.index) == [0, 1]


def test_states_read_unknown_correctness_and_submission_as_no() -> None:
    table = from_records([run("A", 1, True, 1.5), run("A", 2, True, 1.5), run("A", 3, True, 0.5)])
    table.loc[0, "correct"] = pd.NA
    table.loc[1, "submitted"] = pd.NA
    table.index = pd.Index([10, 11, 12])
    got = ag.states(table)  # a table without the `excluded` column: nothing is suspect
    assert list(got) == ["incorrect", "no_submission", "slower"]
    assert got.name == "state" and list(got.index) == [10, 11, 12] and str(got.dtype) == "string"
    ones = from_records([run("A", 1, True, 1.5), run("A", 2, True, 2.5)])
    assert list(ag.states(ones)) == ["faster", "faster"]  # anything above 1.0 is faster, not only above 2


def test_partial_runs_are_counted_on_the_index_but_never_ranked() -> None:
    table = from_records([run("A", 1, True, 2.0), {**run("A", 2, True, 3.0), "complete": False, "run_id": "partial"},
                          {**run("B", 1, True, 1.5), "complete": False, "run_id": "partial-b"}])
    board = ag.leaderboard(table)
    assert list(board["model"]) == ["A"]
    a = row(board, "A")
    assert (a["attempted"], a["correct"], a["fast_1.0_n"], a["geomean"]) == (1, 1, 1, 2.0)
    assert list(ag.grid(table)["run_id"]) == ["A-1-1-2.0-None"]
    assert ag.counts(table, ("benchmark",)).iloc[0]["runs"] == 3


def space(*problem_ids: int, level: int = 1) -> pd.DataFrame:
    return pd.DataFrame([("", "kernelbench", level, pid, f"{pid}_p.py", "0" * 64) for pid in problem_ids],
                        columns=list(UNIVERSE_COLUMNS))


def test_fast_p_divides_by_the_recorded_problem_set_for_every_model() -> None:
    table = from_records([run("A", 1, True, 2.0), run("A", 2, True, 0.5), run("B", 3, True, 1.5)])
    board = ag.leaderboard(table, space=space(1, 2, 3, 4, 5))
    a, b = row(board, "A"), row(board, "B")
    assert (a["problems"], a["not_attempted"], a["levels_missing"], a["fast_1.0_n"]) == (5, 3, "", 1)
    assert (b["problems"], b["not_attempted"], b["fast_1.0_n"]) == (5, 4, 1)
    assert a["fast_1.0"] == pytest.approx(1 / 5) and a["fast_0.0"] == pytest.approx(2 / 5)
    # across levels: n is every problem of the levels the group's runs attempted; a model names the levels it left out
    both = from_records([run("A", 1, True, 2.0), run("B", 1, True, 2.0, level=2)])
    board = ag.leaderboard(both, space=pd.concat([space(1, 2), space(1, level=2)]), by=("benchmark",)).assign(level=1)
    assert (row(board, "A")["problems"], row(board, "A")["not_attempted"], row(board, "A")["levels_missing"]) == (3, 2, "L2")
    assert row(board, "B")["levels_missing"] == "L1"
    alone = row(ag.leaderboard(table), "A")  # no recorded set: n is what the model attempted
    assert (alone["problems"], alone["not_attempted"], alone["fast_1.0"]) == (2, 0, 0.5)


def test_the_revalidated_view_keeps_no_recorded_speedup() -> None:
    # re-validated correct, but the speedup on record is the harness's (the check measured no time)
    table = from_records([run("R", 1, True, 2.0, reval=True, speedup_source="recorded", speedup_device=None),
                          run("R", 2, True, 3.0, reval=True)])
    r = row(ag.leaderboard(table, revalidated_only=True), "R")
    assert (r["correct"], r["fast_1.0_n"], r["geomean_n"]) == (2, 1, 1) and r["geomean"] == pytest.approx(3.0)
    assert row(ag.leaderboard(table), "R")["fast_1.0_n"] == 2  # all runs: the recorded figure counts, as "recorded"


def test_fast_p_counts_a_speedup_strictly_above_p() -> None:
    from reporter.core.checks import fast_n
    assert fast_n([1.0, 1.5, 2.0], 1.0) == 2  # exactly p is not faster than p (KernelBench: speedup > p)
    assert fast_n([1.0], 1.0) == 0 and fast_n([1.0000001], 1.0) == 1
    assert fast_n([0.5, 0.01], 0.0) == 2 and fast_n([], 0.0) == 0


def test_a_recorded_speedup_against_another_gpus_baseline_is_shown_but_never_counts() -> None:
    # p1: the harness timed the kernel on an H100 against an L40S reference: 16x compares two machines, not two codes
    table = from_records([run("M", 1, True, 16.0, baseline_other_gpu=True), run("M", 2, True, 2.0),
                          run("M", 3, True, 3.0, reval=True, baseline_other_gpu=True)])  # re-measured by us: our own reference
    m = row(ag.leaderboard(table), "M")
    assert (m["correct"], m["fast_1.0_n"], m["geomean_n"], m["baseline_other_gpu"]) == (3, 2, 2, 1)
    assert m["geomean"] == pytest.approx(6.0 ** 0.5)  # 2.0 and 3.0, not the 16x
    scoped = ag.scoped(table).set_index("problem_id")
    assert scoped.loc[1, "speedup"] == 16.0 and not scoped.loc[1, "counts"]  # still shown (flagged), never counted


def test_geomean_with_suspects_counted_is_kernelbench_s_own() -> None:
    table = from_records([run("A", 1, True, 2.0, suspect=True), run("A", 2, True, 0.5), run("A", 3, False, None)])
    a = row(ag.leaderboard(table), "A")
    assert (a["geomean"], a["geomean_n"]) == (0.5, 1)
    assert a["geomean_with_suspects"] == pytest.approx(1.0) and a["geomean_with_suspects_n"] == 2  # (2.0 * 0.5) ** (1/2)
    assert "geomean_with_suspects" not in ag.leaderboard(table, exclude=None)  # nothing excluded: one geomean


def test_rows_that_print_the_same_share_a_rank_listed_by_name() -> None:
    board = ag.leaderboard(from_records([
        run("z-model", 1, True, 1.5), run("z-model", 2, True, 0.62),  # fast_1 1/2, geomean 0.9644 -> "0.96x"
        run("a-model", 1, True, 1.5), run("a-model", 2, True, 0.61),  # fast_1 1/2, geomean 0.9566 -> "0.96x"
        run("m-model", 1, True, 1.5), run("m-model", 2, True, 0.5),  # fast_1 1/2, geomean 0.8660 -> "0.87x"
        run("b-model", 1, True, 1.5), run("b-model", 2, True, 1.2),  # fast_1 2/2
        run("c-model", 1, True, 1.2), run("c-model", 2, True, 1.5),  # ties b-model exactly
        run("c-model", 3, True, 0.5, level=2),  # another level: its own ranks
    ]))
    one = board[board["level"] == 1]
    assert list(zip(one["model"], one["rank"])) == [("b-model", 1), ("c-model", 1), ("a-model", 3), ("z-model", 3), ("m-model", 5)]
    assert list(board[board["level"] == 2]["rank"]) == [1]
    assert "printed" in ag.RANK_RULE and "by model name" in ag.RANK_RULE


def test_own_kernel_share_weak_checks_and_incomplete_checks_on_the_board() -> None:
    # C: p1 leaves the GEMM to cuBLAS and fuses its epilogue (own share 2%, 3.0x): an honest KernelBench win that
    #    stays in fast_1 and the geomean, and only the strict "own kernels" column leaves it out;
    #    p2 is all its own (95%, 2.0x); p3 is correct at 1.5x on a problem whose check accepts zeros (a weak
    #    check): no win, but counted "w/ weak" as KernelBench would; p4 is correct at 1.2x but its dynamic checks
    #    did not run (checks incomplete): it counts, and is counted as incomplete.
    board = ag.leaderboard(from_records([
        run("C", 1, None, 3.0, reval=True, own_kernel_share=0.02),
        run("C", 2, None, 2.0, reval=True, own_kernel_share=0.95),
        run("C", 3, None, 1.5, reval=True, own_kernel_share=1.0, weak_check="zeros"),
        run("C", 4, None, 1.2, reval=True, own_kernel_share=1.0, checks_incomplete=True, incomplete_checks="input_statistics"),
    ]))
    c = row(board, "C")
    assert (c["fast_1.0_n"], c["geomean_n"]) == (3, 3)  # p1, p2, p4; p3 is a weak-check win
    assert c["geomean"] == pytest.approx((3.0 * 2.0 * 1.2) ** (1 / 3))
    assert c["fast_1.0_with_suspects_n"] == 4  # KernelBench's count takes the weak-check win
    assert (c["weak_check"], c["checks_incomplete"], c["excluded"]) == (1, 1, 0)
    assert (c["strict_fast_1.0_n"], c["strict_measured"]) == (2, 4)  # p2 and p4: own kernels do >= 50%


def test_a_problem_attempted_outside_the_recorded_set_joins_every_models_denominator() -> None:
    """Issue 32's survivor: dropping such a problem from n (every = known) passed every test."""
    table = from_records([run("A", 1, True, 2.0), run("A", 3, True, 2.0), run("B", 2, True, 2.0)])
    board = ag.leaderboard(table, space=space(1, 2))
    assert (row(board, "A")["problems"], row(board, "A")["not_attempted"]) == (3, 1)
    assert (row(board, "B")["problems"], row(board, "B")["not_attempted"]) == (3, 2)


def test_the_rank_follows_the_exact_fast_1_share_not_its_printed_two_decimals() -> None:
    # 5 of 250 and 6 of 250 both print as 0.02; the row with 6 ranks first even with a smaller geomean.
    five = [run("five-fast", p, True, 9.0 if p <= 5 else 0.9) for p in range(1, 251)]
    six = [run("six-fast", p, True, 1.01 if p <= 6 else 0.5) for p in range(1, 251)]
    board = ag.leaderboard(from_records(five + six))
    assert list(board["model"]) == ["six-fast", "five-fast"] and list(board["rank"]) == [1, 2]


def test_a_recorded_time_below_the_floor_counts_on_no_board() -> None:
    # The same run twice: once possible, once below the hardware floor (its recorded speedup kept in the table).
    fine = [run("m", 1, True, 2.0, recorded_speedup=2.0, recorded_sol_fraction=0.5), run("m", 2, True, 0.5)]
    impossible = [run("m", 1, True, None, recorded_speedup=222.0, recorded_impossible=True, recorded_sol_fraction=7.0),
                  run("m", 2, True, 0.5)]
    good, bad = row(ag.leaderboard(from_records(fine)), "m"), row(ag.leaderboard(from_records(impossible)), "m")
    assert good["fast_1.0"] == 0.5 and bad["fast_1.0"] == 0.0
    assert bad["geomean"] == pytest.approx(0.5) and bad["sol_n"] == 0
    grid = ag.grid(from_records(impossible))
    assert not grid["speedup"].gt(1).any()
