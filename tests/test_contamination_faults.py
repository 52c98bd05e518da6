"""Contamination's honest twin and its public leaderboards in any case (issue 32's blind round: ct-* survivors)."""

from __future__ import annotations

from test_contamination import OWN, _turns

from reporter.collect.transcript import CONTAMINATION, scan_transcript


def test_a_write_tool_named_in_capitals_writing_runs_csv_is_its_own_file() -> None:
    for tool in ("Write", "EDIT_FILE", "SaveFile"):
        assert scan_transcript(_turns((tool, {"path": "runs.csv", "content": "my timings"})), OWN) == [], tool


def test_a_leaderboard_named_in_capitals_is_still_a_leaderboard() -> None:
    for url in ("https://KernelBench.com/leaderboard", "https://HuggingFace.co/datasets/ScalingIntelligence/kernelbench-samples"):
        (f,) = scan_transcript(_turns(("fetch", {"url": url})), OWN)
        assert (f.check, f.turn) == (CONTAMINATION, 0) and "reads a public leaderboard" in f.message, url
