"""The worker's job and result, as stdlib records both sides import: the contract between worker and validate.

The parent writes a `WorkerJob` (`to_json`) and the worker reads it (`from_json`); the worker (standard
library and torch only: the GPU image has no pydantic) fills a `WorkerResult` and writes it with
`WorkerResult.to_json`, which the parent reads back with `WorkerResult.from_json`. These methods are the
only places either record is serialised, and `from_doc` is the one decoder behind them. The parent's
pydantic models `records.ValidationResult` and `records.ValidationSettings` are derived from `WorkerResult` and
`CheckSettings` (`core.derive`), so their fields are declared here once. Nothing here imports anything outside the
standard library (`decode` is the decoder behind `from_json`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum

from .decode import from_doc


class Verdict(StrEnum):
    """What re-validation concluded about one kernel; the only place these strings are spelled."""

    CORRECT = "correct"
    INCORRECT = "incorrect"
    COMPILE_ERROR = "compile_error"
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    NOT_VALIDATED = "not_validated"


class Basis(StrEnum):
    """What a timing figure measures."""
    DEVICE = "device"  # summed GPU kernel + memcpy/memset durations of one call (CUPTI via torch.profiler)
    GRAPH = "graph"  # one call captured into a CUDA graph and replayed, timed with CUDA events
    WALL = "wall"  # CUDA events around the eager call (KernelBench's basis): includes host overhead


BASIS_LABEL: dict[Basis, str] = {Basis.DEVICE: "device time", Basis.GRAPH: "CUDA-graph time", Basis.WALL: "wall time"}


class StopReason(StrEnum):
    """Why adaptive repetition stopped timing a basis."""

    CONVERGED = "converged"  # the 95% CI of every median was within the target
    TIME_CAP = "time_cap"  # the time cap came first: the CI may be wider than the target


@dataclass(frozen=True)
class BasisStats:
    """One timing figure: milliseconds per call over `n` calls.

    `iqr_ms` and the confidence interval are None only in results migrated from format 3, which kept
    mean and std instead.
    """

    median_ms: float
    min_ms: float
    max_ms: float
    n: int
    iqr_ms: float | None = None
    ci_low_ms: float | None = None  # distribution-free 95% confidence interval of the median
    ci_high_ms: float | None = None
    stop: StopReason | None = None


@dataclass(frozen=True)
class TimingFigures:
    """The three bases for one side (kernel, reference or the torch.compile baseline)."""

    device: BasisStats | None = None
    graph: BasisStats | None = None
    wall: BasisStats | None = None
    graph_note: str | None = None  # why the call is not capturable, when it is not
    device_note: str | None = None  # why there is no device time (no CUDA device, profiler failure)
    wall_note: str | None = None  # why a wall figure is not shown (it disagrees with the device basis, a patched timer)

    def on(self, basis: Basis) -> BasisStats | None:
        return {Basis.DEVICE: self.device, Basis.GRAPH: self.graph, Basis.WALL: self.wall}[basis]


# How a note begins when a basis was not measured at all (a step skipped), rather than measured and refused.
NOT_MEASURED = "not measured"
# How a dynamic check's detail begins when the check could not run (out of memory, a fault): `checks incomplete`.
NOT_RUN = "not run"


class LaunchGroup(StrEnum):
    """Who wrote a launched kernel (`attribution.classify`)."""

    SUBMISSION = "submission"  # a kernel of the submitted source, or one built into its extension
    PYTORCH = "pytorch"  # ATen, its CUDA helpers, torch.compile's Triton kernels
    LIBRARY = "library"  # cuBLAS, cuDNN, CUTLASS, CUB, cuFFT, ...
    OTHER = "other"


GROUP_LABEL: dict[LaunchGroup, str] = {LaunchGroup.SUBMISSION: "the submission's kernels", LaunchGroup.PYTORCH: "PyTorch / ATen",
                                       LaunchGroup.LIBRARY: "cuBLAS / cuDNN / CUTLASS", LaunchGroup.OTHER: "other"}


@dataclass(frozen=True)
class KernelShare:
    """The launches of one kernel name, by one group, on one stream, within the profiled call."""

    name: str
    group: LaunchGroup
    stream: int
    launches: int
    device_us: float


@dataclass(frozen=True)
class Attribution:
    """Where one profiled call's kernel time went, by who wrote each kernel, and on which streams."""

    kernels: tuple[KernelShare, ...] = ()
    call_stream: int | None = None  # the stream the caller's work is ordered on (where the marker ran)
    streams: tuple[int, ...] = ()  # every stream the call's work ran on
    unwaited_streams: tuple[int, ...] = ()  # streams still running work when the caller's stream moved on
    unordered_streams: tuple[int, ...] = ()  # streams whose work started before the caller's earlier work ended
    source_kernels: tuple[str, ...] = ()  # the kernel names the submission defines (source and extension)

    @property
    def total_us(self) -> float:
        return sum(k.device_us for k in self.kernels)

    def device_us(self, group: LaunchGroup) -> float:
        return sum(k.device_us for k in self.kernels if k.group == group)

    def launches(self, group: LaunchGroup) -> int:
        return sum(k.launches for k in self.kernels if k.group == group)

    def share(self, group: LaunchGroup) -> float | None:
        """The group's part of the call's kernel time; None when the call launched no kernel."""
        total = self.total_us
        return self.device_us(group) / total if total > 0 else None


