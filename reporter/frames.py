"""Tidy tables: one row per run (`runs_frame`, behind `reporter.load`, which reads the site's digests) and one
per turn and tool call (`load_turns`).

The columns follow the trace's vocabulary and put units in their names (`kernel_device_ms`), never in
values. Recorded figures keep a `recorded_` prefix and are converted from the unit the harness claimed;
re-measured figures carry their timing basis (`device`, `graph`, `wall`; see validate.schema.Basis). `speedup` is the
figure the aggregates use: our re-validation's where one exists, otherwise the recorded one, with
`speedup_source` saying which; it is null for a kernel that is incorrect, failed, suspect or a reward hack
(`checks.speedup_reported`), while `recorded_speedup` and `speedup_<basis>` keep what was recorded and
measured, named for what they are. Unknown is NaN / <NA>, never 0. An integer beyond ±(2^63 - 1)
(`checks.TABLE_INT_LIMIT`) cannot be held by an integer column: it is <NA> in the table, and the run's page
shows it as recorded with a flag.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from .core import DISTRIBUTION
from .core.schema import Verdict
from .core.units import to_ms
from .core.vocab import UNJUDGED, RunVerdict, Source

if TYPE_CHECKING:
    from .collect.problemset import ProblemSet
    from .collect.traces import RunRecord
    from .collect.validation import CachedValidation
    from .core.judgement import Judgement
    from .core.records import ValidationResult

# The re-validation's timing bases; each adds kernel_<basis>_ms, ref_<basis>_ms and speedup_<basis>.
TIMING_BASES: tuple[str, ...] = ("device", "graph", "wall")
# The basis whose speedup the aggregates use when a run was re-validated.
PRIMARY_BASIS = "device"
NCU_FIGURES = {"duration": "ncu_kernel_duration_us", "sol_score": "ncu_sol_score", "compute_util": "ncu_compute_util_pct",
               "dram_util": "ncu_dram_util_pct", "occupancy": "ncu_occupancy_pct", "fp32_tflops": "ncu_fp32_tflops",
               "dram_bandwidth": "ncu_dram_bandwidth_gbps", "arithmetic_intensity": "ncu_arithmetic_intensity",
               "bottleneck": "ncu_bottleneck"}
RECORDED_NSIGHT = ("sol_score", "dram_util_pct", "compute_util_pct", "occupancy_pct", "fp32_tflops",
                   "dram_bandwidth_gbps", "arithmetic_intensity", "bottleneck")

_STR, _INT, _BOOL, _FLOAT = "string", "Int64", "boolean", "float64"
# The hardware columns (`collect.sol.sol_row`): T_SOL and fractions in each GPU's own terms, recorded times on the
# recorded GPU, re-measured ones on the re-measuring GPU; `*sol_exec_score*` is SOL-ExecBench's score (`recorded_sol_score`
# is the harness's own Nsight figure, another measure). `sol_fraction` and `sol_exec_score` are what boards use: the
# device basis when re-validated, else the recorded figures, null where the speedup is no result. `*sol_cause*` names
# the assumptions of T_SOL a kernel time under it broke (`core.sol.AboveCause`, "; "-joined): such a fraction is shown
# with its cause and counts in no geomean of SOL.
SOL_COLUMNS: dict[str, str] = {
    "work_flops": _INT, "work_bytes": _INT, "work_intensity": _FLOAT, "work_dtype": _STR, "work_note": _STR,
    "recorded_sol_ms": _FLOAT, "recorded_floor_ms": _FLOAT, "recorded_sol_fraction": _FLOAT, "recorded_ref_sol_fraction": _FLOAT,
    "recorded_sol_exec_score": _FLOAT, "recorded_sol_cause": _STR, "sol_ms": _FLOAT, "floor_ms": _FLOAT,
    **{f"{c}_{b}": _FLOAT for b in TIMING_BASES for c in ("sol_fraction", "ref_sol_fraction", "sol_exec_score")},
    **{f"sol_cause_{b}": _STR for b in TIMING_BASES},
    "below_floor": _STR, "recorded_impossible": _BOOL, "sol_fraction": _FLOAT, "sol_exec_score": _FLOAT, "sol_gpu": _STR,
    "sol_cause": _STR,
}
_TIMED = {f"{side}_{b}_ms": _FLOAT for b in TIMING_BASES for side in ("kernel", "ref")} | {f"speedup_{b}": _FLOAT for b in TIMING_BASES}
COLUMNS: dict[str, str] = {
    # identity
    "run_id": _STR, "benchmark": _STR, "level": _INT, "problem_id": _INT, "problem": _STR, "model": _STR,
    "configuration": _STR, "sample": _INT, "complete": _BOOL, "backend": _STR, "precision": _STR,
    # verdicts
    "submitted": _BOOL, "recorded_verdict": _STR, "revalidated_verdict": _STR, "verdict": _STR, "verdict_source": _STR,
    "recorded_correct": _BOOL, "revalidated_correct": _BOOL, "correct": _BOOL, "compiled": _BOOL, "verdicts_disagree": _BOOL,
    # the rules the run was scored under, its verdict replayed under them, and why it differs from our audit (`core.judgement`)
    "rules": _STR, "rules_from": _STR, "benchmark_verdict": _STR, "benchmark_evidence": _STR,
    "verdicts_cause_class": _STR, "verdicts_cause": _STR, "at_tolerance": _STR,
    # where it was measured
    "recorded_gpu": _STR, "revalidated_gpu": _STR, "revalidated_at": _STR,
    # recorded timing, converted to ms from the unit the harness claimed (`recorded_unit`)
    "recorded_unit": _STR, "recorded_kernel_ms": _FLOAT, "recorded_ref_ms": _FLOAT, "recorded_speedup": _FLOAT,
    "recorded_baseline_source": _STR, "recorded_baseline_gpu": _STR, "baseline_other_gpu": _BOOL,
    "recorded_compile_ref_ms": _FLOAT, "recorded_compile_speedup": _FLOAT,
    # re-measured timing, one set of columns per basis
    **_TIMED, "kernel_device_iqr_ms": _FLOAT,
    # what the aggregates use
    "kernel_ms": _FLOAT, "ref_ms": _FLOAT, "speedup": _FLOAT, "speedup_source": _STR,
    # flags and suspicion
    "flags": _INT, "flag_fields": _STR, "static_errors": _INT, "measured_flags": _INT, "flagged": _BOOL, "suspect": _BOOL,
    "cleared": _BOOL, "review": _STR, "reviewed_hack": _BOOL, "evidence": _STR, "suspect_checks": _STR,
    # what re-validation measured of the submission beside its verdict (`core.suspects`)
    "own_kernel_share": _FLOAT, "checks_incomplete": _BOOL, "incomplete_checks": _STR,
    "weak_check": _STR, "strengthened_inputs": _STR,
    # the agent's effort
    "turns": _INT, "max_turns": _INT, "tool_calls": _INT, "tokens_total": _INT, "wall_clock_s": _FLOAT, "truncated": _BOOL,
    # launches and memory
    "recorded_kernel_launches": _INT, "recorded_ref_launches": _INT, "kernel_launches": _INT, "ref_launches": _INT,
    "recorded_kernel_peak_mb": _FLOAT, "recorded_ref_peak_mb": _FLOAT, "kernel_peak_mb": _FLOAT, "ref_peak_mb": _FLOAT,
    # Nsight: as recorded by the harness, and as measured from ncu exports (attached or from `validate --ncu`)
    **{f"recorded_{k}": (_STR if k == "bottleneck" else _FLOAT) for k in RECORDED_NSIGHT},
    **{v: (_STR if k == "bottleneck" else _FLOAT) for k, v in NCU_FIGURES.items()},
    # the hardware: work, speed of light, its fraction and SOL-ExecBench's score per basis (`collect.sol`)
    **SOL_COLUMNS,
}
TURN_COLUMNS: dict[str, str] = {
    "run_id": _STR, "benchmark": _STR, "level": _INT, "problem_id": _INT, "model": _STR, "configuration": _STR,
    "turn": _INT, "turn_s": _FLOAT, "llm_s": _FLOAT, "tool_s": _FLOAT, "chars": _INT, "reasoning_chars": _INT,
    "final": _BOOL, "call": _INT, "tool": _STR, "ok": _BOOL, "result_chars": _INT,
}


def _verdicts(r: RunRecord, res: ValidationResult | None) -> dict[str, Any]:
    run = r.trace.run
    submitted = r.trace.final_kernel is not None
    rec = run.recorded_verdict
    verdict: str  # a trace may record a verdict outside RunVerdict: it is kept as written
    source: Source
    if not run.complete:
        verdict, source = RunVerdict.PARTIAL, Source.PARTIAL
    elif res is not None:
        verdict, source = res.verdict, Source.RE_VALIDATED
    else:
        verdict, source = rec or RunVerdict.UNKNOWN, Source.RECORDED
    rec_ok = None if rec is None else rec == RunVerdict.CORRECT
    reval_ok = None if res is None else res.verdict == Verdict.CORRECT
    from .core.judgement import judge_run
    j = judge_run(run, res)
    return {
        "submitted": submitted, "recorded_verdict": rec, "revalidated_verdict": res.verdict if res else None,
        "verdict": verdict, "verdict_source": source, "recorded_correct": rec_ok, "revalidated_correct": reval_ok,
        # Correct by the best evidence: replayed under the run's own rules, else our re-validation, else the harness
        # (`Judgement.counted`); `revalidated_correct` is our audit alone (the boards' re-validated view).
        "correct": bool(j.counted if j.counted is not None else rec_ok),
        # Only a submission can have compiled; an unknown verdict says nothing either way.
        "compiled": (None if verdict in UNJUDGED else verdict != RunVerdict.COMPILE_ERROR) if submitted else False,
        "verdicts_disagree": None if rec_ok is None or reval_ok is None else rec != res.verdict,  # type: ignore[union-attr]
        **_judged(j),
    }


def _judged(j: Judgement) -> dict[str, Any]:
    """The two verdicts as the run page shows them: the run's own rules replayed, and the cause of a disagreement."""
    return {"rules": j.rules.name, "rules_from": j.rules_from, "benchmark_verdict": j.benchmark,
            "benchmark_evidence": j.benchmark_why, "verdicts_cause_class": j.cause_class, "verdicts_cause": j.cause,
            "at_tolerance": j.at_bound}


