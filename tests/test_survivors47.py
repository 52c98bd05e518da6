"""Issue 47: the survivors of a stranger's blind faults, each pinned by a test that iterates its vocabulary by member
or feeds the hostile value to the one function that must escape or redact it. Expected words are written here."""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest

from reporter.collect.redact import Redactor
from reporter.collect.reviews import ReviewVerdict
from reporter.core.vocab import ReviewStatus, RunVerdict, Source
from reporter.render import text
from reporter.render.modelpage import counts, verdict_words
from reporter.render.pages import Listed
from reporter.render.summary import RunSummary


def test_words_escapes_every_word_hyphenated_or_not() -> None:
    out = str(text.words('<img src=x onerror=alert(1)> a-<b>b</b> "q"'))
    assert "<img" not in out and "<b>" not in out and "&lt;img" in out and "&lt;b&gt;b&lt;/b&gt;" in out
    assert '<span class="w">a-&lt;b&gt;b&lt;/b&gt;</span>' in out  # the hyphenated word, wrapped and escaped


@pytest.mark.parametrize("head", ["-----BEGIN OPENSSH PRIVATE KEY-----", "-----BEGIN RSA PRIVATE KEY-----",
                                  "-----BEGIN PGP PRIVATE KEY BLOCK-----"])
def test_a_private_key_cut_off_before_its_end_line_is_still_redacted(head: str) -> None:
    lines = ["MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
             "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK", "=AbCd"]
    log = f"cat ~/.ssh/id\n{head}\n" + "\n".join(lines) + "\n[process killed]"  # no END line: the log stops mid-key
    found: Counter[str] = Counter()
    out = Redactor().text(log, found)
    assert not [line for line in lines if line in out] and found["private-key"] == 1
    assert out.count("\n") == log.count("\n")


# Every review status, with words its banner must hold and words it must not: a reviewer's verdict is never contradicted
BANNER = {
    ReviewStatus.REWARD_HACK: ("Reward hack, in the words of reviewer bo", "until a reviewer judges"),
    ReviewStatus.CONTAMINATION: ("Contamination, in the words of reviewer bo", "until a reviewer judges"),
    ReviewStatus.SUSPECT: ("until a reviewer judges this exact kernel", "in the words of reviewer"),
    ReviewStatus.CLEARED: ("Cleared by bo: looked fine", "left out of fast_p"),
    ReviewStatus.WARNINGS: ("Only warnings", "left out of fast_p"),
    ReviewStatus.CLEAN: ("No known cheat pattern found", "left out of fast_p"),
}


def test_every_review_status_has_a_banner_that_agrees_with_the_review() -> None:
    from reporter.collect.reviews import Review
    from reporter.collect.suspicion import Reason, Suspicion
    from reporter.render.findings import _banner
    assert set(BANNER) == set(ReviewStatus)
    reason = Reason("static", "no_kernel_launch", "no launch", "static-checks")
    for status, (must, never) in BANNER.items():
        verdict = {ReviewStatus.REWARD_HACK: ReviewVerdict.REWARD_HACK, ReviewStatus.CONTAMINATION: ReviewVerdict.CONTAMINATION,
                   ReviewStatus.CLEARED: ReviewVerdict.CLEAN}.get(status)
        review = Review("r", "0" * 64, "bo", "looked fine", verdict, "turn 0") if verdict is not None else None
        reasons = (reason,) if status in (ReviewStatus.SUSPECT, ReviewStatus.CLEARED, ReviewStatus.REWARD_HACK) else ()
        sus = Suspicion(reasons, review, warnings=1 if status is ReviewStatus.WARNINGS else 0)
        assert sus.status is status
        words = _banner(sus)
        assert must in words and never not in words, (status, words)


def _listed(run_id: str, verdict: str, correct: bool) -> Listed:
    s = RunSummary(verdict, Source.RE_VALIDATED, "1", None, None, "ms", "", None, None, 0, "", correct)
    return Listed(run_id, "m", True, s, f"runs/{run_id}.html", run_id, run_id, f"runs/{run_id}.cu")


# Each verdict a listing can show, by member: does it count as a suspect run on the model page?
SUSPECT_ON_MODEL_PAGE = {RunVerdict.SUSPECT: True, RunVerdict.REWARD_HACK: True, RunVerdict.CONTAMINATION: True}


def test_the_model_page_counts_every_excluding_mark_as_suspect() -> None:
    marks = [v for v in RunVerdict if SUSPECT_ON_MODEL_PAGE.get(v, False)]
    assert {v.value for v in marks} == {"suspect", "reward_hack", "contamination"}
    xs = [_listed(v.value, v.value, True) for v in marks] + [_listed("ok", "correct", True), _listed("bad", "incorrect", False)]
    facts = {f.label: f.value for f in counts(xs)}
    assert facts["suspect"] == "3" and facts["correct"] == "4/5"
    assert verdict_words(xs) == "4 correct (3 of them contamination or reward hack or suspect) · 1 incorrect"


def test_the_cross_gpu_page_counts_gpus_from_names_not_labels() -> None:
    from reporter.render.crossgpu import cross_gpu_page
    from reporter.render.urls import Urls
    rows = [{"run_id": f"{m}/p{p}", "benchmark": "kb", "configuration": "c", "level": 1, "problem_id": p, "problem": f"{p}_P.py",
             "model": m, "complete": True, "sol_fraction": 0.5, "sol_gpu": "L40S", "speedup_source": "recorded"}
            for m in ("a", "b") for p in (1, 2)]
    urls = Urls.build([str(r["run_id"]) for r in rows], [("kb", "c")], [(("kb", "c"), m) for m in ("a", "b")],
                      [(1, p, f"{p}_P.py") for p in (1, 2)])
    page = cross_gpu_page(pd.DataFrame(rows), urls)
    (group,) = page.context["groups"]
    assert group.gpus == "1 GPU"  # two models' times, all on one L40S
