"""Convert KernelBench run folders into traces (``reporter import kernelbench``).

KernelBench writes ``level_{L}_problem_{P}_sample_{S}_kernel.py`` (optionally ``..._prompt.txt``) and
``eval_results.json`` in one of two generations; both are normalised here. Runtimes are milliseconds
even where KernelBench's own comment says microseconds, so traces are written with unit "ms".

The recorded speedup is baseline / runtime, KernelBench's own definition. The baseline is the run's
own ``ref_runtime`` where eval_results.json has one, else the entry of a baseline file
(``results/timing/<hardware>/baseline_time_torch.json``); the baseline's GPU is kept with it so a
baseline from another GPU is flagged, never silently compared.

The folders are as untrusted as a trace: every file is read through the bounded reader (`safeio`; a link
out of the run folder, a FIFO or a device is refused, never opened), a bad file is one message and never
stops the rest, and traces are written into OUT without following a link there.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..core import limits
from ..core.errors import CollectError, printable
from ..core.records import Trace
from ..core.safeio import parse_json, parse_yaml, read_bounded
from ..core.vocab import RunVerdict
from .imported import ImportLog
from .kbbaseline import Baseline, read_baseline
from .kbbaseline import num as _num
from .kbgaps import attempted_failure, runtime_hint, without_kernel, write_failures
from .problemset import Drift

__all__ = ["Baseline", "read_baseline"]  # kept importable from here: the CLI and tests use them

KERNEL_RE = re.compile(r"level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py$")
IDS_RE = re.compile(r"level_(\d+)_problem_(\d+)_sample_(\d+)")
METADATA_KEYS = ("compilation_error", "compilation_error_name", "runtime_error", "runtime_error_name",
                 "runtime_error_traceback", "correctness_issue", "correctness_issue_name", "max_difference",
                 "avg_difference", "correctness_trials", "excessive_speedup", "hardware", "device",
                 "error_during_performance", "cuda_error", "other_error")


@dataclass
class ImportReport:
    written: list[Path] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class EvalEntry:
    compiled: bool | None
    correct: bool | None
    runtime_ms: float | None
    stats: dict[str, Any]
    metadata: dict[str, Any]
    schema: str
    ref_runtime_ms: float | None = None
    ref_stats: dict[str, Any] = field(default_factory=dict)


def _dict(v: Any) -> dict[str, Any]:
    """`v` where a JSON object is expected; anything else (a list, a number) reads as an empty one."""
    return v if isinstance(v, dict) else {}


def _text(v: Any) -> str | None:
    return v if isinstance(v, str) and v.strip() else None


def _read_json(path: Path, root: Path, report: ImportReport) -> Any:
    """A results file read within the limits of `limits.py` (regular file inside `root`, size, depth, digits)."""
    try:
        return parse_json(read_bounded(path, root, "(file)", "MAX_TRACE_BYTES"), path)
    except CollectError as exc:
        report.messages.append(f"unreadable JSON: {exc}; its kernels import as unevaluated")
        return None


def _files(root: Path, matches: Callable[[str], bool]) -> Iterator[Path]:
    """Files below `root` whose name matches, in a stable order; linked folders are not entered."""
    for folder, dirs, names in os.walk(root):  # os.walk does not follow links to folders
        dirs.sort()
        yield from (Path(folder) / n for n in sorted(names) if matches(n))


def _read_text(path: Path, root: Path) -> str:
    """A kernel, prompt or problem file as text, through the bounded reader; a CollectError names what is wrong."""
    raw = read_bounded(path, root, "(file)", "MAX_TRACE_BYTES")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CollectError(path, "(file)", f"not UTF-8 text (byte {exc.start:,} cannot be decoded)") from exc


def _sample_id(value: Any) -> int:
    """A result's sample number; anything that is not a small whole number counts as sample 0."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 7:
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**6 else 0


