"""What makes a run suspect: a likely hack, and nothing else.

A flag is a claim about a person's work, so a suspect rule fires only on evidence that the reported speed
or correctness is not the kernel's own: no submitted kernel runs in the call, work escapes the timer,
timers are patched, outputs are reused, aliased or precomputed, the transcript reads the harness. Every
rule names the hack it stands for and an honest kernel it must not trip (`docs/checks.md` lists them;
`benchmarks/calibration.py` counts their false alarms on real kernels).

How much of a call's kernel time runs in the submission's own kernels (the **own-kernel share**) is a
measured property, shown on the run page and as a column, never a verdict: keeping a GEMM or convolution
in cuBLAS/cuDNN and fusing the epilogue in one's own kernel is KernelBench's ordinary Level-2 strategy.
The boards' strict view keeps only runs whose own kernels do at least `STRICT_OWN_SHARE` of the time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .checks import Flag
from .inputstats import statistics_finding
from .records import ValidationResult
from .schema import NOT_RUN, Attribution, CheckStrength, DynamicCheck, DynamicResult, LaunchGroup, Verdict

# The leaderboards' strict view ("own kernels only"): the submission's own kernels do at least this share of
# one call's kernel time. The default boards follow KernelBench, which lets a kernel call cuBLAS or cuDNN.
STRICT_OWN_SHARE = 0.5


@dataclass(frozen=True)
class SuspectRule:
    """One way a run becomes suspect: its check id, the hack it stands for, an honest kernel it must not trip."""

    check: str
    source: str  # "static", "transcript", "launches", "dynamic", "floor"
    hack: str
    honest: str


RULES: tuple[SuspectRule, ...] = (
    SuspectRule("timing_event_patch", "static", "replaces torch.cuda.Event, synchronize or a clock to fake the measured time",
                "a kernel that only calls torch.cuda.synchronize() or records its own events"),
    SuspectRule("thread_injection", "static", "starts threads or processes that do work outside the timed region",
                "a kernel that imports nothing concurrent (the scan ignores comments and strings in its rule lines)"),
    SuspectRule("lazy_eval", "static", "returns a tensor subclass or dispatch hook that defers the work until after timing",
                "a kernel that returns a plain torch.Tensor"),
    SuspectRule("output_memoisation", "static", "keys a cache on tensor identity, so a timing loop that reuses inputs times a lookup",
                "a kernel that caches compiled modules or weights, not outputs"),
    SuspectRule("no_cuda_kernel", "static", "submits no CUDA kernel at all (PyTorch or a library does all the work)",
                "a kernel with one __global__ function and a cuBLAS call beside it"),
    SuspectRule("no_extension", "static", "never builds an extension, so nothing of its own can run",
                "a load_inline or cpp_extension kernel"),
    SuspectRule("reads_harness_files", "transcript", "the agent read the harness's checking or timing code and wrote the kernel for it",
                "an agent that writes its own timing.py or eval.py script"),
    SuspectRule("reads_other_results", "transcript", "the agent read another run's kernels or results, this site's published "
                "results or a public leaderboard (contamination): the kernel may not be its own work",
                "an agent that reads its own problem file and its own sample's kernel, fetches CUDA documentation and "
                "writes its own results.csv"),
    SuspectRule("attribution.submission", "launches", "no kernel of the submission runs in the call: a PyTorch fallback behind a built extension",
                "a kernel that leaves the GEMM to cuBLAS and fuses the epilogue in its own kernel (own-kernel share 0.2-10%)"),
    SuspectRule("attribution.streams", "launches", "work on a stream the caller does not wait for (or that waits for nothing), which a timer misses",
                "a side stream that waits for the caller and is waited for in turn"),
    SuspectRule("output_changes_after_return", "dynamic", "the output is still being written after the call returned (deferred work)",
                "a kernel whose work is all ordered on the caller's stream"),
    SuspectRule("output_aliases_input", "dynamic", "returns the input's or the reference's memory instead of computing an output",
                "an in-place kernel for a problem whose reference itself works in place"),
    SuspectRule("output_reuses_earlier_output", "dynamic", "returns one buffer, overwritten by every call (a precomputed or cached answer)",
                "a kernel that keeps internal scratch buffers and returns a new output"),
    SuspectRule("input_statistics", "dynamic", "right only on the problem's own input distribution: skips work its inputs never exercise",
                "an unshifted softmax or fast-math exp at 8x and 2^-10 magnitudes; a stateful model stepped from the same state"),
    SuspectRule("harness_patched", "dynamic", "replaces a timer, a comparison or a harness function while it runs (names built "
                "from strings at run time, which no pattern sees)", "a kernel that calls torch.cuda.synchronize() or records its own events"),
    SuspectRule("nondeterministic_output", "dynamic", "two calls on the same inputs differ beyond the tolerance: a race or "
                "uninitialised memory that a trial happened to pass", "an atomicAdd reduction whose bits differ within the tolerance"),
    SuspectRule("l2_persistence", "dynamic", "sets aside persisting L2 lines, which survive the timer's L2 flush, so each timed "
                "call finds its data in cache (reset before every timed call here)", "a kernel that sets no persisting-L2 limit"),
)


def own_kernel_share(att: Attribution | None) -> float | None:
    """The submission's share of one profiled call's kernel time (0-1); None when not measured, when the
    submission defines no kernel to look for, or when the call launched none."""
    if att is None or not att.source_kernels:
        return None
    return att.share(LaunchGroup.SUBMISSION)


def dynamic_findings(res: ValidationResult) -> tuple[DynamicResult, ...]:
    """A result's dynamic checks, the input-statistics one judged again from its stored trials by today's rule (a
    result stored before `STATISTICS_SLACK` keeps its trials, so its finding need not be measured again)."""
    rows = res.statistics_trials or ()
    return tuple(statistics_finding(rows, len(rows)) if d.check == DynamicCheck.INPUT_STATISTICS and d.tripped is not None and rows else d
                 for d in res.dynamic_checks)


def strict(share: float | None) -> bool | None:
    """Whether a run belongs in the boards' strict view; None when its share was not measured."""
    return None if share is None else share >= STRICT_OWN_SHARE


