"""`reporter review` (issue 37, item 4): a verdict written by the command reads back as the build reads it, judges
the kernel it names, and is refused (nothing written) when its quote points nowhere or the kernel is judged already."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

import reporter
from conftest import DATA
from reporter import aggregates as ag
from reporter.cli import main
from reporter.collect.read import read_trace
from reporter.collect.reviews import ReviewVerdict, load_reviews
from reporter.core.records import sha256_text

RUN = "kernelbench-sweep/kernelbench-level1_demo-alpha/l1-p94-s0"


def _data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(DATA / "kernelbench-sweep", data / "kernelbench-sweep")
    return data


def _review(data: Path, *args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, ["review", "--data", str(data), *args])
    return res.exit_code, res.output


def test_a_verdict_round_trips_through_reviews_toml(tmp_path: Path) -> None:
    data = _data(tmp_path)
    (data / "reviews.toml").write_text("# audits of the sweep\n")
    note = 'copies "demo-beta"\'s loop\\ verbatim; see ünïcode'
    code, out = _review(data, RUN, "--verdict", "contamination", "--quote", "kernel.py:3-5", "--note", note, "--reviewer", "ada")
    assert code == 0, out
    sha = sha256_text(read_trace(data / RUN / "trace.json").final_kernel.source)  # type: ignore[union-attr]
    (r,) = load_reviews(data).clearances
    assert (r.run, r.kernel_sha256, r.reviewer, r.verdict, r.quote, r.note) == (RUN, sha, "ada", ReviewVerdict.CONTAMINATION, "kernel.py:3-5", note)
    assert (data / "reviews.toml").read_text().startswith("# audits of the sweep\n")  # appended, never rewritten
    # a second verdict on the same kernel is refused, naming the first
    code, out = _review(data, str(data / RUN), "--verdict", "clean", "--note", "fine", "--reviewer", "bo")
    assert code != 0 and "already judges this kernel (review[0]: contamination by ada)" in out
    assert len(load_reviews(data).clearances) == 1
    # contamination leaves the rankings, as a reward hack does, and the grid says which it was
    runs = reporter.load(data)
    row = runs.set_index("run_id").loc[RUN]
    assert (bool(row["suspect"]), row["review"], bool(row["reviewed_hack"])) == (True, "contamination", False)
    cell = ag.grid(runs).set_index("run_id").loc[RUN]
    assert (cell["state"], bool(cell["counts"])) == ("contamination", False)


def test_a_quote_outside_the_kernel_or_transcript_and_an_unknown_run_write_nothing(tmp_path: Path) -> None:
    data = _data(tmp_path)
    code, out = _review(data, RUN, "--verdict", "reward_hack", "--quote", "kernel.py:999", "--note", "x", "--reviewer", "ada")
    assert code != 0 and "kernel.py has lines 1-" in out
    code, out = _review(data, RUN, "--verdict", "reward_hack", "--quote", "turn 4", "--note", "x", "--reviewer", "ada")
    assert code != 0 and "this run's transcript has no turns" in out
    code, out = _review(data, RUN, "--verdict", "reward_hack", "--note", "x", "--reviewer", "ada")
    assert code != 0 and "kernel.py:LINE" in out  # every verdict but clean needs its evidence
    code, out = _review(data, "l1-p94-s0", "--verdict", "clean", "--note", "x", "--reviewer", "ada")
    assert code != 0 and "runs with that name: " + RUN in out
    code, out = _review(data, RUN, "--verdict", "clean", "--note", "x")
    assert code != 0 and "--reviewer" in out
    assert not (data / "reviews.toml").exists()


def test_the_reviewer_comes_from_the_configuration(tmp_path: Path) -> None:
    data = _data(tmp_path)
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text('[tool.reporter]\ndata = "data"\n[tool.reporter.audit]\nreviewer = "grace"\n')
    res = CliRunner().invoke(main, ["--config", str(cfg), "review", RUN, "--verdict", "interesting", "--quote", "kernel.py:1",
                                    "--note", "an unusual tiling"])
    assert res.exit_code == 0, res.output
    assert [(r.reviewer, r.verdict) for r in load_reviews(data).clearances] == [("grace", ReviewVerdict.INTERESTING)]