def _timing(r: RunRecord, res: ValidationResult | None) -> dict[str, Any]:
    from .core.checks import same_gpu
    t = r.trace.metrics.timing
    out: dict[str, Any] = {"recorded_unit": t.unit if t else None}
    if t is not None:
        out.update(recorded_kernel_ms=to_ms(t.runtime, t.unit), recorded_ref_ms=to_ms(t.ref_runtime, t.unit),
                   recorded_speedup=t.speedup, recorded_baseline_source=t.ref_source,
                   recorded_baseline_gpu=t.ref_gpu, recorded_compile_ref_ms=to_ms(t.compile_ref_runtime, t.unit),
                   recorded_compile_speedup=t.compile_speedup)
        base_gpu, run_gpu = out["recorded_baseline_gpu"], r.trace.run.recorded_gpu
        same = same_gpu(base_gpu, run_gpu)
        out["baseline_other_gpu"] = None if same is None else not same
    from .core.schema import Basis
    k, ref = (res.kernel_timing, res.reference_timing) if res is not None else (None, None)
    for b in TIMING_BASES:
        ks, rs = (k.on(Basis(b)) if k else None), (ref.on(Basis(b)) if ref else None)
        out.update({f"kernel_{b}_ms": ks.median_ms if ks else None, f"ref_{b}_ms": rs.median_ms if rs else None,
                    f"speedup_{b}": res.speedup_on(Basis(b)) if res is not None else None})
    out["kernel_device_iqr_ms"] = k.device.iqr_ms if k and k.device else None
    # Timed on any basis is re-validated: on a basis it lacks, its speedup is unknown, never the recorded one.
    measured = any(out[f"kernel_{b}_ms"] is not None and out[f"ref_{b}_ms"] is not None for b in TIMING_BASES)
    if measured:
        out.update(kernel_ms=out[f"kernel_{PRIMARY_BASIS}_ms"], ref_ms=out[f"ref_{PRIMARY_BASIS}_ms"],
                   speedup=out[f"speedup_{PRIMARY_BASIS}"], speedup_source=Source.RE_VALIDATED)
    elif t is not None:
        out.update(kernel_ms=out["recorded_kernel_ms"], ref_ms=out["recorded_ref_ms"], speedup=t.speedup,
                   speedup_source=Source.RECORDED if t.speedup is not None else None)
    return out


