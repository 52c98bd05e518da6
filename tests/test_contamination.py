"""Contamination in transcripts (issue 37, item 5): tool calls that read another run's kernels or results, this
site's published results or a public leaderboard make the run suspect, with the turn as evidence; an honest agent's
own files and documentation never do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import minimal_trace, write_trace
from reporter.collect import collect
from reporter.collect.transcript import CONTAMINATION, scan_transcript
from reporter.core.records import Turn

OWN = (1, 92, 0)  # the run's own level, problem and sample


def _turns(*commands: Any) -> list[Turn]:
    return [Turn(index=i, calls=({"tool": tool, "arguments": args},)) for i, (tool, args) in enumerate(commands)]


@pytest.mark.parametrize("tool, args, what, name", [
    ("bash", {"command": "cat ../runs/level1_demo-beta/level_1_problem_92_sample_0_kernel.py"}, "another run's kernel",
     "runs/level1_demo-beta/level_1_problem_92_sample_0_kernel.py"),  # another model's sample of the same problem
    ("read_file", {"path": "level_1_problem_92_sample_3_kernel.py"}, "another run's kernel", "level_1_problem_92_sample_3_kernel.py"),
    ("bash", {"command": "jq '.\"92\"' /sweeps/level1_gpt/eval_results.json"}, "another run's results", "eval_results.json"),
    ("bash", {"command": "ls data/validation/0ef2f695a1860cf4d52d/"}, "another run's results", "validation/0ef2f695a1860cf4d52d"),
    ("fetch", {"url": "https://example.github.io/report/runs.csv"}, "this site's published results", "runs.csv"),
    ("fetch", {"url": "https://example.github.io/report/leaderboards/kernelbench--sweep.html"}, "this site's published results",
     "leaderboards/kernelbench--sweep.html"),
    ("bash", {"command": "curl -s site/runs/l1-p92-s1.kernel.py"}, "this site's published results", "runs/l1-p92-s1.kernel.py"),
    ("web_search", {"query": "site:kernelbench.com cumsum exclusive fastest"}, "a public leaderboard", "kernelbench.com"),
    ("fetch", {"url": "https://scalingintelligence.stanford.edu/KernelBenchLeaderboard/"}, "a public leaderboard",
     "KernelBenchLeaderboard"),
    ("fetch", {"args": ["https://huggingface.co/datasets/ScalingIntelligence/kernelbench-samples"]}, "a public leaderboard",
     "huggingface.co/datasets/ScalingIntelligence"),
])
def test_a_read_of_other_results_is_a_finding_at_its_turn(tool: str, args: dict[str, Any], what: str, name: str) -> None:
    turns = _turns(("bash", {"command": "cat reference.py"}), (tool, args))
    (f,) = scan_transcript(turns, OWN)
    assert (f.check, f.severity, f.turn) == (CONTAMINATION, "error", 1)
    assert f"reads {what} ({name})" in f.message
    assert f.text.startswith(f"{tool}: ")


def test_an_honest_agent_reading_its_own_work_and_documentation_trips_nothing() -> None:
    turns = _turns(
        ("bash", {"command": "cat /workspace/KernelBench/KernelBench/level1/92_cumsum_exclusive.py"}),  # its own problem file
        ("read_file", {"path": "level_1_problem_92_sample_0_kernel.py"}),  # its own sample's kernel, as the harness names it
        ("fetch", {"url": "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#shared-memory"}),
        ("write_file", {"path": "runs.csv", "content": "my own timings; see kernelbench.com for the rules"}),  # its own file
        ("bash", {"command": "python bench.py --out results.csv && ls runs/"}),
        ("bash", {"command": "grep -n 'leaderboard' notes.md"}),
    )
    assert scan_transcript(turns, OWN) == []


def test_the_kernelbench_file_of_a_run_without_ids_counts_as_another_runs() -> None:
    turns = _turns(("read_file", {"path": "level_1_problem_92_sample_0_kernel.py"}))
    assert [f.check for f in scan_transcript(turns)] == [CONTAMINATION]


def test_one_finding_per_name_and_the_harness_check_first() -> None:
    turns = _turns(("bash", {"command": "cat runs.csv"}), ("bash", {"command": "cat timing.py runs.csv eval_results.json"}))
    found = scan_transcript(turns, OWN)
    assert [(f.check, f.turn) for f in found] == [("reads_harness_files", 1), (CONTAMINATION, 0), (CONTAMINATION, 1)]


def test_a_contaminated_run_is_suspect_and_links_its_turn(tmp_path: Path) -> None:
    doc = minimal_trace(problem_id=92, sample=0)
    doc["final_kernel"] = {"source": "from torch.utils.cpp_extension import load_inline\n__global__ void k() {}\n"}
    doc["turns"] = [{"index": 0, "calls": [{"tool": "bash", "arguments": {"command": "cat README.md"}}]},
                    {"index": 1, "calls": [{"tool": "fetch", "arguments": {"url": "https://kernelbench.com/runs/92"}}]}]
    write_trace(tmp_path / "data", "copier", doc)
    (run,) = collect(tmp_path / "data").runs
    assert run.suspect and [(f.check, f.turn) for f in run.findings] == [(CONTAMINATION, 1)]
