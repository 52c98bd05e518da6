"""The KernelBench importer on hostile run folders: one message per bad file, nothing read outside the
folder, nothing written through a link in OUT, and every good sample still imported."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import hang_guard
from reporter.collect.kernelbench import import_kernelbench

KB = Path(__file__).resolve().parent / "fixtures" / "kernelbench"


@pytest.fixture(autouse=True)
def no_hang() -> Iterator[None]:
    with hang_guard(120):
        yield


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """A copy of the two-sample run folder: problem 1 (correct) and problem 2 (compile error)."""
    dest = tmp_path / "run_new"
    shutil.copytree(KB / "run_new", dest)
    return dest


def imported(out: Path) -> list[str]:
    return sorted(p.parent.relative_to(out).as_posix() for p in out.rglob("trace.json"))


def bad_kernel(run: Path, make: str) -> None:
    """Problem 2's kernel file replaced by something that must never be read."""
    kernel = run / "level_1_problem_2_sample_0_kernel.py"
    kernel.unlink()
    if make == "fifo":
        os.mkfifo(kernel)
    elif make == "not utf-8":
        kernel.write_bytes(b"# \xff\xfe not UTF-8\n")
    else:
        kernel.symlink_to(make)


@pytest.mark.parametrize("make", ["fifo", "/dev/zero", "/proc/self/environ", "not utf-8"])
def test_a_kernel_that_cannot_be_read_is_one_message_and_the_rest_imports(run: Path, tmp_path: Path, make: str) -> None:
    bad_kernel(run, make)
    os.environ["REPORTER_TEST_SECRET"] = "environ-must-never-be-read"
    rep = import_kernelbench(run, KB / "problems", tmp_path / "out")
    assert imported(tmp_path / "out") == ["kernelbench-run_new/l1-p1-s0"]
    (msg,) = [m for m in rep.messages if "problem_2" in m]
    assert msg.startswith("not imported:") and ("refused" in msg or "not UTF-8" in msg), msg
    written = "".join(p.read_text() for p in (tmp_path / "out").rglob("trace.json"))
    assert "environ-must-never-be-read" not in written


@pytest.mark.parametrize("results", [
    {"1": [{"sample_id": 0, "compiled": True, "correctness": True, "runtime": 0.03, "runtime_stats": [1, 2],
            "ref_runtime": 0.05, "ref_runtime_stats": {"hardware": 7}, "metadata": {"hardware": 12}}]},
    {"1": {"compiled": True, "correct": True, "avg_runtime": 0.03, "runtime_stats": "fast", "hardware": 3}},
    [1, 2, 3],
    {"1": [[1], "x", None]},
])
def test_eval_results_of_the_wrong_shape_never_stop_the_import(run: Path, tmp_path: Path, results: object) -> None:
    (run / "eval_results.json").write_text(json.dumps(results))
    rep = import_kernelbench(run, KB / "problems", tmp_path / "out")
    assert imported(tmp_path / "out") == ["kernelbench-run_new/l1-p1-s0", "kernelbench-run_new/l1-p2-s0"], rep.messages
    doc = json.loads((tmp_path / "out" / "kernelbench-run_new" / "l1-p1-s0" / "trace.json").read_text())
    assert doc["run"]["recorded_gpu"] is None  # a number is not a GPU name
    assert doc["metrics"].get("timing", {}).get("ref_gpu") is None


def test_old_per_sample_results_of_the_wrong_shape(tmp_path: Path) -> None:
    run = tmp_path / "run_old"
    shutil.copytree(KB / "run_old", run)
    for kj in run.rglob("kernel.json"):
        kj.write_text(json.dumps({"eval_result": [1, 2]}))
    rep = import_kernelbench(run, KB / "problems", tmp_path / "out")
    assert len(rep.written) == 2, rep.messages


@pytest.mark.parametrize("yaml_text", [
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))
    + "model_name: *i\n",
    "model_name: " + "[" * 5000 + "]" * 5000 + "\n",
    "model_name: " + "x" * (2 * 1024 * 1024) + "\n",
])
def test_hostile_generation_config_is_one_message(run: Path, tmp_path: Path, yaml_text: str) -> None:
    (run / "generation_config.yaml").write_text(yaml_text)
    rep = import_kernelbench(run, KB / "problems", tmp_path / "out")
    assert len(rep.written) == 2
    (msg,) = [m for m in rep.messages if "generation_config.yaml" in m]
    assert "unreadable YAML" in msg and len(msg) < 600
    doc = json.loads((tmp_path / "out" / "kernelbench-run_new" / "l1-p1-s0" / "trace.json").read_text())
    assert doc["run"]["model"] == "run_new"