def _ncu(r: RunRecord, cached: CachedValidation | None) -> dict[str, Any]:
    from .collect import ncu as gm
    # counters from `reporter validate --ncu` win over the run's attached exports, as on the run page
    source = (cached.ncu.get("kernel") if cached is not None else None) or r.profiles.get("kernel")
    summary = gm.summarize(list(source.ncu_kernels)) if source is not None else None
    if summary is None:
        return {}
    return {col: summary.figures[key].value for key, col in NCU_FIGURES.items() if key in summary.figures}


def run_row(r: RunRecord, cached: CachedValidation | None) -> dict[str, Any]:
    """Everything one run contributes to the table, as plain values."""
    from .collect.sol import RECORDED, sol_report, sol_row
    from .collect.suspicion import evidence_anchor, flag_count, suspicion
    run, m = r.trace.run, r.trace.metrics
    res = cached.result if cached is not None else None
    statics = sum(1 for f in res.static_findings if f.severity == "error") if res else 0
    sus = suspicion(r, res)
    row: dict[str, Any] = {
        "run_id": r.run_id, "benchmark": run.benchmark, "level": run.level, "problem_id": run.problem_id,
        "problem": run.problem_file or run.title, "model": run.model, "configuration": run.configuration,
        "sample": run.sample, "complete": run.complete, "backend": run.backend, "precision": run.precision,
        "recorded_gpu": run.recorded_gpu, "revalidated_gpu": res.environment.gpu if res else None,
        "revalidated_at": res.measured_at if res else None,
        "flags": flag_count(r, sus), "flag_fields": "; ".join(f.field for f in r.flags) or None, "static_errors": statics,
        # suspect: left out of fast_p and the geomean: an error-level finding (static, transcript, or measured at
        # re-validation) that no reviewer cleared, or a reviewer's reward-hack verdict
        "measured_flags": sum(1 for x in sus.reasons if x.source in ("launches", "dynamic", "floor")),
        "suspect": sus.excluded, "cleared": sus.cleared, "reviewed_hack": sus.reward_hack,
        "review": sus.review.verdict.value if sus.review else None,
        "evidence": evidence_anchor(sus, res) or None,  # the run page's anchor of the evidence for its mark
        # the checks that found something error-level, cleared or not ("static:no-kernel-launch; dynamic:output_reuse")
        "suspect_checks": "; ".join(dict.fromkeys(f"{x.source}:{x.check}" for x in sus.reasons)) or None,
        # A trace without a transcript (a KernelBench import) recorded no turns: unknown, not zero.
        "turns": run.turns_used if run.turns_used is not None else (len(r.trace.turns) or None), "max_turns": run.max_turns,
        "tool_calls": run.tool_calls if run.tool_calls is not None else
        (sum(len(t.calls) for t in r.trace.turns) if r.trace.turns else None),
        "tokens_total": run.tokens_total, "wall_clock_s": run.wall_clock_s, "truncated": run.truncated,
        **_verdicts(r, res), **_timing(r, res), **_ncu(r, cached),
    }
    row["flagged"] = bool(row["flags"] or statics or row["measured_flags"] or row["verdicts_disagree"])
    from .core.checks import speedup_reported
    if not speedup_reported(row["correct"], row["suspect"]):
        row["speedup"] = None  # recorded_speedup and speedup_<basis> keep the figures as recorded / measured
    rep = sol_report(r, res)
    row.update(sol_row(rep, speedup_reported(row["correct"], row["suspect"])))
    for b in TIMING_BASES:  # a time under the hardware floor gives no speedup on its basis
        row[f"speedup_{b}"] = None if rep.dropped(b) else row[f"speedup_{b}"]
    if row["recorded_impossible"]:  # nor the harness's: the times stay, as the evidence the page shows
        row["recorded_speedup"] = row["recorded_compile_speedup"] = None
    if rep.dropped(PRIMARY_BASIS if row.get("speedup_source") == Source.RE_VALIDATED else RECORDED):
        row["speedup"] = None
    if m.launches:
        row.update(recorded_kernel_launches=m.launches.kernel_launches, recorded_ref_launches=m.launches.ref_launches)
    if m.memory:
        row.update(recorded_kernel_peak_mb=m.memory.kernel_peak_mb, recorded_ref_peak_mb=m.memory.ref_peak_mb)
    if m.nsight:
        row.update({f"recorded_{k}": getattr(m.nsight, k) for k in RECORDED_NSIGHT})
    if res is not None:
        row.update(_measured_properties(res))
        row.update(kernel_launches=res.kernel_launches.launches if res.kernel_launches else None,
                   ref_launches=res.reference_launches.launches if res.reference_launches else None,
                   kernel_peak_mb=res.kernel_peak_bytes / 1e6 if res.kernel_peak_bytes is not None else None,
                   ref_peak_mb=res.reference_peak_bytes / 1e6 if res.reference_peak_bytes is not None else None)
    return row


