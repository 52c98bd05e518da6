"""Typed records: the trace format (version 2) and what the stages hand each other.

A trace is text written by a model and a harness we do not control, so every model keeps unknown
fields (``extra="allow"``) instead of failing on them; `unknown_fields()` lists them for the page.
Values that were not recorded are ``None`` and render as "—", never as 0.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .derive import derived
from .names import slug
from .rules import rules_named
from .schema import Basis, CheckSettings, WorkerResult
from .units import TimeUnit

SCHEMA_VERSION = 2
# Versions `collect` still reads; older documents are migrated on read (`migrate_trace`).
READABLE_VERSIONS = (1, 2)
Precision = Literal["fp32", "fp16", "bf16"]


class _Model(BaseModel):
    # "constants": an infinite error (NaN output) must survive the round trip through the cache.
    model_config = ConfigDict(extra="allow", frozen=True, ser_json_inf_nan="constants")


class RunInfo(_Model):
    """Who ran what: the identity of one agent run."""

    benchmark: str | None = Field(None, description="The benchmark the problem comes from: `kernelbench`, `popcorn`, ...")
    configuration: str | None = Field(None, description="Prompt / harness settings the run used, e.g. `l12_default_gpt`; optional.")
    recorded_gpu: str | None = Field(None, description="The GPU the harness measured on, e.g. `NVIDIA H100` or `NVIDIA L40S`; None when not recorded.")
    sample: int | None = Field(None, description="Sample number when a model attempted a problem several times.")
    model: str | None = Field(None, description="The model that wrote the kernel, e.g. `Kimi-K2.6`.")
    level: int | None = Field(None, description="KernelBench level (1-4).")
    problem_id: int | None = Field(None, description="Problem number within the level.")
    problem_file: str | None = Field(None, description="Problem file name, e.g. `8_DeepSeekMoEGroundedTop2Routing.py`.")
    title: str | None = Field(None, description="A human title when the problem file is unknown.")
    started_at: str | None = Field(None, description="Start time, ISO 8601 UTC.")
    backend: str | None = Field(None, description="Kernel backend (`cuda`, `triton`, ...); None when not recorded.")
    precision: Precision | None = Field(None, description="Precision of the check; None when not recorded "
                                        "(the validator then checks at fp32 and says so).")
    max_turns: int | None = Field(None, description="Turn budget of the harness.")
    turns_used: int | None = Field(None, description="Turns the agent used; defaults to len(turns).")
    tool_calls: int | None = Field(None, description="Tool calls as counted by the harness.")
    tokens_total: int | None = Field(None, description="Total tokens (prompt + completion) as recorded.")
    wall_clock_s: float | None = Field(None, description="Wall-clock seconds of the whole run.")
    truncated: bool | None = Field(None, description="Whether the harness cut the run short.")
    complete: bool = Field(True, description="False for partial traces (e.g. reasoning dumps only).")
    recorded_verdict: str | None = Field(None, description="The harness's verdict: `correct`, `incorrect`, `compile_error`, `no_submission`, ...")
    source_note: str | None = Field(None, description="Where this trace came from and any caveat.")
    rules: str | None = Field(None, description="The rule set (`core.rules`) the recorded verdict came from; None: the default.")
    rules_from: str | None = Field(None, description="What `rules` was inferred from (an importer's evidence).")

    @field_validator("rules")
    @classmethod
    def _known_rules(cls, v: str | None) -> str | None:
        try:  # a ValueError, which pydantic reports with the field's place
            return None if v is None else rules_named(v).name
        except KeyError as exc:
            raise ValueError(exc.args[0]) from None


class ToolResult(_Model):
    """What a tool answered."""

    ok: bool = Field(description="True for a pass, False for a failure.")
    text: str = Field("", description="The tool's output as recorded.")


class ToolCall(_Model):
    """One tool call the agent made, with its result."""

    tool: str = Field(description="Tool name: `compile_kernel`, `run_correctness`, `get_gpu_specs`, ...")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Arguments as the agent sent them.")
    result: ToolResult | None = Field(None, description="The tool's answer; None if none was recorded.")


class Turn(_Model):
    """One agent turn: reasoning, then zero or more tool calls."""

    index: int
    turn_s: float | None = Field(None, description="Seconds for the whole turn.")
    llm_s: float | None = Field(None, description="Seconds spent in the model.")
    tool_s: float | None = Field(None, description="Seconds spent in tools.")
    chars: int | None = Field(None, description="Characters in the turn as counted by the harness.")
    final: bool = Field(False, description="True for the turn that submitted.")
    reasoning: str = Field("", description="The model's reasoning text (untrusted).")
    reasoning_format: Literal["text", "markdown"] = Field("text", description="How `reasoning` is written: `text` is shown as written; only `markdown` is rendered as markdown.")
    calls: tuple[ToolCall, ...] = ()


class TimingMetrics(_Model):
    """`kernelbench.timing`: runtimes in the unit the harness *claimed*."""

    source: str = "kernelbench.timing"
    unit: TimeUnit = Field(description="The unit the harness labelled these values with (may be wrong).")
    runtime: float | None = None
    ref_runtime: float | None = None
    speedup: float | None = None
    kernel_mean: float | None = None
    kernel_median: float | None = None
    kernel_std: float | None = None
    ref_mean: float | None = None
    ref_median: float | None = None
    ref_std: float | None = None
    ref_source: str | None = Field(None, description="Where `ref_runtime` came from when not measured beside the kernel, e.g. a KernelBench baseline file.")
    ref_gpu: str | None = Field(None, description="The GPU `ref_runtime` was measured on, when known; a GPU other than `run.recorded_gpu` is flagged.")
    compile_ref_runtime: float | None = Field(None, description="The reference under torch.compile, same unit.")
    compile_speedup: float | None = Field(None, description="compile_ref_runtime / runtime as recorded.")


class PrecisionMetrics(_Model):
    """`eval_kernel_against_ref`: numerical error against the reference."""

    source: str = "eval_kernel_against_ref"
    max_abs_error: float | None = None
    mean_abs_error: float | None = None
    max_rel_error: float | None = None
    mean_rel_error: float | None = None
    trials_passed: int | None = None
    trials_total: int | None = None


class MemoryMetrics(_Model):
    """`extended_metrics.measure_memory`: peak allocated memory."""

    source: str = "extended_metrics.measure_memory"
    kernel_peak_mb: float | None = None
    ref_peak_mb: float | None = None
    ratio: float | None = Field(None, description="kernel / ref as recorded.")


class LaunchMetrics(_Model):
    """`torch.profiler`: kernel launches and CUDA time."""

    source: str = "torch.profiler"
    kernel_launches: int | None = None
    ref_launches: int | None = None
    fusion_ratio: float | None = Field(None, description="ref launches / kernel launches as recorded.")
    total_cuda_time_us: float | None = None


class NsightMetrics(_Model):
    """`nsight_hardware_counters`: figures a harness derived from Nsight Compute, as recorded."""

    source: str = "nsight_hardware_counters"
    sol_score: float | None = Field(None, description="0-1.")
    dram_util_pct: float | None = None
    compute_util_pct: float | None = None
    bottleneck: str | None = None
    dominant_pipe: str | None = None
    dominant_pipe_pct: float | None = None
    arithmetic_intensity: float | None = Field(None, description="FLOP/byte.")
    ridge_point: float | None = Field(None, description="FLOP/byte.")
    dram_bandwidth_gbps: float | None = None
    fp32_tflops: float | None = None
    fp32_util_pct: float | None = None
    fp16_tflops: float | None = None
    occupancy_pct: float | None = None
    l1_hit_pct: float | None = None
    l2_hit_pct: float | None = None
    ld_sectors_per_req: float | None = None
    st_sectors_per_req: float | None = None
    regs_per_thread: int | None = None
    smem_per_block_bytes: int | None = None
    block_size: int | None = None
    peak_bw_gbps: float | None = None
    peak_fp32_tflops: float | None = None
    peak_fp16_tflops: float | None = None
    warp_stalls_source: str = "nsight"
    warp_stalls_pct: dict[str, float] = Field(default_factory=dict, description="Top warp stall reasons, as the harness labelled them (percent).")


class RecordedMetrics(_Model):
    """Metrics grouped by the harness component that produced them. A missing group was not recorded."""

    timing: TimingMetrics | None = None
    precision: PrecisionMetrics | None = None
    memory: MemoryMetrics | None = None
    launches: LaunchMetrics | None = None
    nsight: NsightMetrics | None = None


class Attachment(_Model):
    """A file beside the trace: an Nsight Compute export or a torch.profiler trace."""

    kind: Literal["ncu_raw_csv", "ncu_details_csv", "ncu_report", "torch_profiler_trace"]
    role: Literal["kernel", "reference"]
    path: str = Field(description="Relative to the trace file.")
    note: str | None = None


class FinalKernel(_Model):
    """The source the agent submitted."""

    source: str
    turn: int | None = Field(None, description="Turn that submitted it.")


class Trace(_Model):
    """One agent run (trace format version 1)."""

    schema_version: Literal[2] = Field(description="Always 2 for this format (version 1 is migrated on read).")
    run: RunInfo
    reference_source: str | None = Field(None, description="The PyTorch reference the agent saw.")
    prompt: str | None = Field(None, description="The prompt the model was given, when the harness kept it.")
    turns: tuple[Turn, ...] = ()
    final_kernel: FinalKernel | None = None
    metrics: RecordedMetrics = Field(default_factory=RecordedMetrics)
    attachments: tuple[Attachment, ...] = ()
    harness_metadata: dict[str, Any] = Field(default_factory=dict, description="Free-form harness diagnostics kept verbatim (e.g. KernelBench's eval metadata).")


def migrate_trace(doc: dict[str, Any]) -> dict[str, Any]:
    """A version-1 document as version 2; a new dict, the input is left as it was.

    Version 1 named the benchmark `variant` and the configuration `config`, and its KernelBench importer
    wrote `config: "kernelbench"` with the run folder as `variant`. Nothing else changed.
    """
    if doc.get("schema_version") != 1:
        return doc
    run = dict(doc.get("run") or {}) if isinstance(doc.get("run"), dict) else doc.get("run")
    if isinstance(run, dict):
        config, variant = run.pop("config", None), run.pop("variant", None)
        if config == "kernelbench":
            run.setdefault("benchmark", "kernelbench")
            run.setdefault("configuration", variant)
        else:
            run.setdefault("benchmark", variant)
            run.setdefault("configuration", config)
    return {**doc, "schema_version": 2, "run": run}


def unknown_fields(model: BaseModel, prefix: str = "") -> list[str]:
    """Dotted paths of every field a trace carried that the format does not define."""
    found = [f"{prefix}{k}" for k in (model.model_extra or {})]
    for name in type(model).model_fields:
        value = getattr(model, name)
        many = isinstance(value, list | tuple)
        for i, item in enumerate(value if many else [value]):
            if isinstance(item, BaseModel):
                where = f"{prefix}{name}[{i}]." if many else f"{prefix}{name}."
                found.extend(unknown_fields(item, where))
    return found


def slugify(text: str) -> str:
    """A bounded, file-name-safe slug of one name; see `reporter.names` (use `unique_slugs` for a set of names)."""
    return slug(text)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- Re-validation results (written by `reporter validate`, persisted next to the data) ---

# Bumped whenever the harness measures differently (it is part of the content key, so old entries no
# longer match; `reporter cache migrate` re-files them). Format 3 kept one wall-time figure (mean, std,
# median, min, max); format 4 keeps three bases with median, IQR, min, max and n. Format-3 results are
# still read (`_migrate_v3`): their figure becomes the wall time, and the page says the rest is missing.
VALIDATION_FORMAT = 5  # 5: correctness before graph capture, attribution, dynamic checks, witnesses (issue 20)
SHOWN_FORMATS = (4,)  # pages still show these until a GPU re-measures; their new figures "not measured"
# The folder under DATA that holds cached validation results (never read as traces).
CACHE_DIR = "validation"
PROBLEMS_DIR = "problems"  # DATA/validation/problems/: per-problem results (`validate.problemcheck`), not kernel entries
# The precision a kernel is checked at when its trace records none; the page says it was assumed.
DEFAULT_PRECISION: Precision = "fp32"


if TYPE_CHECKING:
    class ValidationSettings(_Model, CheckSettings):  # to the type checker: CheckSettings's fields, read-only
        pass
else:
    ValidationSettings = derived("ValidationSettings", _Model, CheckSettings, __name__,
                                 "Everything that changes what a validation measures; part of the cache key "
                                 "(`schema.CheckSettings`'s fields).")


class Environment(_Model):
    gpu: str | None = None
    torch: str | None = None
    cuda: str | None = None
    driver: str | None = None
    python: str | None = None
    host: str | None = None


class MachineState(_Model):
    """Clocks and load, read once per `reporter validate` run (NVML and os.getloadavg); not part of the cache key."""

    sm_clock_mhz: int | None = Field(None, description="SM clock read right after timing.")
    sm_clock_max_mhz: int | None = None
    mem_clock_mhz: int | None = None
    power_limit_w: float | None = None
    persistence_mode: bool | None = None
    load_avg_1m: float | None = Field(None, description="1-minute load average right after timing.")
    cpu_count: int | None = None


class StaticFinding(_Model):
    check: str
    severity: Literal["error", "warn"]
    line: int | None = None
    text: str = ""
    message: str = ""


def _migrate_v3(doc: Any) -> Any:
    """A format-3 result as format 4: its one timing figure becomes the wall-time figure (no IQR, no CI)."""
    if not isinstance(doc, dict) or doc.get("format", VALIDATION_FORMAT) >= 4:
        return doc
    out = dict(doc)
    for key in ("kernel_timing", "reference_timing", "compile_timing"):
        old = out.get(key)
        if isinstance(old, dict) and "median_ms" in old:
            note = "not measured by the format-3 harness"
            out[key] = {"wall": {"median_ms": old["median_ms"], "min_ms": old["min_ms"], "max_ms": old["max_ms"],
                                 "n": old.get("trials", 0)}, "device_note": note, "graph_note": note}
    return out


class _Result(_Model):
    """What a result can say beyond its fields (and how an older format is read)."""

    _migrate = model_validator(mode="before")(_migrate_v3)

    def speedup_on(self, basis: Basis) -> float | None:
        """Reference time over kernel time on one basis; None when either side lacks that figure."""
        res = cast("ValidationResult", self)  # every model made on this class has its fields (result_model)
        k = res.kernel_timing.on(basis) if res.kernel_timing else None
        r = res.reference_timing.on(basis) if res.reference_timing else None
        if k is None or r is None or k.median_ms <= 0:
            return None
        return r.median_ms / k.median_ms

    @property
    def speedup(self) -> float | None:
        """The headline speedup: on device time, the basis that repeats."""
        return self.speedup_on(Basis.DEVICE)


class _Known(_Result):
    """The fields of a result that the parent knows, besides what the worker measured (`WorkerResult`)."""

    format: int = VALIDATION_FORMAT
    kernel_sha256: str
    reference_sha256: str
    settings: ValidationSettings
    environment: Environment = Field(default_factory=Environment)
    machine: MachineState | None = None
    measured_at: str | None = None
    precision: Precision | None = Field(None, description="Precision the check used (its tolerance); None in results written before this was kept.")
    precision_assumed: bool = Field(False, description="True when the trace recorded no precision and the default was used.")
    static_findings: tuple[StaticFinding, ...] = ()
    ncu_files: dict[str, str] = Field(default_factory=dict, description="role -> CSV file beside this result.")


# Where the parent's fields sit among the worker's in a stored result: the order results have always been
# written in, so that storing a result again gives the same bytes. A field added to WorkerResult goes in its order.
_WORKER_AFTER = "measured_at"
_PLACED = {"precision": "verdict", "precision_assumed": "precision", "static_findings": "build_note"}


def result_model(worker: type[WorkerResult], name: str = "ValidationResult") -> type[_Result]:
    """The stored result's model for a worker record: how `ValidationResult` is made from `WorkerResult`."""
    return derived(name, _Result, worker, __name__, "What one re-validation of one kernel measured: the worker's "
                   "`WorkerResult` plus what the parent knows.", own=_Known, record_after=_WORKER_AFTER, placed=_PLACED)


if TYPE_CHECKING:
    class ValidationResult(_Known, WorkerResult):  # to the type checker: WorkerResult's fields, read-only
        pass
else:
    ValidationResult = result_model(WorkerResult)


def measured(worker: WorkerResult, **known: Any) -> ValidationResult:
    """The stored result of one worker's `WorkerResult`, with what the parent knows (`_Known`'s fields)."""
    return ValidationResult.model_validate({**{f: getattr(worker, f) for f in WorkerResult.__dataclass_fields__}, **known})
