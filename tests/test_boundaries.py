"""What crosses a thread, file or process boundary in validation is a frozen typed record, never a dict; and the
stored result takes the worker's fields from the worker's own record, so the two cannot drift apart.

The structural checks are functions run on the real tree and, to show they can fail, on a broken case.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import subprocess
import sys
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import UnionType
from typing import Any, get_type_hints

import pytest
from pydantic import ValidationError

from conftest import ROOT
from reporter.core.decode import from_doc
from reporter.core.records import ValidationResult, ValidationSettings, measured, result_model
from reporter.core.schema import CheckSettings, TimingFigures, TrialResult, Verdict, WorkerJob, WorkerResult, about
from reporter.validate import buildcache, forkserver
from reporter.validate.process import read_result
from reporter.validate.recorder import Item, Outcome, RunStats, check_settings
from reporter.validate.steps import StepResult

# Where records cross: the local executor's pool and queue (threads), Ray tasks, the fork server and the
# worker's job and result files (processes), the build cache's marker (files), and the recorder between them.
BOUNDARY_MODULES = ("executors/local.py", "executors/ray.py", "recorder.py", "runner.py", "steps.py", "process.py",
                    "slots.py", "forkserver.py", "buildcache.py", "profiling.py")
# The records that cross them; every record reachable from their fields is checked too.
BOUNDARY_RECORDS = (WorkerJob, WorkerResult, CheckSettings, StepResult, Item, Outcome, RunStats, buildcache.Marker,
                    forkserver.Request, forkserver.Started, forkserver.Reaped)
MAPPINGS = {"dict", "Dict", "Mapping", "MutableMapping"}


# --- Annotations: no mapping to Any in a boundary module's signatures, fields, queues ---------------------

def _name(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def _untyped(annotation: ast.expr) -> bool:
    """Whether an annotation is or holds a mapping whose values are Any, or a mapping not typed at all."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):  # "quoted" annotations
        annotation = ast.parse(annotation.value, mode="eval").body
    subscripted = {id(n.value) for n in ast.walk(annotation) if isinstance(n, ast.Subscript)}
    for n in ast.walk(annotation):
        if isinstance(n, ast.Subscript) and _name(n.value) in MAPPINGS:
            args = n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]
            if _name(args[-1]) == "Any":
                return True
        elif isinstance(n, ast.Name | ast.Attribute) and _name(n) in MAPPINGS and id(n) not in subscripted:
            return True
    return False


