"""What a KernelBench run folder says less clearly than its files: an eval entry whose kernel file is missing is
an attempted failure (KernelBench counts it), with one message; a runtime ~1,000x its reference gets a hint
naming the unit it is likely in."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import ROOT
from reporter import aggregates as ag
from reporter.cli import main
from reporter.collect import collect
from reporter.core.checks import unit_hint
from reporter.tables import load

KB = ROOT / "tests" / "fixtures" / "kernelbench"


def imported(run: Path, out: Path) -> str:
    res = CliRunner().invoke(main, ["import", "kernelbench", str(run), "--problems", str(KB / "problems"), "--out", str(out),
                                    "--allow-missing-reference"])
    assert res.exit_code == 0, res.output
    return res.output


def test_an_eval_entry_without_its_kernel_file_is_an_attempted_failure(tmp_path: Path) -> None:
    run = tmp_path / "run_new"
    shutil.copytree(KB / "run_new", run)
    doc = json.loads((run / "eval_results.json").read_text())
    doc["3"] = [{"sample_id": 0, "compiled": False, "correctness": False, "metadata": {"compilation_error": "nvcc: error"}}]
    doc["4"] = [{"sample_id": 0, "compiled": True, "correctness": True, "runtime": 0.5, "metadata": {}}]  # claims more than it shows
    (run / "eval_results.json").write_text(json.dumps(doc))
    output = imported(run, tmp_path / "data")
    assert "wrote 4 traces" in output  # the two kernel files' and the two attempts', said in one message
    assert output.count("with no kernel file") == 1
    assert "eval_results.json has 2 entries with no kernel file (L1 P3 S0, L1 P4 S0): imported as attempted failures" in output
    runs = {r.trace.run.problem_id: r for r in collect(tmp_path / "data").runs}
    assert set(runs) == {1, 2, 3, 4}
    assert runs[3].trace.final_kernel is None and runs[3].trace.run.recorded_verdict == "compile_error"
    assert runs[4].trace.final_kernel is None and runs[4].trace.run.recorded_verdict == "no_submission"
    assert not runs[4].trace.metrics.timing and "nothing to show or re-validate" in (runs[4].trace.run.source_note or "")
    row = ag.leaderboard(load(tmp_path / "data")).iloc[0]
    assert (row["attempted"], row["submitted"], row["correct"]) == (4, 2, 1)  # both attempts count, neither is correct


def test_a_runtime_1000x_its_reference_is_hinted_with_its_likely_unit(tmp_path: Path) -> None:
    run = tmp_path / "run_new"
    shutil.copytree(KB / "run_new", run)
    doc = json.loads((run / "eval_results.json").read_text())
    doc["1"][0].update(runtime=31.2, ref_runtime=0.0298)  # µs written as ms: 1,047x the reference
    (run / "eval_results.json").write_text(json.dumps(doc))
    output = imported(run, tmp_path / "data")
    assert "runtime 31.2 ms is ~1,000x its reference's 0.0298 ms: it is likely in μs, not ms" in output
    assert json.loads(next((tmp_path / "data").rglob("l1-p1-s0/trace.json")).read_text())["metrics"]["timing"]["runtime"] == 31.2


@pytest.mark.parametrize("runtime, reference, unit, likely", [
    (31.2, 0.0298, "ms", "us"), (0.0000298, 0.0312, "ms", "s"), (500.0, 1.0, "ms", "us"), (2100.0, 1.0, "ms", None),
    (3.0, 1.0, "ms", None), (31.2, 0.0298, "ns", None), (float("nan"), 1.0, "ms", None), (1.0, 0.0, "ms", None),
])
def test_unit_hint(runtime: float, reference: float, unit: str, likely: str | None) -> None:
    assert unit_hint(runtime, reference, unit) == likely


def test_a_problem_file_of_another_level_is_never_taken_as_the_reference(tmp_path: Path) -> None:
    # Issue 45, item 1: level 2's runs imported with --problems .../level1 took level 1's files of the same id.
    run = tmp_path / "runs" / "l2"
    run.mkdir(parents=True)
    for name in ("level_1_problem_1_sample_0_kernel.py", "level_1_problem_2_sample_0_kernel.py"):
        shutil.copy(KB / "run_new" / name, run / name.replace("level_1", "level_2"))
    level1 = KB / "problems" / "level1"
    res = CliRunner().invoke(main, ["import", "kernelbench", str(run), "--problems", str(level1), "--out", str(tmp_path / "a")])
    assert res.exit_code != 0 and "no problem file for 2 problems (L2 1_*.py, L2 2_*.py)" in res.output, res.output
    assert f"{level1} is level 1's folder" in res.output
    flat = tmp_path / "flat"
    shutil.copytree(level1, flat)
    res = CliRunner().invoke(main, ["import", "kernelbench", str(run), "--problems", str(flat), "--out", str(tmp_path / "b")])
    assert res.exit_code != 0 and "does not say their level" in res.output, res.output
    res = CliRunner().invoke(main, ["import", "kernelbench", str(run), "--problems", str(level1), "--out", str(tmp_path / "c"),
                                    "--allow-missing-reference"])
    assert res.exit_code == 0, res.output
    traces = [json.loads(p.read_text()) for p in (tmp_path / "c").rglob("trace.json")]
    assert len(traces) == 2 and all(t.get("reference_source") is None for t in traces)
    # the level's own folder, named for it, is still taken
    res = CliRunner().invoke(main, ["import", "kernelbench", str(KB / "run_new"), "--problems", str(level1), "--out", str(tmp_path / "d")])
    assert res.exit_code == 0, res.output
    assert all(json.loads(p.read_text())["reference_source"] for p in (tmp_path / "d").rglob("trace.json"))


def test_the_kernelbench_commit_is_recorded_only_from_a_checkout_that_holds_the_files_read(tmp_path: Path) -> None:
    # Issue 45, item 4: an untracked copy of the problem files inside the user's own repository recorded the
    # user's HEAD as KernelBench's commit, and a re-import flipped it.
    import subprocess

    from reporter.collect.problemset import scan

    def git(where: Path, *args: str) -> str:
        return subprocess.run(["git", "-C", str(where), "-c", "user.name=t", "-c", "user.email=t@e", *args],
                              check=True, capture_output=True, text=True).stdout.strip()

    kb = tmp_path / "KernelBench"
    shutil.copytree(KB / "problems", kb / "KernelBench")
    git(tmp_path, "init", "-q", str(kb))
    git(kb, "add", ".")
    git(kb, "commit", "-qm", "problems")
    head = git(kb, "rev-parse", "HEAD")
    assert scan(kb / "KernelBench")[0].commit == head
    assert scan(kb)[0].commit == head  # the checkout's top, its problems in KernelBench/
    mine = tmp_path / "mine"  # the user's own project, the problems copied in and never added
    git(tmp_path, "init", "-q", str(mine))
    (mine / "README").write_text("my runs\n")
    git(mine, "add", "README")
    git(mine, "commit", "-qm", "mine")
    shutil.copytree(KB / "problems", mine / "problems")
    assert scan(mine / "problems")[0].commit is None
    assert scan(mine / "problems")[0].commit is None  # stably
    (kb / "KernelBench" / "level1" / "2_ReLU.py").write_text("# edited\n")
    assert scan(kb / "KernelBench")[0].commit is None  # not the commit's file any more
