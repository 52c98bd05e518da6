"""Page data for a run's cheat findings and review: each finding with its evidence, and the run's status.

The static scan and the transcript check read the trace at collect time (`collect.traces`), so a build
without a GPU shows them too; what re-validation measured joins them through `collect.suspicion`. A
static finding links to its line in the final kernel and to the turn whose tool call first wrote that
line; a transcript finding links to its turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..collect.reviews import QUOTE, REVIEWS_FILE, VERDICT_LABEL, Review, ReviewVerdict
from ..collect.suspicion import Suspicion
from ..collect.traces import RunRecord
from ..collect.transcript import argument_strings
from ..core.records import Turn
from ..core.vocab import ReviewStatus
from . import text

KERNEL_LINE = "kernel-L"  # the final kernel's line anchors: #kernel-L42


@dataclass(frozen=True)
class FindingRow:
    css: str
    check: str
    severity: str
    line: str
    code: str
    message: str
    line_href: str = ""  # "#kernel-L42"
    turn: int | None = None  # the turn whose tool call first wrote this line, or that names the harness's file


@dataclass(frozen=True)
class ReviewView:
    verdict: str
    reviewer: str
    note: str
    quote: str
    quote_href: str


@dataclass(frozen=True)
class FindingsView:
    rows: tuple[FindingRow, ...]
    status: ReviewStatus
    banner: str  # what the status means for this run, in a sentence or two
    kernel_sha256: str
    review_problem: str
    reasons: tuple[tuple[str, str, str], ...] = ()  # (check, message, "#anchor") of every reason it is suspect
    review: ReviewView | None = None


def first_turn_writing(turns: Sequence[Turn], line: str) -> int | None:
    """The first turn one of whose tool calls sent `line` (a stripped source line) in its arguments."""
    needle = line.strip()
    if not needle:
        return None
    for turn in turns:
        if any(needle in s for call in turn.calls for s in argument_strings(call.arguments)):
            return turn.index
    return None


def quote_href(quote: str) -> str:
    m = QUOTE.fullmatch(quote)
    if m is None:
        return ""
    if m.group("turn"):
        return f"#turn-{m.group('turn')}"
    return f"#{KERNEL_LINE}{m.group('line')}" if m.group("file") == "kernel.py" else "#reference"


def _review(review: Review | None) -> ReviewView | None:
    if review is None:
        return None
    return ReviewView(VERDICT_LABEL[review.verdict], review.reviewer, review.note, review.quote, quote_href(review.quote))


def _banner(sus: Suspicion) -> str:
    status = sus.status
    if status in (ReviewStatus.REWARD_HACK, ReviewStatus.CONTAMINATION):
        return (f"{VERDICT_LABEL[ReviewVerdict(status.value)].capitalize()}, in the words of reviewer {sus.review.reviewer if sus.review else '?'}: left out of fast_p and the "
                f"geomean; the evidence stays below ({REVIEWS_FILE}, for this kernel's sha256).")
    if status is ReviewStatus.SUSPECT:
        n = len(sus.reasons)
        return (f"Suspect: {n} finding{'s' if n != 1 else ''} below, {'each ' if n != 1 else ''}with its evidence. This run is left out of fast_p and "
                f"the geomean until a reviewer judges this exact kernel in {REVIEWS_FILE} beside the data.")
    if status is ReviewStatus.CLEARED and sus.review is not None:
        rv = sus.review
        how = "Cleared" if rv.verdict is ReviewVerdict.CLEAN else f"Judged a {VERDICT_LABEL[rv.verdict]}, and counted,"
        return f"{how} by {rv.reviewer}: {rv.note} (recorded in {REVIEWS_FILE} for this kernel's sha256)."
    return "Only warnings: worth a look, they do not change the verdict." if sus.warnings else "No known cheat pattern found."


def findings_view(r: RunRecord, sus: Suspicion) -> FindingsView | None:
    """None when the run submitted no kernel."""
    sha = r.kernel_hash
    if sha is None:
        return None
    turns = r.trace.turns
    rows = tuple(FindingRow("bad" if f.severity == "error" else "", f.check, f.severity,
                            str(f.line) if f.line is not None else text.DASH, f.text, f.message,
                            f"#{KERNEL_LINE}{f.line}" if f.line is not None else "",
                            f.turn if f.turn is not None else first_turn_writing(turns, f.text) if f.line is not None else None)
                 for f in r.findings)
    reasons = tuple((x.check, x.message, f"#{x.anchor}") for x in sus.reasons)
    return FindingsView(rows, sus.status, _banner(sus), sha, r.review_problem, reasons, _review(sus.review))
