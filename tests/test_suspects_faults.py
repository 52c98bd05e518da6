"""Suspect rules at their edges (issue 32's blind round: sus-* survivors): a stream named once in the streams flag,
"weak check" naming only what still passes, and the strict board counting a share of exactly STRICT_OWN_SHARE."""

from __future__ import annotations

from test_check_strength import _stored
from test_samples import _run

from reporter import aggregates as ag
from reporter.core import suspects
from reporter.core.schema import Attribution, CheckStrength, KernelShare, LaunchGroup
from reporter.core.vocab import Verdict
from reporter.frames import from_records


def test_a_stream_both_unwaited_and_unordered_is_named_in_one_sentence_only() -> None:
    att = Attribution((KernelShare("mine", LaunchGroup.SUBMISSION, 7, 1, 10.0),), call_stream=0, streams=(7, 9),
                      unwaited_streams=(7,), unordered_streams=(7, 9), source_kernels=("mine",))
    (flag,) = suspects.attribution_flags(att)
    assert flag.field == "attribution.streams"
    assert flag.message.startswith("work runs on stream(s) 7, which the call does not wait for")
    assert "work runs on stream(s) 9, which start(s) before" in flag.message and "stream(s) 7, 9" not in flag.message


def test_weak_check_names_only_the_wrong_answers_the_strengthened_inputs_still_accept() -> None:
    cs = CheckStrength(passes=("zeros", "another input's answer"), strengthen=("per-row scales",), still_pass=("zeros",))
    assert suspects.weak_check(_stored(Verdict.CORRECT, cs)) == "zeros"


def test_the_strict_board_counts_a_share_of_exactly_half() -> None:
    assert suspects.STRICT_OWN_SHARE == 0.5
    runs = [_run("m", 1, 0, True, 2.0, own_kernel_share=0.5),
            _run("m", 2, 0, True, 2.0, own_kernel_share=0.49)]
    table = ag.leaderboard(from_records(runs))
    assert int(table["strict_fast_1.0_n"].iloc[0]) == 1  # 0.5 counts, 0.49 does not
