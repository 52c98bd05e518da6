"""Convert a KernelBench run folder into version-1 traces (``reporter import kernelbench``).

KernelBench writes ``level_{L}_problem_{P}_sample_{S}_kernel.py`` (optionally ``..._prompt.txt``) and
``eval_results.json`` in one of two generations; both are normalised here. Runtimes are milliseconds
even where KernelBench's own comment says microseconds, so traces are written with unit "ms".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import CollectError
from ..records import Trace
from .safeio import parse_json, read_bounded

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


@dataclass
class EvalEntry:
    compiled: bool | None
    correct: bool | None
    runtime_ms: float | None
    stats: dict[str, Any]
    metadata: dict[str, Any]
    schema: str


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 else None


def _read_json(path: Path, report: ImportReport) -> Any:
    """A results file read within the limits of `limits.py` (regular file, size, depth, integer digits)."""
    try:
        return parse_json(read_bounded(path, path.parent, "(file)", "MAX_TRACE_BYTES"), path)
    except CollectError as exc:
        report.messages.append(f"unreadable JSON: {exc}; its kernels import as unevaluated")
        return None


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
    doc = _read_json(path, report) if path.is_file() else None
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
                        item.get("runtime_stats") or {}, meta if isinstance(meta, dict) else {"metadata": meta}, "current"), str(path))
            elif isinstance(value, dict):  # older flat form: {pid: {compiled, correct, avg_runtime, ...}}
                add((level, pid, _sample_id(value.get("sample_id", 0))), EvalEntry(
                    value.get("compiled"), value.get("correct", value.get("correctness")),
                    _num(value.get("avg_runtime", value.get("runtime"))), value.get("runtime_stats") or {},
                    {k: v for k, v in value.items() if k in METADATA_KEYS or k in ("timestamp",)}, "older (flat)"), str(path))
    # Older per-sample form: .../kernel.json holding eval_result.eval_0
    for kj in sorted(run_dir.rglob("kernel.json")):
        doc = _read_json(kj, report)
        ev = (doc or {}).get("eval_result", {}).get("eval_0") if isinstance(doc, dict) else None
        m = IDS_RE.search(kj.as_posix())
        if not isinstance(ev, dict) or m is None:
            continue
        key = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
        add(key, EvalEntry(ev.get("compiled", True), ev.get("correct"), _num(ev.get("avg_runtime")),
                           ev.get("runtime_stats") or {}, {k: v for k, v in ev.items() if k not in ("correct", "avg_runtime")},
                           "older (kernel.json eval_0)"), str(kj))
    return found


def problem_file(problems: Path, level: int, pid: int) -> Path | None:
    for folder in (problems / f"level{level}", problems / "KernelBench" / f"level{level}", problems):
        hits = sorted(folder.glob(f"{pid}_*.py")) if folder.is_dir() else []
        if hits:
            return hits[0]
    return None


def _verdict(e: EvalEntry | None) -> str:
    if e is None:
        return "not_evaluated"
    if e.compiled is False:
        return "compile_error"
    if e.correct is True:
        return "correct"
    if e.metadata.get("runtime_error") or e.metadata.get("cuda_error"):
        return "runtime_error"
    return "incorrect" if e.correct is False else "not_evaluated"


def _model_name(cfg: Path, report: ImportReport) -> str | None:
    """generation_config.yaml's `model_name`, or None (with a message when the file cannot be read)."""
    try:
        doc = yaml.safe_load(cfg.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        report.messages.append(f"{cfg}: unreadable YAML ({exc}); the model is named after the run folder")
        return None
    name = doc.get("model_name") if isinstance(doc, dict) else None
    return str(name).strip() or None if isinstance(name, (str, int, float)) and not isinstance(name, bool) else None


def import_kernelbench(run_dir: Path, problems: Path, out: Path, model: str | None = None) -> ImportReport:
    report = ImportReport()
    kernels = [(m, p) for p in sorted(run_dir.rglob("*_kernel.py")) if (m := KERNEL_RE.search(p.name))]
    kernels.sort(key=lambda mp: (int(mp[0].group(1)), int(mp[0].group(2)), int(mp[0].group(3))))
    if not kernels:
        report.messages.append(f"{run_dir}: no level_L_problem_P_sample_S_kernel.py files found")
        return report
    level_of = {int(m.group(2)): int(m.group(1)) for m, _ in kernels}
    results = read_eval_results(run_dir, level_of, report)
    cfg = run_dir / "generation_config.yaml"
    if model is None and cfg.is_file():
        model = _model_name(cfg, report)
    seen: set[tuple[int, int, int]] = set()
    for m, path in kernels:
        level, pid, sample = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if (level, pid, sample) in seen:
            report.messages.append(f"{path}: duplicate kernel for level {level} problem {pid} sample {sample}; kept both")
        seen.add((level, pid, sample))
        prob = problem_file(problems, level, pid)
        if prob is None:
            report.messages.append(f"{path}: no problem file {pid}_*.py under {problems}/level{level}; imported without a reference")
        e = results.get((level, pid, sample))
        prompt = path.with_name(path.name.replace("_kernel.py", "_prompt.txt"))
        stats = e.stats if e else {}
        trace = {
            "schema_version": 2,
            "run": {"benchmark": "kernelbench", "configuration": run_dir.name,
                    "recorded_gpu": e.metadata.get("hardware") if e else None, "model": model or run_dir.name, "level": level,
                    "problem_id": pid, "problem_file": prob.name if prob else None, "backend": "cuda", "precision": "fp32",
                    "recorded_verdict": _verdict(e), "complete": True, "turns_used": 0,
                    "source_note": f"Imported from KernelBench run folder {run_dir.name} (sample {sample}; "
                                   f"{'eval results: ' + e.schema + ' schema' if e else 'no eval results: unevaluated'}). "
                                   "KernelBench runtimes are milliseconds."},
            "reference_source": prob.read_text(encoding="utf-8") if prob else None,
            "prompt": prompt.read_text(encoding="utf-8") if prompt.is_file() else None,
            "final_kernel": {"source": path.read_text(encoding="utf-8")},
            "metrics": {"timing": {"source": "kernelbench.timing", "unit": "ms", "runtime": e.runtime_ms if e else None,
                                   "kernel_mean": _num(stats.get("mean")), "kernel_std": _num(stats.get("std"))}} if e and e.runtime_ms is not None else {},
            "harness_metadata": {k: v for k, v in (e.metadata if e else {}).items() if v not in (None, "", [], {})},
        }
        Trace.model_validate(trace)  # never write a trace the collector would reject
        dest = out / f"kernelbench-{run_dir.name}" / f"l{level}-p{pid}-s{sample}" / "trace.json"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(json.dumps(trace, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        report.written.append(dest)
    return report