def _measured_properties(res: ValidationResult) -> dict[str, Any]:
    """The own-kernel share (a property, never a verdict), the checks that did not run, and how strong the problem's
    comparison is: what would also pass it (a weak check), and the inputs that strengthened it."""
    from .core.suspects import measured_attribution, missing_checks, own_kernel_share, weak_check
    missing = missing_checks(res)
    strengthened = res.check_strength.strengthen if res.check_strength else ()
    return {"own_kernel_share": own_kernel_share(measured_attribution(res)), "checks_incomplete": bool(missing),
            "incomplete_checks": ", ".join(missing) or None, "weak_check": weak_check(res),
            "strengthened_inputs": ", ".join(strengthened) or None}


def _held(value: Any) -> Any:
    """An integer column's value as the table can hold it: beyond ±TABLE_INT_LIMIT it is unknown (flagged on the page)."""
    from .core.checks import TABLE_INT_LIMIT
    return None if isinstance(value, int) and not -TABLE_INT_LIMIT <= value <= TABLE_INT_LIMIT else value


def _typed(rows: Sequence[Mapping[str, Any]], columns: dict[str, str]) -> pd.DataFrame:
    frame = pd.DataFrame.from_records([dict(r) for r in rows], columns=list(columns)) if rows else pd.DataFrame(columns=list(columns))
    for col in (c for c, kind in columns.items() if kind == _INT):
        # Straight from the values: pandas would pass an integer column with a gap through float64, which
        # rounds 2^63 - 1 up and out of range (and cannot hold 10^39 at all).
        frame[col] = pd.array([_held(row.get(col)) for row in rows], dtype=_INT)
    # None -> <NA>/NaN per column type, so "not recorded" never turns into 0 or False.
    return frame.astype(columns)