def read_eval_results(run_dir: Path, level_of: dict[int, int], report: ImportReport) -> dict[tuple[int, int, int], EvalEntry]:
    """Results keyed by (level, problem, sample), from either schema generation."""
    found: dict[tuple[int, int, int], EvalEntry] = {}

    def add(key: tuple[int, int, int], entry: EvalEntry, where: str) -> None:
        if key in found:
            report.messages.append(f"{where}: duplicate result for level {key[0]} problem {key[1]} sample {key[2]}; "
                                   "the first one is kept")
            return
        found[key] = entry

    path = run_dir / "eval_results.json"
    doc = _read_json(path, run_dir, report) if path.exists() or path.is_symlink() else None
    if isinstance(doc, dict):
        for pid_text, value in doc.items():
            try:
                pid = int(str(pid_text).split("_")[0])
            except ValueError:
                report.messages.append(f"{path}: key {pid_text!r} is not a problem id; skipped")
                continue
            level = level_of.get(pid, 0)
            if isinstance(value, list):  # current: {pid: [{sample_id, compiled, correctness, ...}]}
                for item in value:
                    if not isinstance(item, dict):
                        continue
                    meta = item.get("metadata") or {}
                    add((level, pid, _sample_id(item.get("sample_id", 0))), EvalEntry(
                        item.get("compiled"), item.get("correctness"), _num(item.get("runtime")),
                        _dict(item.get("runtime_stats")), meta if isinstance(meta, dict) else {"metadata": meta}, "current",
                        _num(item.get("ref_runtime")), _dict(item.get("ref_runtime_stats"))), str(path))
            elif isinstance(value, dict):  # older flat form: {pid: {compiled, correct, avg_runtime, ...}}
                add((level, pid, _sample_id(value.get("sample_id", 0))), EvalEntry(
                    value.get("compiled"), value.get("correct", value.get("correctness")),
                    _num(value.get("avg_runtime", value.get("runtime"))), _dict(value.get("runtime_stats")),
                    {k: v for k, v in value.items() if k in METADATA_KEYS or k in ("timestamp",)}, "older (flat)"), str(path))
    elif doc is not None:
        report.messages.append(f"{path}: expected an object {{problem id: results}}, found {type(doc).__name__}; "
                               "its kernels import as unevaluated")
    # Older per-sample form: .../kernel.json holding eval_result.eval_0
    for kj in _files(run_dir, lambda name: name == "kernel.json"):
        ev = _dict(_dict(_dict(_read_json(kj, run_dir, report)).get("eval_result")).get("eval_0"))
        m = IDS_RE.search(kj.as_posix())
        if not ev or m is None:
            continue
        key = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
        add(key, EvalEntry(ev.get("compiled", True), ev.get("correct"), _num(ev.get("avg_runtime")),
                           _dict(ev.get("runtime_stats")), {k: v for k, v in ev.items() if k not in ("correct", "avg_runtime")},
                           "older (kernel.json eval_0)"), str(kj))
    return found


LEVEL_FOLDER = re.compile(r"level(\d+)")


def problem_folders(problems: Path, level: int) -> tuple[Path, ...]:
    """Where a level's problem files are looked for, in order (named by the message when none is found): KernelBench's
    layout, `levelN/` under the folder given (or under its KernelBench/), or the folder itself when it is named
    `levelN` for this level. Problem ids restart at 1 in every level, so a folder of another level, or one whose
    level nothing says, is never searched: level 1's `10_*.py` is no reference for level 2's problem 10."""
    own = LEVEL_FOLDER.fullmatch(problems.name)
    return (problems / f"level{level}", problems / "KernelBench" / f"level{level}",
            *((problems,) if own is not None and int(own.group(1)) == level else ()))


def problem_file(problems: Path, level: int, pid: int) -> Path | None:
    for folder in problem_folders(problems, level):
        hits = sorted(folder.glob(f"{pid}_*.py")) if folder.is_dir() else []
        if hits:
            return hits[0]
    return None


