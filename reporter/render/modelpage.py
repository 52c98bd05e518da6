"""A page per model (issue 37, item 6): what a researcher looks at first for one model in one benchmark ×
configuration. Its runs' counts (how often right, by whom, how many suspect), the model's row of the group's
all-levels leaderboard (rank, fast₁, geomean, fraction of speed of light, pass@k, tokens, audits: the board's own
figures, repeated, never recomputed another way), its flags by kind with the runs that carry each, and its best
and worst runs, each linking on. Page data only: the figures come from the runs' summaries and table rows and
from `boards.model_boards`."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

from ..aggregates import FAST_P
from ..core.vocab import RunVerdict, Source
from ..frames import COLUMNS
from ..runrow import RunRow
from . import numbers
from .boards import ModelBoard
from .summary import CHECKS_INCOMPLETE, WEAK_CHECK, RunSummary


class Listed(Protocol):
    """A run as a listing row (`pages.Listed`): what this page reads of it."""

    @property
    def run_id(self) -> str: ...
    @property
    def summary(self) -> RunSummary: ...
    @property
    def href(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def sub(self) -> str: ...

SHOWN_RUNS = 3  # best and slowest counting runs listed
SHOWN_FAILURES = 5  # runs not correct listed (the table below has them all)
SHOWN_PER_KIND = 3  # runs named for each kind of flag
EXCLUDED = (RunVerdict.SUSPECT, RunVerdict.REWARD_HACK, RunVerdict.CONTAMINATION)


@dataclass(frozen=True)
class Fact:
    label: str
    value: str
    sub: str = ""  # a second line
    title: str = ""  # how it was counted


@dataclass(frozen=True)
class RunLink:
    href: str
    title: str
    sub: str
    shown: str  # the speedup, or the verdict
    verdict: str


@dataclass(frozen=True)
class FlagKind:
    """One kind of flag and the runs of this model that carry it."""

    kind: str  # "suspect finding", "recorded value flagged", "reviewer's verdict", "caveat", "verdicts differ"
    detail: str  # the check, field, verdict or caveat
    runs: tuple[RunLink, ...]  # each at its evidence where the page has an anchor for it

    @property
    def shown(self) -> tuple[RunLink, ...]:
        return self.runs[:SHOWN_PER_KIND]

    @property
    def more(self) -> str:
        """"and 4 more" where the page names only some of the runs."""
        n = len(self.runs) - SHOWN_PER_KIND
        return f"and {n} more" if n > 0 else ""


@dataclass(frozen=True)
class ModelView:
    facts: tuple[Fact, ...]
    board: tuple[Fact, ...]  # the model's row of the all-levels board; () when it has no comparable run
    board_href: str | None
    board_heading: str
    board_sentence: str
    rank_title: str
    kinds: tuple[FlagKind, ...]
    best: tuple[RunLink, ...]
    slowest: tuple[RunLink, ...]
    failures: tuple[RunLink, ...]
    failures_n: int
    failures_more: bool  # the page lists only some of the runs not correct
    verdicts: str  # "3 correct · 1 incorrect · 1 compile error"


# A run without a table row (its row could not be made: the page says why) reads as every column unknown.
EMPTY_ROW = cast(RunRow, dict.fromkeys(COLUMNS))


def _speedup(row: RunRow) -> float | None:
    """The run's counting speedup (`frames`: None where it is not a result: not correct, or suspect)."""
    v = row["speedup"]
    return float(v) if isinstance(v, (int, float)) and not math.isnan(float(v)) and float(v) > 0 else None


def _link(x: Listed, shown: str, anchor: str = "") -> RunLink:
    return RunLink(x.href + (f"#{anchor}" if anchor else ""), x.title, x.sub, shown, x.summary.verdict)


def counts(xs: Sequence[Listed]) -> tuple[Fact, ...]:
    """The model's runs counted as the index and the group page count them (suspect runs count as correct ones
    there too, never as fast)."""
    n = len(xs)
    correct = [x for x in xs if x.summary.correct]
    ours = sum(1 for x in correct if x.summary.verdict_source == Source.RE_VALIDATED)
    reval = sum(1 for x in xs if x.summary.verdict_source == Source.RE_VALIDATED)
    suspect = sum(1 for x in xs if x.summary.verdict in EXCLUDED)
    weak = sum(1 for x in xs if WEAK_CHECK in x.summary.caveats)
    incomplete = sum(1 for x in xs if CHECKS_INCOMPLETE in x.summary.caveats)
    caveats = " · ".join(w for w in (f"{weak} weak check" if weak else "", f"{incomplete} checks incomplete" if incomplete else "") if w)
    return (Fact("runs", str(n), f"{reval} re-validated by us · {n - reval} as recorded"),
            Fact("correct", f"{len(correct)}/{n}", f"{numbers.share(len(correct), n)} · {ours} by us · {len(correct) - ours} as recorded",
                 "runs whose kernel is correct: by our re-validation where there is one, else as the harness recorded it "
                 "(suspect ones too, as on the leaderboards)"),
            Fact("suspect", str(suspect), caveats,
                 "runs a check marked suspect (no reviewer cleared them) or a reviewer called a reward hack or contamination: "
                 "left out of fast_p and the geomean"),
            Fact("flags", str(sum(x.summary.flags for x in xs)), "", "flagged recorded values and the findings that make runs suspect"))