def test_an_out_path_that_is_a_link_is_never_written_through(run: Path, tmp_path: Path) -> None:
    """A link standing where a trace goes is no import's: kept (one message) and, with --force, replaced,
    never written through."""
    from reporter.collect.kernelbench import ImportOptions
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    dest = tmp_path / "out" / "kernelbench-run_new" / "l1-p1-s0"
    dest.mkdir(parents=True)
    (dest / "trace.json").symlink_to(victim)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "out" / "kernelbench-run_new" / "l1-p2-s0").symlink_to(elsewhere, target_is_directory=True)
    rep = import_kernelbench(run, KB / "problems", tmp_path / "out")
    assert victim.read_text() == "precious" and list(elsewhere.iterdir()) == []
    assert (dest / "trace.json").is_symlink() and any("was not written by an import" in m for m in rep.messages)
    (msg,) = [m for m in rep.messages if "l1-p2-s0" in m]
    assert "refusing to write through it" in msg
    import_kernelbench(run, KB / "problems", tmp_path / "out", options=ImportOptions(force=True))
    assert victim.read_text() == "precious" and list(elsewhere.iterdir()) == []
    assert not (dest / "trace.json").is_symlink() and json.loads((dest / "trace.json").read_text())["run"]["problem_id"] == 1


def test_duplicate_samples_are_kept_under_distinct_ids(run: Path, tmp_path: Path) -> None:
    (run / "again").mkdir()
    (run / "again" / "level_1_problem_1_sample_0_kernel.py").write_text("# the other kernel for sample 0\n")
    rep = import_kernelbench(run, KB / "problems", tmp_path / "out")
    assert imported(tmp_path / "out") == ["kernelbench-run_new/l1-p1-s0", "kernelbench-run_new/l1-p1-s0-copy2",
                                          "kernelbench-run_new/l1-p2-s0"]
    sources = {json.loads(p.read_text())["final_kernel"]["source"] for p in (tmp_path / "out").rglob("trace.json")}
    assert "# the other kernel for sample 0\n" in sources and len(sources) == 3
    (msg,) = [m for m in rep.messages if "another kernel" in m]
    assert "kept both, this one as l1-p1-s0-copy2" in msg


def test_a_linked_run_folder_inside_a_runs_root_is_not_followed(tmp_path: Path) -> None:
    from reporter.collect.kernelbench import run_dirs
    root = tmp_path / "runs"
    root.mkdir()
    shutil.copytree(KB / "run_new", root / "mine")
    (root / "linked").symlink_to(KB / "run_old", target_is_directory=True)
    assert run_dirs([root]) == [root / "mine"]


# Issue 32, item 4: an import replaces nothing it did not write ------------------------------------------

def test_two_run_folders_of_the_same_name_are_refused_without_force(run: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from reporter.cli import main
    other = tmp_path / "b" / "run_new"
    shutil.copytree(run, other)
    (other / "level_1_problem_1_sample_0_kernel.py").write_text("# b's kernel\nclass ModelNew:\n    pass\n")
    out = tmp_path / "out"
    args = ["import", "kernelbench", str(run), str(other), "--problems", str(KB / "problems"), "--out", str(out)]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 2 and "would both be imported as kernelbench-run_new" in res.output and not out.exists(), res.output
    res = CliRunner().invoke(main, [*args[:3], "--problems", str(KB / "problems"), "--out", str(out)])  # one of them: fine
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, [*args, "--force"])
    assert res.exit_code == 0 and "b's kernel" in (out / "kernelbench-run_new" / "l1-p1-s0" / "trace.json").read_text()


def test_a_re_import_keeps_a_hand_edited_trace_and_replaces_its_own(run: Path, tmp_path: Path) -> None:
    from reporter.collect.kernelbench import ImportOptions
    out = tmp_path / "out"
    import_kernelbench(run, KB / "problems", out)
    edited, untouched = (out / "kernelbench-run_new" / f"l1-p{p}-s0" / "trace.json" for p in (1, 2))
    doc = json.loads(edited.read_text())
    doc["run"]["notes"] = "checked by hand"
    edited.write_text(json.dumps(doc))
    (run / "level_1_problem_2_sample_0_kernel.py").write_text("# a newer kernel\n")
    rep = import_kernelbench(run, KB / "problems", out)
    assert json.loads(edited.read_text())["run"]["notes"] == "checked by hand"
    assert [m for m in rep.messages if "was edited since the last import wrote it" in m and "l1-p1-s0" in m]
    assert "a newer kernel" in untouched.read_text()  # its own, unedited trace: replaced
    rep = import_kernelbench(run, KB / "problems", out, options=ImportOptions(force=True))
    assert "notes" not in json.loads(edited.read_text())["run"] and not [m for m in rep.messages if "edited" in m]
