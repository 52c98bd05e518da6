"""The words the stages hand each other, each vocabulary one `StrEnum` and each word spelled once.

Standard library only (like `validate.schema`, whose `Verdict` the re-validation writes): the worker, the
records, the tables and the templates can all import it. A `StrEnum` member equals its string, so JSON,
pandas columns and CSS classes built from these read exactly as before.
"""

from __future__ import annotations

from enum import StrEnum

from .schema import Verdict

# A group key's benchmark, configuration or model when the trace records none. An empty name already
# counts as none, so no recorded name can equal it: a model literally named "unknown" keeps its own pages.
MISSING_KEY = ""
# How a missing part is spelled in page names (`variants/unknown--unknown.html`); the key stays MISSING_KEY.
MISSING_LABEL = "unknown"
# How a missing part is shown on pages.
NOT_RECORDED = "(not recorded)"


def shown(part: str) -> str:
    """A group key's part as pages show it."""
    return part if part != MISSING_KEY else NOT_RECORDED


def spelled(part: str) -> str:
    """A group key's part as page names spell it."""
    return part if part != MISSING_KEY else MISSING_LABEL


class RunVerdict(StrEnum):
    """A run's verdict as the site shows it: a harness's recorded verdict or our re-validation's, plus
    the words for runs that have neither. A trace may record any other word; it is shown as written."""

    CORRECT = Verdict.CORRECT.value
    INCORRECT = Verdict.INCORRECT.value
    COMPILE_ERROR = Verdict.COMPILE_ERROR.value
    RUNTIME_ERROR = Verdict.RUNTIME_ERROR.value
    TIMEOUT = Verdict.TIMEOUT.value
    CRASHED = Verdict.CRASHED.value
    NOT_EVALUATED = "not_evaluated"  # the harness ran no evaluation (KernelBench: no eval entry)
    NO_SUBMISSION = "no_submission"  # the agent submitted no kernel
    PARTIAL = "partial"  # a partial trace (e.g. a reasoning dump): nothing to judge
    UNKNOWN = "unknown"  # no verdict recorded
    SUSPECT = "suspect"  # an error-level cheat finding (static, transcript or measured) no reviewer cleared
    REWARD_HACK = "reward_hack"  # a reviewer's verdict on this exact kernel (reviews.toml)
    CONTAMINATION = "contamination"  # a reviewer's verdict: the kernel copies work that is not its own


# Verdicts that say nothing about whether the kernel compiled (or worked).
UNJUDGED = (RunVerdict.UNKNOWN, RunVerdict.NOT_EVALUATED, RunVerdict.PARTIAL, RunVerdict.NO_SUBMISSION)
# Verdicts of a kernel that compiled and then failed while running.
RUNTIME_FAILURES = (RunVerdict.RUNTIME_ERROR, RunVerdict.TIMEOUT, RunVerdict.CRASHED)


class Source(StrEnum):
    """Where a run's verdict or speedup came from."""

    RE_VALIDATED = "re-validated"  # measured by us (reporter validate)
    RECORDED = "recorded"  # as the harness recorded it
    PARTIAL = RunVerdict.PARTIAL.value  # a partial trace: neither


class RevalidationState(StrEnum):
    """What a run page can say of a re-validation."""

    MEASURED = "measured"  # a cached result exists
    NOT_VALIDATED = Verdict.NOT_VALIDATED.value  # a kernel, but no result yet
    NO_KERNEL = "no_kernel"  # nothing was submitted, so nothing can be re-validated


class ReviewStatus(StrEnum):
    """What the static cheat scan and the reviewers say of a run's kernel."""

    SUSPECT = RunVerdict.SUSPECT.value  # error-level findings, not cleared
    REWARD_HACK = RunVerdict.REWARD_HACK.value  # a reviewer called this exact kernel a reward hack
    CONTAMINATION = RunVerdict.CONTAMINATION.value  # a reviewer found this exact kernel copies others' work
    CLEARED = "cleared"  # error-level findings, cleared by a reviewer for this exact kernel
    WARNINGS = "warnings"  # warn-level findings only
    CLEAN = "clean"  # no findings


class GridState(StrEnum):
    """A run's cell on the problem grid (`aggregates.states`), in the order of the legend."""

    REWARD_HACK = RunVerdict.REWARD_HACK.value
    CONTAMINATION = RunVerdict.CONTAMINATION.value
    SUSPECT = RunVerdict.SUSPECT.value
    FASTER = "faster"  # correct, and faster than the reference
    SLOWER = "slower"  # correct, and not faster
    CORRECT = RunVerdict.CORRECT.value  # correct, speedup unknown
    INCORRECT = RunVerdict.INCORRECT.value
    COMPILE_ERROR = RunVerdict.COMPILE_ERROR.value
    RUNTIME_ERROR = RunVerdict.RUNTIME_ERROR.value  # timeouts and crashes too
    NO_SUBMISSION = RunVerdict.NO_SUBMISSION.value
    UNKNOWN = RunVerdict.UNKNOWN.value