def board_facts(b: ModelBoard) -> tuple[Fact, ...]:
    """The model's row of the board, cell by cell, with the board's own words for each."""
    r = b.row
    fast1 = dict(zip(FAST_P, r.fast, strict=True)).get(1.0)  # the board's cells are fast_p for every p of FAST_P
    out = [Fact("rank", r.rank or numbers.DASH, r.problems + " problems attempted" + (f" · {r.not_attempted}" if r.not_attempted else "")),
           Fact("correct", str(r.correct), r.correct_split, r.correct_title)]
    if fast1 is not None:
        out.append(Fact("fast₁", fast1.shown, " · ".join(w for w in (fast1.count, fast1.with_suspects, fast1.own) if w), fast1.title))
    out.append(Fact("geomean speedup", r.geomean_shown, " · ".join(w for w in (r.geomean_n, r.geomean_with_suspects) if w),
                    "geometric mean of the counting speedups, best run per problem"))
    out.append(Fact("fraction of speed of light", r.sol_shown, r.sol_n, "geomean over the counting runs that have one"))
    s = b.samples
    if s is not None:
        pass1, passk = s.cells[0], s.cells[1]
        out.append(Fact("pass@1", pass1.shown, s.samples, pass1.title))
        if passk.shown != numbers.DASH:
            out.append(Fact(passk.title.split(",")[0], passk.shown, s.samples, passk.title))
        out.append(Fact("tokens per correct kernel", s.per_correct.shown, f"per fast kernel: {s.per_fast.shown}", s.per_correct.title))
        out.append(Fact("audited", s.audited.shown, "audit pending" if s.pending else "", s.audited.title))
    return tuple(out)


def flag_kinds(xs: Sequence[Listed], rows: Mapping[str, RunRow], fields: Mapping[str, Sequence[str]]) -> tuple[FlagKind, ...]:
    """Every kind of flag among the runs, most frequent first: suspect findings by check (cleared ones too, marked),
    recorded values flagged by field, reviewers' verdicts, caveats on verdicts, verdicts that differ from the
    harness's. `rows` are the runs' table rows, `fields` each run's flagged fields."""
    found: dict[tuple[str, str], list[RunLink]] = defaultdict(list)
    for x in xs:
        row = rows.get(x.run_id) or EMPTY_ROW
        evidence = str(row["evidence"] or "")
        for check in filter(None, str(row["suspect_checks"] or "").split("; ")):
            found[("suspect finding", check.replace(":", ": ", 1))].append(_link(x, x.summary.verdict, evidence))
        for field in dict.fromkeys(fields.get(x.run_id, ())):
            found[("recorded value flagged", field)].append(_link(x, x.summary.verdict))
        if row["review"]:
            found[("reviewer's verdict", str(row["review"]))].append(_link(x, x.summary.verdict, "review"))
        for caveat in x.summary.caveats:
            found[("caveat", caveat)].append(_link(x, x.summary.verdict))
        if row["verdicts_disagree"] is True:
            found[("verdicts differ", "re-validation and the harness")].append(_link(x, x.summary.verdict, evidence))
    ordered = sorted(found.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return tuple(FlagKind(kind, detail, tuple(links)) for (kind, detail), links in ordered)


def model_view(xs: Sequence[Listed], rows: Mapping[str, RunRow], fields: Mapping[str, Sequence[str]],
               board: ModelBoard | None) -> ModelView:
    """The page data of one model's page: `xs` its runs in page order, `rows` their table rows by run id, `fields`
    their flagged recorded fields, `board` its row of the group's all-levels board (None: no comparable run)."""
    timed = sorted(((s, x) for x in xs if (s := _speedup(rows.get(x.run_id) or EMPTY_ROW)) is not None), key=lambda p: (-p[0], p[1].run_id))
    best = tuple(_link(x, numbers.speedup(s)) for s, x in timed[:SHOWN_RUNS])
    rest = timed[SHOWN_RUNS:]
    slowest = tuple(_link(x, numbers.speedup(s)) for s, x in sorted(rest, key=lambda p: (p[0], p[1].run_id))[:SHOWN_RUNS])
    failed = [x for x in xs if not x.summary.correct]
    failures = tuple(_link(x, x.summary.verdict.replace("_", " "), x.summary.evidence) for x in failed[:SHOWN_FAILURES])
    return ModelView(counts(xs), board_facts(board) if board else (), board.href if board else None,
                     board.heading if board else "", board.sentence if board else "",
                     "rank among the board's models by fast₁, then the geomean", flag_kinds(xs, rows, fields),
                     best, slowest, failures, len(failed), len(failed) > len(failures), verdict_words(xs))


def verdict_words(xs: Sequence[Listed]) -> str:
    """"69 correct (1 of them suspect) · 3 incorrect": correct runs counted as the tile above counts them, a
    suspect mark never taking a correct run out of that count."""
    correct = [x for x in xs if x.summary.correct]
    marked = [x for x in correct if x.summary.verdict in EXCLUDED]
    # correct under the run's own rules (a replay says so) though our audit says otherwise: the listing's note says why
    theirs = sum(1 for x in correct if x.summary.verdict not in EXCLUDED and x.summary.verdict != RunVerdict.CORRECT)
    notes = [f"{len(marked)} of them {_marks(marked)}"] * bool(marked) + \
        [f"{theirs} of them under the run's own rules only, not our audit"] * bool(theirs)
    others = Counter(x.summary.verdict for x in xs if not x.summary.correct)
    words = [f"{len(correct)} correct" + (f" ({'; '.join(notes)})" if notes else "")] if correct else []
    words += [f"{n} {v.replace('_', ' ')}" for v, n in sorted(others.items(), key=lambda kv: (-kv[1], kv[0]))]
    return " · ".join(words)


def _marks(marked: Sequence[Listed]) -> str:
    """What the marks on correct runs say: "suspect", or "suspect or reward hack" where they differ."""
    return " or ".join(sorted({x.summary.verdict.replace("_", " ") for x in marked}))