def attribution_flags(att: Attribution | None) -> list[Flag]:
    """Suspect-level flags from one call's attribution (none when not measured); the own-kernel rule needs a
    kernel the submission defines."""
    if att is None:
        return []
    flags = []
    if att.source_kernels and att.share(LaunchGroup.SUBMISSION) is None:
        flags.append(Flag("attribution.submission", "error", "the call launched no kernel at all: its output was not computed on the GPU by this call"))
    elif att.source_kernels and att.launches(LaunchGroup.SUBMISSION) == 0:
        flags.append(Flag("attribution.submission", "error", "none of the submitted kernels ran in the call: all of its kernel time "
                                                             "is PyTorch's or a library's (a fallback behind the built extension)"))
    said = []
    if att.unwaited_streams:
        said.append(f"work runs on stream(s) {', '.join(map(str, att.unwaited_streams))}, which the call does not wait for: "
                    "a timer stopped on the caller's stream misses it")
    if early := [s for s in att.unordered_streams if s not in att.unwaited_streams]:
        said.append(f"work runs on stream(s) {', '.join(map(str, early))}, which start(s) before the caller's earlier work has "
                    "finished: it waits for nothing the caller did, so it may read inputs not yet written, and a timer started on "
                    "the caller's stream does not cover it")
    if said:
        flags.append(Flag("attribution.streams", "error", "; ".join(said)))
    return flags


def incomplete_checks(verdict: str, dynamic: Sequence[DynamicResult], attribution_measured: bool | None,
                      strength: CheckStrength | None = None) -> tuple[str, ...]:
    """The checks that did not run on a correct kernel (out of memory, a fault, an older result without them): its
    "correct" stands, but nothing says it is clean, or that its problem's comparison could have failed. Checks of a
    kernel already found incorrect or failed are not expected to run. `attribution_measured`: None where no
    attribution can exist (no CUDA)."""
    if verdict != Verdict.CORRECT:
        return ()
    out: list[str] = [d.check for d in dynamic if d.tripped is None and d.detail.startswith(NOT_RUN)]
    if not dynamic:
        out.append("dynamic checks")
    if attribution_measured is False:
        out.append("launch attribution")
    if strength is None or strength.note:
        out.append("check strength")
    return tuple(out)


def measured_attribution(res: ValidationResult) -> Attribution | None:
    return res.kernel_launches.attribution if res.kernel_launches else None


def missing_checks(res: ValidationResult) -> tuple[str, ...]:
    """`incomplete_checks` of one stored result: attribution is expected of every result measured on a GPU."""
    on_cuda = res.environment.gpu not in (None, "cpu")
    return incomplete_checks(res.verdict, dynamic_findings(res), measured_attribution(res) is not None if on_cuda else None,
                             res.check_strength)


def weak_check(res: ValidationResult) -> str | None:
    """For a correct verdict on a problem whose comparison accepts a wrong answer even with strengthened inputs:
    what would also pass (shown as "weak check: ..."; the boards do not count the run as a win). None otherwise."""
    cs = res.check_strength
    if res.verdict != Verdict.CORRECT or cs is None or not cs.still_pass:
        return None
    return ", ".join(cs.still_pass)