@dataclass(frozen=True)
class LaunchStats:
    launches: int
    cuda_time_us: float
    memcpy: int = 0
    memset: int = 0
    kernel_names: tuple[str, ...] = ()
    attribution: Attribution | None = None  # the kernel side's; None: the reference, or measured before it was kept


@dataclass(frozen=True)
class Mismatch:
    """A failed comparison's witness, under allclose's rule |a − b| <= atol + rtol·|b| (b: the reference)."""

    output: int  # which output tensor (in the order returned)
    index: tuple[int, ...]  # its first value outside the tolerance
    expected: float | None  # None: NaN (a NaN would make a stored result unequal to itself)
    actual: float | None
    bad: int  # values outside the tolerance, of `total` in that output
    total: int
    max_error: float  # the largest |a − b| in that output (infinite for NaN or Inf)
    allowed: float  # atol + rtol·|b| where that largest error is


@dataclass(frozen=True)
class TrialResult:
    index: int
    seed: int
    jittered: bool
    passed: bool | None  # None: skipped (the reference itself fails at these shapes)
    input_shapes: tuple[str, ...] = ()
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    problem: str | None = None  # why it failed: shape mismatch, NaN, mutated inputs, ...
    mismatch: Mismatch | None = None  # the witness of a values failure
    inputs: str | None = None  # the transform of an input-statistics trial ("large magnitude", ...); None: as drawn
    # The largest |a − b| / (atol + rtol·|b|) over every value of every output (1 is the tolerance's edge; infinite where
    # the kernel is not finite and the reference is): a passed trial's margin, or a failed input-statistics trial's miss.
    worst_ratio: float | None = None


@dataclass(frozen=True)
class ReplayVariant:
    """The replay again with one rule changed (`change`: "eval mode", "weights copied"): what explains a disagreement."""

    change: str
    passed: bool | None
    problem: str | None = None


@dataclass(frozen=True)
class BenchmarkReplay:
    """A kernel judged under the rules that scored its run (`core.rules`), in a worker of its own (`validate.replay`)."""

    rules: str  # the rule set's name
    passed: bool | None  # None: no verdict (the reference itself failed under these rules)
    trials_passed: int
    trials: int
    problem: str | None = None  # the first failure (an error the benchmark's comparison raises, or values off)
    # The largest |a − b| / (atol + rtol·|scaled side|) under these rules, every value of every trial (1: the edge).
    worst_ratio: float | None = None
    max_abs_error: float | None = None
    strict_ratio: float | None = None  # the same outputs' worst ratio under the strict rules' tolerance
    variants: tuple[ReplayVariant, ...] = ()


class DynamicCheck(StrEnum):
    """The named run-time checks for known hacks, beside the correctness trials; ids spelled once here."""

    OUTPUT_AFTER_RETURN = "output_changes_after_return"  # deferred work: the output changes after the call returned
    OUTPUT_ALIASES_INPUT = "output_aliases_input"  # the output is memory the harness owns: an input or the reference's output
    OUTPUT_REUSED = "output_reuses_earlier_output"  # a later call returns (and overwrites) an earlier call's output
    INPUT_STATISTICS = "input_statistics"  # right on the problem's input distribution only
    HARNESS_PATCHED = "harness_patched"  # a timer, comparison or harness function replaced while the kernel ran
    NONDETERMINISTIC = "nondeterministic_output"  # two calls on the same inputs differ beyond the tolerance
    L2_PERSISTENCE = "l2_persistence"  # persisting L2 set aside before a timed call: data kept across the flush


@dataclass(frozen=True)
class DynamicResult:
    check: DynamicCheck
    tripped: bool | None  # None: not run; `detail` says why
    detail: str = ""