def _verdict(e: EvalEntry | None) -> RunVerdict:
    if e is None:
        return RunVerdict.NOT_EVALUATED
    if e.compiled is False:
        return RunVerdict.COMPILE_ERROR
    if e.correct is True:
        return RunVerdict.CORRECT
    if e.metadata.get("runtime_error") or e.metadata.get("cuda_error"):
        return RunVerdict.RUNTIME_ERROR
    return RunVerdict.INCORRECT if e.correct is False else RunVerdict.NOT_EVALUATED


def _ratio(ref: float | None, runtime: float | None) -> float | None:
    return ref / runtime if ref is not None and runtime else None


def _timing(e: EvalEntry | None, level: int, prob: str | None, gpu: str | None,
            baseline: Baseline | None, compiled: Baseline | None) -> dict[str, Any]:
    """The recorded timing group: runtime, the baseline it is compared with, and where that baseline came from."""
    if e is None or e.runtime_ms is None:
        return {}
    t: dict[str, Any] = {"source": "kernelbench.timing", "unit": "ms", "runtime": e.runtime_ms,
                         "kernel_mean": _num(e.stats.get("mean")), "kernel_std": _num(e.stats.get("std"))}
    base = baseline.entry(level, prob) if baseline else None
    if e.ref_runtime_ms is not None:
        t.update(ref_runtime=e.ref_runtime_ms, ref_mean=_num(e.ref_stats.get("mean")), ref_std=_num(e.ref_stats.get("std")),
                 ref_source="eval_results.json ref_runtime (same run)", ref_gpu=_text(e.ref_stats.get("hardware")) or gpu)
    elif base is not None and baseline is not None:
        t.update(ref_runtime=_num(base["mean"]), ref_mean=_num(base["mean"]), ref_std=_num(base.get("std")),
                 ref_source=f"KernelBench baseline {baseline.label}", ref_gpu=_text(base.get("hardware")))
    t["speedup"] = _ratio(t.get("ref_runtime"), e.runtime_ms)
    hit = compiled.entry(level, prob) if compiled else None
    if hit is not None:
        t.update(compile_ref_runtime=_num(hit["mean"]), compile_speedup=_ratio(_num(hit["mean"]), e.runtime_ms))
    return {k: v for k, v in t.items() if v is not None}


def _settings(run_dir: Path, report: ImportReport) -> dict[str, Any]:
    """generation_config.yaml (model_name, backend, precision, ...); unreadable YAML is a message, not a stop."""
    cfg = run_dir / "generation_config.yaml"
    if not cfg.exists() and not cfg.is_symlink():
        return {}
    try:
        doc = parse_yaml(read_bounded(cfg, run_dir, "(file)", "MAX_CONFIG_FILE_BYTES"), cfg)
    except CollectError as exc:
        report.messages.append(f"unreadable YAML: {exc}; the model is named after the run folder")
        return {}
    return doc if isinstance(doc, dict) else {}


def _model_name(cfg: dict[str, Any]) -> str | None:
    name = cfg.get("model_name")
    return str(name).strip() or None if isinstance(name, (str, int, float)) and not isinstance(name, bool) else None


@dataclass(frozen=True)
class ImportOptions:
    """What the user says about a sweep that its files do not."""

    model: str | None = None
    configuration: str | None = None
    gpu: str | None = None
    baseline: Baseline | None = None
    baseline_compile: Baseline | None = None
    note: str | None = None
    drift: Mapping[tuple[int, int], Drift] = field(default_factory=dict)  # (level, problem) -> how it drifted
    force: bool = False  # replace traces no import wrote, or that were edited since (`imported.ImportLog`)
    rules: str | None = None  # the rule set the runs were scored under (`core.rules`), and what says so
    rules_from: str | None = None


def is_run_dir(path: Path) -> bool:
    try:
        names = os.listdir(path) if path.is_dir() else []
    except OSError:
        return False
    return "eval_results.json" in names or any(KERNEL_RE.search(n) for n in names)


def run_dirs(paths: list[Path]) -> list[Path]:
    """Run folders as given, and for a `runs/` root every run folder directly inside it (linked ones are not followed)."""
    found: list[Path] = []
    for path in paths:
        found.extend([path] if is_run_dir(path) else
                     sorted(p for p in path.iterdir() if p.is_dir() and not p.is_symlink() and is_run_dir(p)))
    return list(dict.fromkeys(found))