def untyped_annotations(source: str, where: str) -> list[str]:
    """Every parameter, return value and annotated name (fields, `self.x: ...`, nested functions too) that is
    or holds an untyped mapping."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x is not None)]
            found += [f"{where}:{node.lineno} {node.name}({p.arg})" for p in params if p.annotation and _untyped(p.annotation)]
            if node.returns is not None and _untyped(node.returns):
                found.append(f"{where}:{node.lineno} {node.name} returns")
        elif isinstance(node, ast.AnnAssign) and _untyped(node.annotation):
            found.append(f"{where}:{node.lineno} {ast.unparse(node.target)}")
    return found


def test_no_untyped_mapping_crosses_a_boundary() -> None:
    found = [hit for rel in BOUNDARY_MODULES
             for hit in untyped_annotations((ROOT / "reporter/validate" / rel).read_text(encoding="utf-8"), rel)]
    assert found == []


def test_an_untyped_mapping_is_found_wherever_it_is_annotated() -> None:
    broken = '''
def step(job: WorkerJob, extra: "dict[str, Any]") -> Mapping[str, Any]: ...
def plain(out: dict) -> None: ...
class Run:
    def __init__(self) -> None:
        self.ready: queue.Queue[tuple[Item, dict[str, typing.Any], float] | None] = queue.Queue()
        def attempt() -> StepResult | dict[str, Any]: ...
def fine(env: dict[str, str | None], refs: dict[Any, StepResult], **kw: Any) -> Mapping[str, float]: ...
'''
    assert untyped_annotations(broken, "x.py") == [
        "x.py:2 step(extra)", "x.py:2 step returns", "x.py:3 plain(out)", "x.py:6 self.ready", "x.py:7 attempt returns"]


# --- Records: frozen, and typed all the way down ------------------------------------------------------

def _loose(tp: Any, where: str, seen: set[type]) -> list[str]:
    """Where a type is or holds Any or an untyped mapping, following the fields of every dataclass it holds."""
    if tp is Any:
        return [where]
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if tp in seen:
            return []
        seen.add(tp)
        found = [] if tp.__dataclass_params__.frozen else [f"{where}: {tp.__name__} is not frozen"]  # type: ignore[attr-defined]
        for name, hint in get_type_hints(tp).items():
            found += _loose(hint, f"{tp.__name__}.{name}", seen)
        return found
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp in (dict, Mapping) or (origin in (dict, Mapping) and not args):
        return [f"{where}: an untyped mapping"]
    if origin in (typing.Union, UnionType, tuple, list, dict, Mapping):
        return [hit for a in args if a is not Ellipsis for hit in _loose(a, where, seen)]
    return []


def test_every_boundary_record_is_frozen_and_typed() -> None:
    seen: set[type] = set()
    assert [hit for record in BOUNDARY_RECORDS for hit in _loose(record, record.__name__, seen)] == []
    assert {TrialResult, TimingFigures, CheckSettings} <= seen  # followed into the records they hold


@dataclass(frozen=True)
class _Inner:
    extra: Mapping[str, Any]


@dataclass
class _Mutable:
    n: int


@dataclass(frozen=True)
class _Outer:
    inner: tuple[_Inner, ...]
    mutable: _Mutable | None
    plain: dict  # type: ignore[type-arg]


def test_a_loose_or_mutable_record_is_found() -> None:
    assert _loose(_Outer, "_Outer", set()) == ["_Inner.extra", "_Outer.mutable: _Mutable is not frozen",
                                               "_Outer.plain: an untyped mapping"]


# --- ValidationResult is WorkerResult's fields plus the parent's ----------------------------------------

# Every field of a stored result, in the order a result file lists them (a stored result rewritten gives the same bytes).
STORED_ORDER = [
    "format", "kernel_sha256", "reference_sha256", "settings", "environment", "machine", "measured_at", "verdict",
    "precision", "precision_assumed", "reason", "log", "output_tail", "weights_note", "jitter_note", "problem_names",
    "trials", "check_strength", "stateful_reference", "recheck", "statistics_trials", "dynamic_checks", "benchmark", "other_benchmarks",
    "pending",
    "kernel_timing", "reference_timing",
    "compile_timing", "kernel_launches", "reference_launches", "kernel_peak_bytes", "reference_peak_bytes",
    "deterministic", "reference_from", "reference_not_reused", "gpu_reading", "build_note", "static_findings", "phase_s",
    "ncu_files"]
PARENT_FIELDS = {"format", "kernel_sha256", "reference_sha256", "settings", "environment", "machine", "measured_at",
                 "precision", "precision_assumed", "static_findings", "ncu_files"}


def test_validation_result_has_the_worker_fields_with_their_types_and_defaults() -> None:
    model = ValidationResult.model_fields
    assert list(model) == STORED_ORDER
    worker = {f.name: f for f in dataclasses.fields(WorkerResult)}
    assert set(worker) == set(STORED_ORDER) - PARENT_FIELDS
    for name, expected in {"verdict": Verdict, "reason": str, "trials": tuple[TrialResult, ...],
                           "kernel_timing": TimingFigures | None, "phase_s": Mapping[str, float],
                           "build_note": str | None}.items():
        assert model[name].annotation == expected, name
    hints = get_type_hints(WorkerResult)
    for name, f in worker.items():
        assert model[name].annotation == hints[name], name
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        assert model[name].is_required() == (default is dataclasses.MISSING), name
        if default is not dataclasses.MISSING:
            assert model[name].get_default(call_default_factory=True) == default, name
    with pytest.raises(ValidationError, match="verdict"):  # a result that does not say its verdict is unreadable
        ValidationResult.model_validate({"kernel_sha256": "k", "reference_sha256": "r", "settings": {}})


def test_descriptions_live_beside_the_dataclass_fields() -> None:
    assert ValidationResult.model_fields["output_tail"].description == (
        "A worker that died or was killed: the last lines of its output (the crash's evidence).")
    assert ValidationResult.model_fields["problem_names"].description == (
        "Names the kernel uses that only the problem file defines (KernelBench's shared namespace).")
    assert (ValidationResult.model_fields["build_note"].description or "").startswith("How the kernel's extension was built")
    assert ValidationResult.model_fields["precision"].description.startswith("Precision the check used")  # type: ignore[union-attr]
    assert ValidationSettings.model_fields["perf_trials"].description == "Calls per basis before the adaptive stop rule is tried."


def test_a_field_added_to_the_worker_result_is_stored_and_read_with_no_second_edit() -> None:
    @dataclass(frozen=True)
    class Warmer(WorkerResult):
        gpu_temp_c: float | None = field(default=None, metadata=about("GPU temperature after timing."))

    model = result_model(Warmer, "WarmerResult")
    assert list(model.model_fields) == [*STORED_ORDER[:-1], "gpu_temp_c", "ncu_files"]  # after the worker's own
    got = model.model_fields["gpu_temp_c"]
    assert (got.annotation, got.default, got.description) == (float | None, None, "GPU temperature after timing.")
    out = Warmer(Verdict.CORRECT, "ok", gpu_temp_c=61.5)
    assert Warmer.from_json(out.to_json()) == out  # the worker's JSON carries it too
    stored = model.model_validate({**json.loads(out.to_json()), "kernel_sha256": "k", "reference_sha256": "r", "settings": {}})
    assert stored.gpu_temp_c == 61.5  # type: ignore[attr-defined]


def test_a_stored_result_lists_its_fields_in_the_stored_order() -> None:
    res = measured(WorkerResult(Verdict.CORRECT, "ok", phase_s={"load": 0.25}), kernel_sha256="k", reference_sha256="r",
                   settings=ValidationSettings(), static_findings=())
    assert list(json.loads(res.model_dump_json())) == STORED_ORDER
    assert ValidationResult.model_validate_json(res.model_dump_json()) == res


def test_validation_settings_are_the_check_settings() -> None:
    assert list(ValidationSettings.model_fields) == [
        "seed", "nominal_trials", "jitter_trials", "jitter_fraction", "atol", "rtol", "warmup", "perf_trials",
        "ci_target_pct", "time_cap_s", "flush_l2_mb", "timeout_s", "torch_compile_baseline", "excessive_speedup"]
    assert [f.name for f in dataclasses.fields(CheckSettings)] == list(ValidationSettings.model_fields)
    assert check_settings(ValidationSettings(seed=7, atol={"fp32": 0.5})) == CheckSettings(seed=7, atol={"fp32": 0.5})
    assert ValidationSettings().model_dump() == dataclasses.asdict(CheckSettings())


# --- Reading the records back -------------------------------------------------------------------------

def test_the_decoder_names_the_field_that_does_not_fit() -> None:
    good = json.loads(WorkerResult(Verdict.INCORRECT, trials=(TrialResult(0, 1, False, False, ("8x8",)),)).to_json())
    assert from_doc(WorkerResult, good).trials[0].input_shapes == ("8x8",)
    for path, value, message in [(("trials", 0, "passed"), "yes", r"WorkerResult.trials\[0\].passed: expected bool"),
                                 (("verdict",), "great", r"WorkerResult.verdict: 'great' is not one of"),
                                 (("trials", 0, "index"), True, r"WorkerResult.trials\[0\].index: expected int, got bool"),
                                 (("phase_s",), [1.0], r"WorkerResult.phase_s: expected Mapping"),
                                 (("trials", 0, "oops"), 1, r"WorkerResult.trials\[0\]: TrialResult has no field 'oops'")]:
        doc = json.loads(json.dumps(good))
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        with pytest.raises(ValueError, match=message):
            from_doc(WorkerResult, doc)


def test_a_result_file_the_kernel_overwrote_is_a_crash_with_its_evidence(tmp_path: Path) -> None:
    (tmp_path / "check.log").write_text("my last words\n", encoding="utf-8")
    (tmp_path / "check.json").write_text('{"verdict": "correct", "speedup": 1000}', encoding="utf-8")
    got = read_result("check", tmp_path, 0, 5.0)
    assert got.verdict == Verdict.CRASHED and got.output_tail == "my last words"
    assert got.reason.startswith("the worker ended (exit code 0), but its result file is not a worker result "
                                 "(WorkerResult: WorkerResult has no field 'speedup')")


def test_fork_server_messages_round_trip() -> None:
    req = forkserver.Request(3, "check", "/tmp/job", {"CUDA_VISIBLE_DEVICES": None, "REPORTER_THREADS": "2"})
    assert forkserver.request_from(forkserver.to_line(req)) == req
    for reply in (forkserver.Started(3, 4242), forkserver.Reaped(3, -9, 1.5)):
        assert forkserver.reply_from(forkserver.to_line(reply)) == reply
    with pytest.raises(ValueError, match="missing 'rc'"):
        forkserver.reply_from('{"id": 3}')


# The modules a GPU worker or a Ray task imports: the GPU image has neither pydantic nor pandas.
WORKER_SIDE = ("reporter.validate.worker", "reporter.validate.steps", "reporter.validate.process",
               "reporter.validate.forkserver", "reporter.validate.buildcache", "reporter.validate.slots")


def test_the_worker_side_imports_without_pydantic() -> None:
    pytest.importorskip("torch")
    code = ("import sys; sys.modules['pydantic'] = sys.modules['pandas'] = None\n"
            + "".join(f"import {m}\n" for m in WORKER_SIDE))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def test_closing_a_killed_fork_server_keeps_the_interruption() -> None:
    # A deadline kills every server, then closes each: a request half-written to a dead server's stdin made
    # close() raise BrokenPipeError, which replaced the deadline and lost the benchmark's report on the H200.
    import os
    server = forkserver.ForkServer(dict(os.environ))
    server.kill()
    server.proc.wait(timeout=30)
    assert server.proc.stdin is not None
    server.proc.stdin.write('{"id": 1')  # buffered: flushed only by close()
    server.close()
    assert server.proc.returncode == -9