@dataclass(frozen=True)
class CheckStrength:
    """Whether a problem's comparison can fail (`validate.strength`): wrong answers put through it at the nominal
    shapes, and the inputs added to the correctness trials under which they fail."""

    passes: tuple[str, ...] = ()  # wrong answers the default comparison accepts on the problem's own inputs
    equivalent: tuple[str, ...] = ()  # accepted on every input tried: the same function within tolerance, not counted
    strengthen: tuple[str, ...] = ()  # input transforms added to the correctness trials (`strength.TRANSFORMS`)
    still_pass: tuple[str, ...] = ()  # wrong answers accepted even so: every "correct" here is a weak check
    note: str = ""  # why the strength is unknown, when it is

    @property
    def weak(self) -> bool:
        """The default comparison accepts a wrong answer on the problem's own inputs."""
        return bool(self.passes)


# A check's phases in the order they run, as `WorkerResult.phase_s` names them: "start" is the fork to the
# worker's first line, "cuda" the device's initialisation, "callset" the profiled calls (launch counts,
# attribution, peak memory), "reference" the reference timed on its own for later kernels of its problem.
PHASES = ("reference", "start", "cuda", "load", "correctness", "warmup", "wall", "callset", "device", "recheck", "jitter",
          "dynamic", "graph", "replay")
# Totals beside the phases: seconds this check held the GPU to itself (timing windows), of which with the host
# quiet too (compiles stopped), and seconds it waited for a window.
EXCLUSIVE, HOST_QUIET, GATE_WAIT = "exclusive", "host_quiet", "gate_wait"
TOTALS = (EXCLUSIVE, HOST_QUIET, GATE_WAIT)


def about(text: str) -> dict[str, str]:
    """A field's description, kept in its metadata: the pydantic models derived from these records show it."""
    return {"description": text}


@dataclass(frozen=True)
class CheckSettings:
    """Everything that changes what a validation measures (part of the cache key); `ValidationSettings` is
    this record as a pydantic model, for the parent."""

    seed: int = 42
    nominal_trials: int = 3
    jitter_trials: int = 4
    jitter_fraction: float = 0.25
    atol: Mapping[str, float] = field(default_factory=lambda: {"fp32": 1e-4, "fp16": 1e-2, "bf16": 1e-2})
    rtol: Mapping[str, float] = field(default_factory=lambda: {"fp32": 1e-4, "fp16": 1e-2, "bf16": 1e-2})
    warmup: int = 10
    perf_trials: int = field(default=30, metadata=about("Calls per basis before the adaptive stop rule is tried."))
    ci_target_pct: float = field(default=1.0, metadata=about("Stop once the median's 95% CI is within ± this percentage."))
    time_cap_s: float = field(default=3.0, metadata=about("Seconds per basis after which timing stops whatever the CI."))
    flush_l2_mb: int = 256
    timeout_s: float = 600.0
    torch_compile_baseline: bool = False
    excessive_speedup: float = 10.0


# Reusing a reference's timing across the kernels of its problem (a sweep checks models x samples against one
# reference). The drift guard: a stored timing is taken again once this many checks have used it, and not used
# when the GPU's SM clock or temperature (read after the warm-up, both times) has moved this far since.
REFERENCE_RETIME_AFTER = 20
REFERENCE_CLOCK_MOVE = 0.02  # share of the SM clock then
REFERENCE_TEMPERATURE_MOVE_C = 10
# A reference is timed on its own (and stored) when one call checks at least this many kernels of its problem.
REFERENCE_SHARED_FROM = 2


@dataclass(frozen=True)
class GpuReading:
    """The GPU's SM clock and temperature, read after the warm-up (None: NVML could not say)."""

    sm_clock_mhz: int | None = None
    temperature_c: int | None = None


@dataclass(frozen=True)
class ReferenceTiming:
    """A reference's timing taken in a worker that ran no submission, kept on the checking machine and reused by
    later checks of the same problem (reference source, precision, settings and GPU) until the drift guard."""

    taken_at: str  # UTC, ISO 8601
    gpu: str  # the GPU's UUID
    torch: str
    input_shapes: tuple[str, ...] = ()
    reading: GpuReading = field(default_factory=GpuReading)
    uses: int = 0  # checks that used it before this one
    replaced: str | None = None  # why the timing it replaced was taken again, and how far this one is from it
    figures: TimingFigures | None = None  # in the store and a job; a result keeps them as `reference_timing`