def run_dirs_below(folder: Path, depth: int = 2) -> list[Path]:
    """KernelBench run folders at `folder` or up to `depth` levels below it (a `runs/` root inside a
    project): what `reporter build` names when it is pointed at KernelBench's output instead of traces."""
    if is_run_dir(folder):
        return [folder]
    if depth == 0:
        return []
    try:
        children = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return []
    return [d for c in children for d in run_dirs_below(c, depth - 1)]


def kernel_files(run_dir: Path) -> list[tuple[re.Match[str], Path]]:
    kernels = [(m, p) for p in _files(run_dir, lambda n: n.endswith("_kernel.py")) if (m := KERNEL_RE.search(p.name))]
    return sorted(kernels, key=lambda mp: (int(mp[0].group(1)), int(mp[0].group(2)), int(mp[0].group(3))))


@dataclass(frozen=True)
class _Sources:
    """The texts of one sample, read through the bounded reader."""

    kernel: str
    prompt: str | None
    reference: str | None


def _sources(run_dir: Path, path: Path, prob: Path | None, problems: Path) -> _Sources:
    prompt = path.with_name(path.name.replace("_kernel.py", "_prompt.txt"))
    return _Sources(_read_text(path, run_dir), _read_text(prompt, run_dir) if prompt.exists() or prompt.is_symlink() else None,
                    _read_text(prob, problems) if prob else None)


def _trace(run_dir: Path, ids: tuple[int, int, int], prob: Path | None, e: EvalEntry | None, cfg: dict[str, Any],
           opts: ImportOptions, src: _Sources) -> dict[str, Any]:
    level, pid, sample = ids
    meta = e.metadata if e else {}
    gpu = opts.gpu or _text(meta.get("hardware"))
    folder = printable(run_dir.name)  # a folder name that is not UTF-8 shows its bytes as \xNN
    model = opts.model or _model_name(cfg) or folder
    return {
        "schema_version": 2,
        "run": {"benchmark": "kernelbench", "configuration": opts.configuration, "model": str(model), "level": level,
                "problem_id": pid, "problem_file": printable(prob.name) if prob else None, "sample": sample, "recorded_gpu": gpu,
                "backend": _text(cfg.get("backend")) or "cuda", "precision": cfg.get("precision") if cfg.get("precision") in ("fp16", "bf16") else "fp32",
                "recorded_verdict": _verdict(e), "complete": True,  # no transcript: turns unknown
                "rules": opts.rules, "rules_from": opts.rules_from,
                "source_note": f"Imported from KernelBench run folder {folder} (sample {sample}; "
                               f"{'eval results: ' + e.schema + ' schema' if e else 'no eval results: unevaluated'}). "
                               "KernelBench runtimes are milliseconds." + (f" {opts.note}" if opts.note else "")
                               + (f" Problem drift: {d.sentence()}." if (d := opts.drift.get((level, pid))) else "")},
        "reference_source": src.reference,
        "prompt": src.prompt,
        "final_kernel": {"source": src.kernel},
        "metrics": {"timing": t} if (t := _timing(e, level, prob.name if prob else None, gpu, opts.baseline, opts.baseline_compile)) else {},
        "harness_metadata": {k: v for k, v in meta.items() if v not in (None, "", [], {})},
    }


def _sample_name(ids: tuple[int, int, int], copy: int) -> str:
    """The trace folder of a sample; a second file with the same ids (e.g. in another subfolder) gets `-copy2`."""
    return f"l{ids[0]}-p{ids[1]}-s{ids[2]}" + (f"-copy{copy}" if copy > 1 else "")


