"""Issue 42: which rules a run was scored under (recorded, given to the importer, inferred from a date), and the two
verdicts with the cause of a disagreement, as a page shows them. Pure: no GPU, no torch."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

from click.testing import CliRunner

from conftest import ROOT, minimal_trace, write_trace
from reporter.cli import main
from reporter.core.judgement import COMPARISON, CONSTRUCTION, EXTRA_CHECKS, MODE, TOLERANCE, judge, run_rules
from reporter.core.rules import KERNELBENCH_2025, KERNELBENCH_2025_11, STRICT
from reporter.core.schema import BenchmarkReplay, ReplayVariant

SWEEP = ROOT / "examples" / "kernelbench-sweep"


def _import(tmp_path: Path, *extra: str) -> tuple[int, str, list[dict[str, object]]]:
    run = tmp_path / "runs" / "level1_demo-alpha"
    shutil.copytree(SWEEP / "runs" / "level1_demo-alpha", run)
    day = 1740787200  # 2025-03-01 00:00 UTC: before KernelBench's tolerance change
    os.utime(run / "eval_results.json", (day, day))
    res = CliRunner().invoke(main, ["import", "kernelbench", str(run), "--problems", str(SWEEP / "problems"),
                                    "--out", str(tmp_path / "out"), *extra])
    runs = [json.loads(p.read_text())["run"] for p in sorted((tmp_path / "out").rglob("trace.json"))]
    return res.exit_code, res.output, runs


def test_the_importer_infers_the_rules_from_the_eval_file_s_date_and_says_so(tmp_path: Path) -> None:
    code, out, runs = _import(tmp_path)
    assert code == 0, out
    assert {r["rules"] for r in runs} == {"kernelbench-2025"}
    assert all("eval_results.json's date, 2025-03-01" in str(r["rules_from"]) and "--rules" in str(r["rules_from"]) for r in runs)


def test_rules_given_to_the_importer_win_and_an_unknown_name_writes_nothing(tmp_path: Path) -> None:
    code, out, runs = _import(tmp_path, "--rules", "kernelbench-2025-11")
    assert code == 0 and {r["rules"] for r in runs} == {"kernelbench-2025-11"}
    assert {r["rules_from"] for r in runs} == {"given to reporter import (--rules)"}
    code, out, _ = _import(tmp_path / "again", "--rules", "kernelbench-1999")
    assert code != 0 and "no rule set named 'kernelbench-1999'" in out and "nothing was written" in out
    assert not (tmp_path / "again" / "out").exists() or not list((tmp_path / "again" / "out").rglob("trace.json"))


def test_a_trace_naming_an_unknown_rule_set_is_one_message_naming_the_field(tmp_path: Path) -> None:
    data = tmp_path / "data"
    doc = minimal_trace()
    doc["run"]["rules"] = "kernelbench-1999"
    write_trace(data, "bad-rules", doc)
    write_trace(data, "good", minimal_trace())
    res = CliRunner().invoke(main, ["build", str(data), str(tmp_path / "site"), "--no-validate"])
    assert res.exit_code == 0, res.output
    assert "run.rules" in res.output and "no rule set named 'kernelbench-1999'" in res.output
    assert (tmp_path / "site" / "runs" / "good.html").is_file()


def test_a_run_without_rules_takes_the_project_default_and_says_why() -> None:
    assert run_rules(None, None)[0] is STRICT and "project default" in run_rules(None, None)[1]
    assert run_rules("kernelbench", "given")[0] is KERNELBENCH_2025_11


def replayed(passed: bool, problem: str | None = None, strict_ratio: float | None = None, worst: float | None = 0.1,
             err: float | None = None, variants: tuple[tuple[str, bool], ...] = ()) -> BenchmarkReplay:
    return BenchmarkReplay("kernelbench-2025", passed, 5 if passed else 0, 5, problem, worst, err, strict_ratio,
                           tuple(ReplayVariant(c, p, None if p else "values differ") for c, p in variants))


def test_each_disagreement_carries_its_cause() -> None:
    kb = KERNELBENCH_2025
    gelu = judge(kb, "x", replayed(True, strict_ratio=4.7, err=4.7e-4, variants=(("eval mode", True), ("weights copied", True))),
                 "incorrect", "values differ", "fp32")
    assert (gelu.benchmark, gelu.audit, gelu.cause_class) == ("correct", "incorrect", TOLERANCE)
    assert gelu.cause == "passes at 0.01, fails at 0.0001: largest error 0.00047, 4.7x our bound"
    p15 = judge(kb, "x", replayed(True, strict_ratio=300.0, variants=(("eval mode", False), ("weights copied", True))),
                "incorrect", "values differ", "fp32")
    assert p15.cause_class == MODE and p15.cause is not None and p15.cause.startswith("correct in training mode only")
    reordered = judge(kb, "x", replayed(False, "values differ beyond atol=0.01, rtol=0.01",
                                        variants=(("eval mode", False), ("weights copied", True))), "correct", "", "fp32")
    assert reordered.cause_class == CONSTRUCTION and "weights copied by name" in str(reordered.cause)
    fp64 = judge(kb, "x", replayed(False, "runtime error: RuntimeError: Float did not match Double"), "correct", "", "fp32")
    assert fp64.cause_class == COMPARISON and "float64" in str(fp64.cause)
    stale = judge(kb, "x", replayed(True, strict_ratio=0.2), "incorrect", "correct before the timed loop but not after it", "fp32")
    assert stale.cause_class == EXTRA_CHECKS and "not after it" in str(stale.cause)
    agree = judge(kb, "x", replayed(True, strict_ratio=0.2), "correct", "", "fp32")
    assert agree.cause is None and agree.at_bound is None


def test_a_verdict_at_the_bound_says_so_and_a_replay_under_other_rules_is_not_this_run_s() -> None:
    near = judge(KERNELBENCH_2025, "x", replayed(True, worst=0.8, strict_ratio=0.5), "correct", "", "fp32")
    assert near.at_bound is not None and "0.80x" in near.at_bound
    other = judge(KERNELBENCH_2025_11, "x", replayed(True), "correct", "", "fp32")
    assert other.benchmark == "not replayed" and "kernelbench-2025, not this run's kernelbench-2025-11" in other.benchmark_why
    assert judge(KERNELBENCH_2025, "x", None, None, "", "fp32").benchmark == "not replayed"


def test_a_cached_result_without_the_run_s_replay_is_measured_again_and_one_with_it_is_not() -> None:
    from types import SimpleNamespace

    from reporter.validate.runner import ncu_or_replay_missing

    def run(rules: str | None) -> SimpleNamespace:
        return SimpleNamespace(source=SimpleNamespace(run=SimpleNamespace(rules=rules)))

    def result(replayed: str | None, verdict: str = "correct", others: tuple[str, ...] = ()) -> SimpleNamespace:
        rep = None if replayed is None else BenchmarkReplay(replayed, True, 5, 5)
        return SimpleNamespace(ncu_files={}, benchmark=rep, verdict=verdict,
                               other_benchmarks=tuple(BenchmarkReplay(o, True, 5, 5) for o in others))

    # A result measured before the run was imported with --rules: no replay, so the benchmark verdict would never come.
    assert "kernelbench-2025" in str(ncu_or_replay_missing(result(None), run("kernelbench-2025"), ncu=False))
    assert ncu_or_replay_missing(result("kernelbench-2025-11"), run("kernelbench-2025"), ncu=False) is not None
    assert ncu_or_replay_missing(result("kernelbench-2025"), run("kernelbench-2025"), ncu=False) is None
    # A replay kept from another run of the same kernel under its rules stands too (one result, a replay per rule set).
    assert ncu_or_replay_missing(result("kernelbench-2025-11", others=("kernelbench-2025",)), run("kernelbench-2025"), ncu=False) is None
    # Our own rules need no replay, nor does a run that names none.
    assert ncu_or_replay_missing(result(None), run("strict"), ncu=False) is None
    assert ncu_or_replay_missing(result(None), run(None), ncu=False) is None
    assert "ncu" in str(ncu_or_replay_missing(result(None), run(None), ncu=True))
    # A kernel that did not compile has nothing to replay: its result stands (else it is measured on every call).
    assert ncu_or_replay_missing(result(None, "compile_error"), run("kernelbench-2025"), ncu=False) is None


def test_a_replay_that_disagrees_with_our_audit_shows_wherever_the_run_is_listed(small_data: Path, tmp_path: Path) -> None:
    # seed 003 is incorrect under our audit; say it was scored under the leaderboard's rules and that the replay passed
    # them, its largest error 3.2x our bound: every listing beside our verdict names the benchmark's and the cause.
    import csv
    import io

    from conftest import validation_entry

    trace = small_data / "seed-003-l2-p8" / "trace.json"
    doc = json.loads(trace.read_text())
    doc["run"]["rules"], doc["run"]["rules_from"] = "kernelbench-2025", "given to reporter import (--rules)"
    trace.write_text(json.dumps(doc))
    entry = validation_entry(small_data, "seed-003-l2-p8")
    res = json.loads(entry.read_text())
    assert res["verdict"] == "incorrect"
    res["benchmark"] = {"rules": "kernelbench-2025", "passed": True, "trials_passed": 5, "trials": 5, "problem": None,
                        "worst_ratio": 0.31, "max_abs_error": 0.00033, "strict_ratio": 3.2, "variants": []}
    entry.write_text(json.dumps(res))
    site = tmp_path / "site"
    got = CliRunner().invoke(main, ["build", str(small_data), str(site), "--no-validate"])
    assert got.exit_code == 0, got.output
    note = "kernelbench-2025: correct · tolerance"
    problem = next(p for p in (site / "problems").glob("*.html") if "seed-003-l2-p8" in p.read_text())
    model = next(p for p in (site / "models").glob("*.html") if "seed-003-l2-p8" in p.read_text())
    assert note in problem.read_text() and note in model.read_text()
    page = (site / "runs" / "seed-003-l2-p8.html").read_text()
    assert "passes at 0.01, fails at 0.0001: largest error 0.00033, 3.2x our bound" in page
    row = next(r for r in csv.DictReader(io.StringIO((site / "runs.csv").read_text())) if r["run_id"] == "seed-003-l2-p8")
    assert (row["rules"], row["benchmark_verdict"], row["verdicts_cause_class"]) == ("kernelbench-2025", "correct", "tolerance")
    # Counted as the benchmark that scored it counts it (issue 42, item 4): correct on the default board, which a reader
    # compares with the published one; our audit alone (the re-validated view) and the run page keep "incorrect".
    assert (row["correct"], row["revalidated_correct"]) == ("True", "False")
    from reporter import aggregates as ag
    from reporter.tables import load
    frame = load(small_data)
    mine = frame.loc[frame["run_id"] == "seed-003-l2-p8"]
    default = ag.leaderboard(mine, by=("benchmark",))
    audit = ag.leaderboard(mine, by=("benchmark",), revalidated_only=True)
    assert (int(default["correct"].iloc[0]), int(audit["correct"].iloc[0])) == (1, 0)
    import html
    assert "2 correct (1 of them under the run's own rules only, not our audit)" in html.unescape(model.read_text())  # and seed 000
    # the board a reader compares with the published one lists what our audit would change, with the cause
    board = next(p for p in (site / "leaderboards").glob("*.html") if "revalidated" not in p.name and "seed-003-l2-p8" in p.read_text())
    text = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", board.read_text())))
    assert "What our audit changes" in text and "1 run counted correct here under the rules that scored it fails our audit" in text
    assert "L2 · P8 kernelbench-2025 passes at 0.01, fails at 0.0001: largest error 0.00033, 3.2x our bound" in text
    assert 'href="../runs/seed-003-l2-p8.html"' in board.read_text()


def test_audit_moves_are_the_counted_runs_our_audit_fails() -> None:
    import pandas as pd

    from reporter import aggregates as ag
    runs = pd.DataFrame({
        "run_id": ["a", "b", "c", "d", "e"], "model": ["m", "m", "m", "n", "m"], "benchmark": ["kb"] * 5, "level": [1] * 5,
        "problem_id": [3, 1, 2, 1, 4], "problem": ["p3", "p1", "p2", "p1", "p4"], "rules": ["kernelbench-2025"] * 5,
        "correct": [True, True, True, False, True], "revalidated_correct": [False, True, None, False, False],
        "verdicts_cause_class": ["tolerance", None, None, None, "model mode"], "verdicts_cause": ["x", None, None, None, "y"]})
    moved = ag.audit_moves(runs)
    assert list(moved["run_id"]) == ["a", "e"]  # counted and failing the audit, by model then problem; not d (never counted)
    assert moved.attrs["audited"] == 3  # a, b and e were counted and judged; c was not judged


def test_the_tolerance_change_day_itself_is_judged_under_the_new_rules() -> None:
    from reporter.core.rules import kernelbench_rules_on

    # KernelBench's fp32 tolerance went from 1e-2 to 1e-4 on 2025-11-04: that day is already the new rules.
    assert kernelbench_rules_on("2025-11-04").name == "kernelbench-2025-11"
    assert kernelbench_rules_on("2025-11-03T23:59:59").name == "kernelbench-2025"
    assert kernelbench_rules_on("2025-03-01").tolerance("fp32") == (1e-2, 1e-2)
