"""A page per model (issue 37, item 6): counts, the model's board row, flags by kind, best and worst runs.

The expected figures are counted by hand from the runs written here and from data/'s runs as their run pages show
them (demo-beta: L1 p92 0.50x and p94 3.02x correct, p96 a compile error, p100 incorrect, on a board of n = 4;
Kimi-K2.6: L2 p10 correct at 0.11x, p8 incorrect where the harness recorded it correct, 15 flagged values)."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import cast

from reporter.core.vocab import RunVerdict, Source
from reporter.frames import COLUMNS
from reporter.render.modelpage import flag_kinds, model_view
from reporter.render.pages import Listed
from reporter.render.summary import WEAK_CHECK, RunSummary
from reporter.runrow import RunRow


def _listed(run_id: str, verdict: str, correct: bool, evidence: str = "", caveats: tuple[str, ...] = ()) -> Listed:
    s = RunSummary(verdict, Source.RE_VALIDATED, "1", None, None, "ms", "", None, None, 0, evidence, correct, caveats)
    return Listed(run_id, "m", True, s, f"runs/{run_id}.html", f"title {run_id}", f"sub {run_id}", f"runs/{run_id}.cu")


RUNS = [_listed("a", "correct", True), _listed("b", "correct", True), _listed("c", "correct", True),
        _listed("d", "correct", True), _listed("e", "correct", True, caveats=(WEAK_CHECK,)),
        _listed("f", "incorrect", False, "evidence-verdict"),
        _listed("g", RunVerdict.SUSPECT.value, True, "static-checks"),
        _listed("h", "compile_error", False, "evidence-verdict")]
ROWS: dict[str, RunRow] = {k: cast(RunRow, {**dict.fromkeys(COLUMNS), **v}) for k, v in {  # a table row has every column
    "a": {"speedup": 3.0}, "b": {"speedup": 2.0}, "c": {"speedup": 0.5}, "d": {"speedup": 1.5}, "e": {"speedup": 0.8},
    "f": {"speedup": None, "evidence": "evidence-verdict", "verdicts_disagree": True},
    "g": {"speedup": None, "evidence": "static-checks", "suspect_checks": "static:no_kernel_launch; transcript:reads_other_results"},
    "h": {"speedup": float("nan"), "review": "harness_bug"}}.items()}
FIELDS = {"a": ["run.tokens_total", "run.tokens_total", "timing.runtime"], "b": ["run.tokens_total"]}


def test_best_slowest_and_failures_are_picked_by_counting_speedup_and_verdict() -> None:
    v = model_view(RUNS, ROWS, FIELDS, None)
    assert [(r.href, r.shown) for r in v.best] == [("runs/a.html", "3.00x"), ("runs/b.html", "2.00x"), ("runs/d.html", "1.50x")]
    assert [(r.href, r.shown) for r in v.slowest] == [("runs/c.html", "0.50x"), ("runs/e.html", "0.80x")]  # never a best one again
    # not correct: f and h, in page order, each at its evidence; the suspect g is correct (never fast) so not here
    assert [(r.href, r.shown) for r in v.failures] == [("runs/f.html#evidence-verdict", "incorrect"),
                                                       ("runs/h.html#evidence-verdict", "compile error")]
    assert v.failures_n == 2 and v.board == () and v.board_href is None
    assert v.verdicts == "6 correct (1 of them suspect) · 1 compile error · 1 incorrect"  # as the tile: 6/8
    facts = {f.label: (f.value, f.sub) for f in v.facts}
    assert facts["runs"] == ("8", "8 re-validated by us · 0 as recorded")
    assert facts["correct"] == ("6/8", "0.75 · 6 by us · 0 as recorded")
    assert facts["suspect"] == ("1", "1 weak check")


def test_flag_kinds_count_runs_once_most_frequent_first_each_at_its_evidence() -> None:
    kinds = [(k.kind, k.detail, [r.href for r in k.runs]) for k in flag_kinds(RUNS, ROWS, FIELDS)]
    assert kinds == [
        ("recorded value flagged", "run.tokens_total", ["runs/a.html", "runs/b.html"]),  # twice in a: one run
        ("caveat", "weak check", ["runs/e.html"]),
        ("recorded value flagged", "timing.runtime", ["runs/a.html"]),
        ("reviewer's verdict", "harness_bug", ["runs/h.html#review"]),
        ("suspect finding", "static: no_kernel_launch", ["runs/g.html#static-checks"]),
        ("suspect finding", "transcript: reads_other_results", ["runs/g.html#static-checks"]),
        ("verdicts differ", "re-validation and the harness", ["runs/f.html#evidence-verdict"]),
    ]


def _text(page: Path) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8"))))


def test_the_sample_site_s_model_pages_repeat_their_board_rows_and_link_on(sample_site: Path) -> None:
    beta = sample_site / "models" / "kernelbench--example-sweep--demo-beta.html"
    text = _text(beta)
    # fast_1: only p94 (3.02x) is faster than 1x, of the board's n = 4; the geomean of 0.50x and 3.02x is 1.23x
    assert "fast₁ 0.25 1/4" in text and "geomean speedup 1.23x n=2" in text
    assert "2 correct · 1 compile error · 1 incorrect" in text
    assert re.search(r"Fastest counting runs L1 · problem 94 94_MSELoss\.py · 3\.02x L1 · problem 92 92_cumsum_exclusive\.py · 0\.50x", text)
    assert "Not correct (2) L1 · problem 96 96_HuberLoss.py · compile error L1 · problem 100 100_HingeLoss.py · incorrect" in text
    raw = beta.read_text(encoding="utf-8")
    assert 'href="../leaderboards/kernelbench--example-sweep.html"' in raw
    assert (sample_site / "leaderboards" / "kernelbench--example-sweep.html").is_file()
    kimi = _text(sample_site / "models" / "popcorn--l12-default-gpt--kimi-k2.6.html")
    # its one correct run is 0.11x: correct (fast_0) but never fast_1
    assert "fast₁ 0.00 0/2" in kimi and "geomean speedup 0.11x n=1" in kimi and "rank 1 2/2 problems attempted" in kimi
    assert "recorded value flagged nsight.bottleneck 2" in kimi and "recorded value flagged nsight.l2_hit_pct 1" in kimi
    assert "verdicts differ re-validation and the harness 1 L2 · problem 8" in kimi
    assert "flags 15" in kimi


def test_a_kind_names_three_runs_and_counts_the_rest() -> None:
    (kind,) = flag_kinds(RUNS[:4], {}, {r: ["timing.runtime"] for r in "abcd"})
    assert [r.href for r in kind.shown] == ["runs/a.html", "runs/b.html", "runs/c.html"] and kind.more == "and 1 more"
    (one,) = flag_kinds(RUNS[:1], {}, {"a": ["timing.runtime"]})
    assert one.more == ""