def _import_one(run_dir: Path, path: Path, ids: tuple[int, int, int], ctx: tuple[Path, ImportLog, dict[Any, EvalEntry],
                dict[str, Any], ImportOptions], name: str, report: ImportReport) -> Path:
    problems, log, results, cfg, opts = ctx
    prob = problem_file(problems, ids[0], ids[1])
    if prob is None:
        report.messages.append(f"{path}: no problem file {ids[1]}_*.py under {problems}/level{ids[0]}; imported without a reference")
    if (drifted := opts.drift.get(ids[:2])) is not None:
        report.messages.append(f"{path}: {drifted.sentence()}")
    trace = _trace(run_dir, ids, prob, results.get(ids), cfg, opts, _sources(run_dir, path, prob, problems))
    if (hint := runtime_hint(trace["metrics"].get("timing", {}))) is not None:
        report.messages.append(f"{path}: {hint}")
    if opts.baseline and prob and "ref_runtime" not in trace["metrics"].get("timing", {}) and trace["metrics"]:
        report.messages.append(f"{path}: {prob.name} is not in baseline {opts.baseline.label}; no recorded speedup")
    try:
        Trace.model_validate(trace)  # never write a trace the collector would reject
    except ValidationError as exc:
        err = exc.errors()[0]
        raise CollectError(path, ".".join(map(str, err["loc"])) or "(trace)", f"{err['msg']}; not imported") from exc
    text = json.dumps(trace, indent=1, ensure_ascii=False) + "\n"
    if len(text.encode("utf-8", "surrogatepass")) > limits.MAX_TRACE_BYTES:
        raise CollectError(path, "(trace)", f"the trace would be over the limit {limits.describe('MAX_TRACE_BYTES')}; not imported")
    return log.write((f"kernelbench-{run_dir.name}", name, "trace.json"), text)


def import_kernelbench(run_dir: Path, problems: Path, out: Path, model: str | None = None,
                       options: ImportOptions | None = None, step: Callable[[], None] | None = None) -> ImportReport:
    """One run folder into traces under ``out/kernelbench-<folder>/l<L>-p<P>-s<S>/trace.json``; a file that
    cannot be imported is one message, and the others are still imported."""
    opts = options or ImportOptions(model=model)
    report = ImportReport()
    kernels = kernel_files(run_dir)
    if not kernels:
        report.messages.append(f"{run_dir}: no level_L_problem_P_sample_S_kernel.py files found")
        return report
    results = read_eval_results(run_dir, {int(m.group(2)): int(m.group(1)) for m, _ in kernels}, report)
    ctx = (problems, ImportLog.load(out, opts.force), results, _settings(run_dir, report), opts)
    first: dict[tuple[int, int, int], str] = {}
    used: set[str] = set()
    for m, path in kernels:
        ids = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
        name = next(n for copy in range(1, len(kernels) + 2) if (n := _sample_name(ids, copy)) not in used)
        used.add(name)
        try:
            report.written.append(_import_one(run_dir, path, ids, ctx, name, report))
        except CollectError as exc:
            report.messages.append(f"not imported: {exc}")
        except Exception as exc:  # noqa: BLE001 - the guard: one file must never stop the others
            report.messages.append(f"not imported: {printable(str(path))}: reporter failed on this file "
                                   f"({type(exc).__name__}: {str(exc)[:200]}); please report this as a bug")
        else:
            if ids in first:
                report.messages.append(f"{path}: another kernel for level {ids[0]} problem {ids[1]} sample {ids[2]} (the first "
                                       f"is {first[ids]}); kept both, this one as {name}, with the same eval result")
        first.setdefault(ids, name)
        if step is not None:
            step()

    def failure(key: tuple[int, int, int], at: tuple[int, int, int]) -> dict[str, Any]:  # an entry with no kernel file
        prob = problem_file(problems, at[0], at[1])
        src = _Sources("", None, _read_text(prob, problems) if prob else None)
        return attempted_failure(_trace(run_dir, at, prob, results[key], ctx[3], opts, src), str(_verdict(results[key])))
    missing = without_kernel(results, {(int(m.group(1)), int(m.group(2)), int(m.group(3))) for m, _ in kernels})
    written, messages = write_failures(run_dir, missing, failure, ctx[1].write)
    report.written += written
    report.messages += messages
    return report