def from_records(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """A runs table from plain dicts (missing columns are unknown): hand-made tables for tests and notebooks."""
    return _typed(rows, COLUMNS)


def guarded_row(r: RunRecord, cached: CachedValidation | None) -> dict[str, Any] | None:
    """`run_row` (each digest's runs-table row, `render.digest`), or None (and a warning) when it fails: one run's values never cost the table."""
    try:
        return run_row(r, cached)
    except Exception as exc:  # noqa: BLE001 - the per-run guard of the table
        from .core.errors import log
        log.warning("run %s is left out of the tables: reporter failed on it (%s: %s); please report this as a bug",
                    r.run_id, type(exc).__name__, str(exc)[:200])
        return None


def runs_frame(runs: Sequence[RunRecord], validations: dict[str, CachedValidation | None]) -> pd.DataFrame:
    """One row per run, in the order given, with each run's cached re-validation (by run id) where it has one."""
    return _typed([row for r in runs if (row := guarded_row(r, validations.get(r.run_id))) is not None], COLUMNS)


def turns_frame(runs: Sequence[RunRecord]) -> pd.DataFrame:
    """One row per tool call; a turn without calls is one row with an empty `call`."""
    rows = []
    for r in runs:
        run = r.trace.run
        ident = {"run_id": r.run_id, "benchmark": run.benchmark, "level": run.level, "problem_id": run.problem_id,
                 "model": run.model, "configuration": run.configuration}
        for t in r.trace.turns:
            turn = {**ident, "turn": t.index, "turn_s": t.turn_s, "llm_s": t.llm_s, "tool_s": t.tool_s, "chars": t.chars,
                    "reasoning_chars": len(t.reasoning), "final": t.final}
            rows.extend([{**turn, "call": i, "tool": c.tool, "ok": c.result.ok if c.result else None,
                          "result_chars": len(c.result.text) if c.result else None}
                         for i, c in enumerate(t.calls)] or [turn])
    return _typed(rows, TURN_COLUMNS)


def _collect(data: str | Path, redact: bool = True) -> tuple[Path, Sequence[RunRecord]]:
    from .collect import collect
    from .core.errors import ReporterError
    root = Path(data)
    if not root.is_dir():
        raise ReporterError(f"{root}: not a folder of traces (expected DATA with trace.json files below it)")
    return root, collect(root, redact=redact).runs


def load_turns(data: str | Path) -> pd.DataFrame:
    """Every turn and tool call of every run under `data`."""
    return turns_frame(_collect(data)[1])


EXPORT_FORMATS = ("csv", "parquet", "jsonl")


def export_bytes(frame: pd.DataFrame, fmt: str) -> bytes:
    """The table as a file's bytes; parquet needs the `parquet` extra (pyarrow)."""
    if fmt == "csv":
        csv_text: str = frame.to_csv(index=False, lineterminator="\n")
        return csv_text.encode("utf-8")
    if fmt == "jsonl":
        text: str = frame.to_json(orient="records", lines=True, force_ascii=False)
        return (text if text.endswith("\n") or not text else text + "\n").encode("utf-8")
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError as exc:
            from .core.errors import ReporterError
            raise ReporterError(f"parquet needs pyarrow: pip install '{DISTRIBUTION}[parquet]'") from exc
        import io
        buf = io.BytesIO()
        frame.to_parquet(buf, index=False)
        return buf.getvalue()
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(EXPORT_FORMATS)}")


UNIVERSE_COLUMNS: tuple[str, ...] = ("scope", "benchmark", "level", "problem_id", "problem", "sha256")


def universe(sets: Sequence[ProblemSet]) -> pd.DataFrame:
    """The recorded problem sets (`collect.problemset.find`) as a table: a row per problem and the folder of
    DATA whose runs it applies to (`scope`, "" for all of DATA)."""
    rows = [(ps.scope, p.benchmark, p.level, p.problem_id, p.file, p.sha256) for ps in sets for p in ps.problems.values()]
    return pd.DataFrame(rows, columns=list(UNIVERSE_COLUMNS)).astype({"level": "int64", "problem_id": "int64"})


def load_universe(data: str | Path) -> pd.DataFrame:
    """Every problem set recorded under DATA (`reporter import kernelbench --problems`), as `universe`."""
    from .collect.problemset import find
    return universe(find(Path(data)))