@dataclass(frozen=True)
class WorkerJob:
    """One kernel for the worker: the sources it executes (trace content, kept as data) and how to check it.

    Pickled to Ray tasks and written as the worker's `job.json`; the steps add `extensions_dir` (and a
    profile its `role`) with `dataclasses.replace`."""

    reference: str
    kernel: str
    settings: CheckSettings
    device: str
    precision: str = "fp32"
    extensions_dir: str | None = None  # where the compile step built the kernel's extension
    role: str | None = None  # profile mode: the side profiled ("kernel" or "reference")
    strength: CheckStrength | None = None  # the problem's check strength: its transforms join the correctness trials
    stored_reference: ReferenceTiming | None = None  # a stored timing of the reference this check may use
    rules: str | None = None  # the rule set (`core.rules`) the run was scored under: its replay runs after the check

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> WorkerJob:
        return from_doc(cls, json.loads(text))


@dataclass(frozen=True)
class WorkerResult:
    """Everything one worker process reports, in the order a stored result lists it.

    `records.ValidationResult` takes its worker-measured fields from this record (names, types, defaults
    and descriptions), so a field added here is stored and read with no second edit. Sequences are tuples
    and `phase_s` is read-only to the type checker (a plain dict, so the record pickles to Ray)."""

    verdict: Verdict
    reason: str = ""
    log: str = ""
    output_tail: str | None = field(default=None, metadata=about(
        "A worker that died or was killed: the last lines of its output (the crash's evidence)."))
    weights_note: str | None = None
    jitter_note: str | None = None
    problem_names: tuple[str, ...] = field(default=(), metadata=about(
        "Names the kernel uses that only the problem file defines (KernelBench's shared namespace)."))
    trials: tuple[TrialResult, ...] = ()
    check_strength: CheckStrength | None = field(default=None, metadata=about(
        "How strong the problem's comparison is (`validate.strength`), as the check was given it: its strengthening "
        "transforms are trials above."))
    stateful_reference: tuple[str, ...] = field(default=(), metadata=about(
        "State tensors the reference changes from one call to the next (a hidden state): every comparison then starts "
        "both models from their state as built."))
    # Empty or None in results written before they were kept (the page says "not measured").
    recheck: TrialResult | None = field(default=None, metadata=about("The comparison after the timed loop (index -1)."))
    statistics_trials: tuple[TrialResult, ...] = field(default=(), metadata=about(
        "Trials at the nominal shapes on other input distributions."))
    dynamic_checks: tuple[DynamicResult, ...] = ()
    benchmark: BenchmarkReplay | None = field(default=None, metadata=about("The kernel replayed under its run's rules (`core.rules`)."))
    other_benchmarks: tuple[BenchmarkReplay, ...] = field(default=(), metadata=about("Earlier replays under other rule sets, kept."))
    pending: str | None = field(default=None, metadata=about(
        "Saved before an optional step that may still kill the worker: which one."))
    kernel_timing: TimingFigures | None = None
    reference_timing: TimingFigures | None = None
    compile_timing: TimingFigures | None = None
    kernel_launches: LaunchStats | None = None
    reference_launches: LaunchStats | None = None
    kernel_peak_bytes: int | None = None
    reference_peak_bytes: int | None = None
    deterministic: bool | None = None
    reference_from: ReferenceTiming | None = field(default=None, metadata=about(
        "The stored reference timing the speedup used, timed in a worker that ran no submission; None: the reference "
        "was timed in this check, interleaved with the kernel."))
    reference_not_reused: str | None = field(default=None, metadata=about("Why a stored reference timing was not used (the GPU's clock or temperature had moved, other shapes)."))
    gpu_reading: GpuReading | None = field(default=None, metadata=about("The GPU's SM clock and temperature after the warm-up, before the timed calls."))
    build_note: str | None = field(default=None, metadata=about(
        "How the kernel's extension was built: light torch headers, or exactly as written (and why)."))
    phase_s: Mapping[str, float] = field(default_factory=dict, metadata=about(
        "Seconds per phase of the check (PHASES; \"compile\" in a build's)."))

    def to_json(self) -> str:
        # allow_nan (json's default): an infinite error (NaN output) reaches the parent as Infinity
        return json.dumps(asdict(self), indent=1)

    @classmethod
    def from_json(cls, text: str) -> WorkerResult:
        return from_doc(cls, json.loads(text))


# The jitter hook is `popcorn_pri.jitter_int(...)` inside get_inputs(); problems without one say so.
NO_JITTER_HOOK = "no shape jitter defined"
