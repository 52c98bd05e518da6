"""Page data for a run's static cheat scan: the findings, and whether the run is suspect or cleared.

The scan reads the final kernel at collect time (`collect.traces`), so a build without a GPU shows it too.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..collect.reviews import REVIEWS_FILE
from ..collect.traces import RunRecord
from ..vocab import ReviewStatus
from . import text


@dataclass(frozen=True)
class FindingRow:
    css: str
    check: str
    severity: str
    line: str
    code: str
    message: str


@dataclass(frozen=True)
class FindingsView:
    rows: tuple[FindingRow, ...]
    status: ReviewStatus
    banner: str  # what the status means for this run, in a sentence or two
    kernel_sha256: str
    review_problem: str


def findings_view(r: RunRecord) -> FindingsView | None:
    """None when the run submitted no kernel."""
    sha = r.kernel_hash
    if sha is None:
        return None
    rows = tuple(FindingRow("bad" if f.severity == "error" else "", f.check, f.severity,
                            str(f.line) if f.line is not None else text.DASH, f.text, f.message) for f in r.findings)
    errors = sum(1 for f in r.findings if f.severity == "error")
    if r.suspect:
        status = ReviewStatus.SUSPECT
        banner = (f"Suspect: {errors} error-level finding{'s' if errors != 1 else ''} below. This run is left out of "
                  f"fast_p and the geomean until a reviewer clears this exact kernel in {REVIEWS_FILE} beside the data.")
    elif r.clearance is not None and errors:
        c = r.clearance
        status = ReviewStatus.CLEARED
        banner = f"Cleared by {c.reviewer}: {c.note} (recorded in {REVIEWS_FILE} for this kernel's sha256)."
    else:
        status = ReviewStatus.WARNINGS if rows else ReviewStatus.CLEAN
        banner = "Only warnings: worth a look, they do not change the verdict." if rows else "No known cheat pattern found."
    return FindingsView(rows, status, banner, sha, r.review_problem)
