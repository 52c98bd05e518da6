"""A reference that may not be the version of its problem the run was scored with is named, with its evidence
(issue 45, item 2): the snapshot table against the run's rule set, the prompt, the kernel's own constants, and a
recorded reference time no GPU could reach on this reference."""

from __future__ import annotations

import hashlib
import html
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import ROOT, minimal_trace
from reporter.cli import main
from reporter.collect import collect
from reporter.collect.refversion import TABLE, Snapshot, constants, reference_flags, snapshots
from reporter.core.records import Trace

KB = ROOT / "tests" / "fixtures" / "kernelbench"
SHARED = ROOT.parent / "shared"
OLD = "import torch\nbatch_size = 128\ninput_size = 10\n"
NEW = "import torch\nbatch_size = 1024\ninput_size = 8192\n"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


TABLE_OF_TWO = {
    "leaderboard-2025": Snapshot("leaderboard-2025", "the early files", "2025", {"2/14": sha(OLD)}),
    "later": Snapshot("later", "the later files", "2026-03-05", {"2/14": sha(NEW)}),
}


def trace(reference: str, rules: str | None = "kernelbench-2025", kernel: str = "class ModelNew: pass\n",
          prompt: str | None = None, **run: object) -> Trace:
    doc = minimal_trace(benchmark="kernelbench", level=2, problem_id=14, rules=rules, **run)
    doc.update(reference_source=reference, final_kernel={"source": kernel}, prompt=prompt)
    return Trace.model_validate(doc)


def test_a_leaderboard_run_with_a_later_problem_file_is_named_with_both_versions() -> None:
    (flag,) = reference_flags(trace(NEW), TABLE_OF_TWO)
    assert (flag.field, flag.severity) == ("reference_source", "warn")
    assert flag.message == ("not the problem file this run was scored with: kernelbench-2025 runs were given the early files "
                            f"(2025) (sha256 {sha(OLD)[:12]}…), and this reference is from the later files (2026-03-05). Its "
                            "recorded times and verdict are for the other file")
    unknown = reference_flags(trace(NEW + "# edited\n"), TABLE_OF_TWO)[0].message
    assert "and this reference is from no known version." in unknown


@pytest.mark.parametrize(("reference", "rules", "run"), [
    (OLD, "kernelbench-2025", {}),  # the very file the leaderboard's runs were given
    (NEW, "kernelbench-2025-11", {}),  # an era whose files changed within it: no snapshot is its own
    (NEW, "strict", {}),
    (NEW, None, {}),
    (NEW, "kernelbench-2025", {"problem_id": 15}),  # a problem the table does not hold
    (NEW, "kernelbench-2025", {"benchmark": "popcorn"}),
])
def test_no_flag_without_evidence(reference: str, rules: str | None, run: dict[str, object]) -> None:
    t = trace(reference, rules)
    t = t.model_copy(update={"run": t.run.model_copy(update=run)})
    assert reference_flags(t, TABLE_OF_TWO) == []


def test_the_kernels_own_shapes_against_the_reference() -> None:
    kernel = "import torch\nbatch_size = 128\ninput_size = 5 * 2\nBLOCK = 256\n"
    (flag,) = reference_flags(trace(NEW, "kernelbench-2025-11", kernel), TABLE_OF_TWO)
    assert "batch_size = 128 (the reference: 1024); input_size = 10 (the reference: 8192)" in flag.message
    assert "written for another version of this problem" in flag.message
    same = "batch_size = 2 ** 10\ninput_size: int = 8192\n"  # the same values, written otherwise
    assert reference_flags(trace(NEW, "kernelbench-2025-11", same), TABLE_OF_TWO) == []


def test_the_prompt_the_model_was_given() -> None:
    prompt = "Optimise this:\n```python\nbatch_size = 128  # rows\ninput_size = 8192\n```\n"
    (flag,) = reference_flags(trace(NEW, "kernelbench-2025-11", prompt=prompt), TABLE_OF_TWO)
    assert "the prompt the model was given sets this problem's shapes otherwise: batch_size = 128 (the reference: 1024)" in flag.message
    assert "input_size" not in flag.message  # equal in both
    given = "```python\nbatch_size = 1024\ninput_size = 8192\n```"
    assert reference_flags(trace(NEW, "kernelbench-2025-11", prompt=given), TABLE_OF_TWO) == []


def test_constants_reads_numbers_only() -> None:
    src = ("a = 3\nb = -2.5\nc = (1, 2 * 3)\nd = 'sk-live-secret'\ne = f(4)\nf = 2 ** 20\ng = 10 ** 100\nclass X:\n    h = 1\n"
           "i = 65536.0 ** 64\nj = (-8) ** 0.5\nk = 7 // 0\n")  # an overflow, a complex root, a division by zero: no shape
    assert constants(src) == {"a": 3, "b": -2.5, "c": (1, 6), "f": 2**20}  # no call, string or huge power is read
    assert constants("def (") == {} and constants(None) == {}


