"""Why a run is suspect, from everything that can say so, each reason with the place of its evidence.

Sources: the static scan and the transcript check (collect time, `RunRecord.findings`); the launch
attribution rules (`suspects.attribution_flags`) and the named dynamic checks (`validate.dynamic`) of the
cached re-validation. A reviewer's verdict on the exact kernel (`reviews.toml`) clears them (clean, rubric
leak, harness bug) or leaves the run out of the rankings as a reward hack. Results measured before a
check existed carry none of its findings: that check was not measured, and says nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.records import ValidationResult
from ..core.schema import DynamicCheck, Verdict
from ..core.suspects import attribution_flags, dynamic_findings
from ..core.vocab import ReviewStatus
from .reviews import Review, ReviewVerdict
from .sol import SOL_ANCHOR, floor_flags
from .traces import RunRecord

# Where on a run page each kind of evidence is (`templates/run.html` gives these ids).
ATTRIBUTION_ANCHOR = "evidence-launches"
DYNAMIC_ANCHOR = "evidence-dynamic"
STATIC_ANCHOR = "static-checks"
VERDICT_ANCHOR = "evidence-verdict"


@dataclass(frozen=True)
class Reason:
    """One error-level finding that makes a run suspect, and the anchor of its evidence on the run page."""

    source: str  # "static", "transcript", "launches", "dynamic" or "floor"
    check: str
    message: str
    anchor: str


@dataclass(frozen=True)
class Suspicion:
    reasons: tuple[Reason, ...]
    review: Review | None
    warnings: int = 0  # warn-level static findings: worth a look, never suspect

    @property
    def cleared(self) -> bool:
        return self.review is not None and self.review.clears

    @property
    def reward_hack(self) -> bool:
        return self.review is not None and self.review.verdict is ReviewVerdict.REWARD_HACK

    @property
    def contaminated(self) -> bool:
        return self.review is not None and self.review.verdict is ReviewVerdict.CONTAMINATION

    @property
    def rejected(self) -> bool:
        """A reviewer's verdict that leaves the run out of the rankings (`reviews.EXCLUDING`)."""
        return self.review is not None and self.review.excludes

    @property
    def suspect(self) -> bool:
        """Flagged by a check and not cleared by a reviewer."""
        return bool(self.reasons) and not self.cleared

    @property
    def excluded(self) -> bool:
        """Left out of fast_p and the geomean: suspect, or a reviewer's reward hack or contamination."""
        return self.suspect or self.rejected

    @property
    def status(self) -> ReviewStatus:
        if self.reward_hack:
            return ReviewStatus.REWARD_HACK
        if self.contaminated:
            return ReviewStatus.CONTAMINATION
        if self.suspect:
            return ReviewStatus.SUSPECT
        if self.reasons and self.cleared:
            return ReviewStatus.CLEARED
        return ReviewStatus.WARNINGS if self.warnings else ReviewStatus.CLEAN

    @property
    def anchor(self) -> str:
        """Where the first reason's evidence is (the reviewer's verdict for a reward hack)."""
        return "review" if self.rejected or not self.reasons else self.reasons[0].anchor


def _finding_anchor(line: int | None, turn: int | None) -> str:
    """A finding's evidence: its line in the final kernel, or the turn whose tool call shows it."""
    if turn is not None:
        return f"turn-{turn}"
    return f"kernel-L{line}" if line is not None else STATIC_ANCHOR


def runtime_reasons(result: ValidationResult | None) -> list[Reason]:
    """The reasons re-validation measured; none for a result without them (measured before they were kept)."""
    if result is None:
        return []
    att = result.kernel_launches.attribution if result.kernel_launches else None
    out = [Reason("launches", f.field, f.message, ATTRIBUTION_ANCHOR) for f in attribution_flags(att)]
    names = {c.value for c in DynamicCheck}
    out += [Reason("dynamic", d.check, d.detail, f"{DYNAMIC_ANCHOR}-{d.check}") for d in dynamic_findings(result)
            if d.tripped and d.check in names]
    return out


def suspicion(r: RunRecord, result: ValidationResult | None) -> Suspicion:
    """Everything that makes this run suspect, static first, then what re-validation measured."""
    reasons = [Reason("transcript" if f.turn is not None else "static", f.check, f.message, _finding_anchor(f.line, f.turn))
               for f in r.findings if f.severity == "error"]
    reasons += runtime_reasons(result)
    reasons += [Reason("floor", f.field, f.message, SOL_ANCHOR) for f in floor_flags(r, result)]  # issue 33: the hardware floor
    warnings = sum(1 for f in r.findings if f.severity != "error")
    return Suspicion(tuple(reasons), r.review, warnings)


def evidence_anchor(sus: Suspicion, result: ValidationResult | None) -> str:
    """Where on the run page the evidence for its mark is: why suspect, or why not correct; "" for none."""
    if sus.excluded:
        return sus.anchor
    if result is not None and result.verdict != Verdict.CORRECT:
        return VERDICT_ANCHOR
    return ""


def flag_count(r: RunRecord, sus: Suspicion) -> int:
    """A run's flags as every page and the runs table count them: its flagged recorded values and, when it is
    suspect, the findings that make it so (never "0" beside "suspect")."""
    return len(r.flags) + (len(sus.reasons) if sus.suspect else 0)