def test_an_import_says_which_kernels_were_written_for_another_version_and_the_page_shows_it(tmp_path: Path) -> None:
    run = tmp_path / "run_new"
    shutil.copytree(KB / "run_new", run)
    kernel = run / "level_1_problem_1_sample_0_kernel.py"
    kernel.write_text(kernel.read_text() + "\nN = 4096\n")  # the problem file says N = 256
    out, site = tmp_path / "data", tmp_path / "site"
    res = CliRunner().invoke(main, ["import", "kernelbench", str(run), "--problems", str(KB / "problems"), "--out", str(out), "--no-work"])
    assert res.exit_code == 0, res.output
    assert "1 of 2 kernels have a reference that may not be the version of its problem they were scored with (L1 P1: " \
           "the kernel's source sets N = 4096 (the reference: 256)" in res.output
    flagged = {r.trace.run.problem_id: [f.field for f in r.flags] for r in collect(out).runs}
    assert "reference_source" in flagged[1] and "reference_source" not in flagged[2]
    assert CliRunner().invoke(main, ["-q", "build", str(out), str(site)]).exit_code == 0
    page = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", next((site / "runs").glob("*l1-p1-s0.html")).read_text())))
    assert "the kernel's source sets N = 4096 (the reference: 256)" in page


def test_a_recorded_reference_time_no_gpu_reaches_on_this_reference_names_the_version() -> None:
    from reporter.collect.floors import recorded_floor_flags
    from reporter.core.work import Counting, TensorIO, WorkCount
    t = Trace.model_validate({**minimal_trace(recorded_gpu="NVIDIA H200", precision="fp32"), "reference_source": "# ref\n",
                              "metrics": {"timing": {"unit": "ms", "runtime": 0.01, "ref_runtime": 0.01}}})
    gb8 = 8 * 10**9  # read once: 1.67 ms at the H200's 4.8 TB/s, and 10 µs is under half of that
    work = WorkCount(sha("# ref\n"), Counting.META, tensors=(TensorIO("input 0", (gb8 // 4,), "fp32", gb8, gb8),))
    flags = {f.field: f.message for f in recorded_floor_flags(t, work)}
    assert "faster than the hardware allows" in flags["timing.ref_runtime"]
    assert "the reference the harness timed did less work than this one" in flags["timing.ref_runtime"]
    assert "did less work" not in flags["timing.runtime"]  # a kernel's impossible time is not the reference's version


def test_the_shipped_table_holds_both_versions() -> None:
    table = snapshots()
    assert set(table) == {"leaderboard-2025", "423217d"}
    assert len(table["leaderboard-2025"].files) == 156 and len(table["423217d"].files) == 270
    assert all(re.fullmatch(r"[0-9a-f]{64}", h) for s in table.values() for h in s.files.values())
    assert table["leaderboard-2025"].files["2/14"] != table["423217d"].files["2/14"]  # 128x10x20, then 1024x8192x8192


@pytest.mark.skipif(not (SHARED / "kernelbench").is_dir(), reason="the shared KernelBench problem files are not here")
def test_the_shipped_table_is_what_the_script_makes_from_the_files() -> None:
    import importlib.util
    spec = importlib.util.spec_from_file_location("kv", ROOT / "scripts" / "kernelbench_versions.py")
    assert spec is not None and spec.loader is not None
    kv = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kv)
    assert kv.TABLE == TABLE
    assert dict(snapshots()["423217d"].files) == kv.scan(SHARED / "kernelbench" / "KernelBench")
    corpus = SHARED / "corpora" / "kernelbench-leaderboard-dev" / "problems"
    assert dict(snapshots()["leaderboard-2025"].files) == kv.scan(corpus)


def test_a_failure_while_checking_is_the_runs_flag_never_the_sites(monkeypatch: pytest.MonkeyPatch) -> None:
    from reporter.collect import refversion

    def boom(*_: object) -> None:
        raise RecursionError("a reference nested too deep")
    monkeypatch.setattr(refversion, "_snapshot_flag", boom)
    (flag,) = reference_flags(trace(NEW), TABLE_OF_TWO)
    assert flag.field == "reference_source" and "could not check which version" in flag.message and "RecursionError" in flag.message


def test_a_name_holding_a_token_is_redacted_in_the_flag(tmp_path: Path) -> None:
    from conftest import write_trace
    token = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"  # a GitHub token's shape, as an identifier
    doc = minimal_trace(benchmark="kernelbench", level=2, problem_id=14, rules="kernelbench-2025-11")
    doc.update(reference_source=f"import torch\n{token} = 4096\n", final_kernel={"source": f"{token} = 16\n"})
    write_trace(tmp_path, "run", doc)
    (run,) = collect(tmp_path).runs
    (flag,) = [f for f in run.flags if f.field == "reference_source"]
    assert token not in flag.message and "= 16 (the reference: 4096)" in flag.message
