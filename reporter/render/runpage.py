"""Page data for one run page: a pure function of the run, its cached validation and the site's URLs."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..collect.sol import SolReport, sol_report
from ..collect.suspicion import evidence_anchor, suspicion
from ..collect.traces import ProfileSet, RunRecord
from ..collect.validation import CachedValidation
from ..core import suspects
from ..core.checks import speedup_reported
from ..core.frozen import freeze
from ..core.judgement import judge_run, rules_rows, verdict_rules
from ..core.records import sha256_text
from ..core.schema import BASIS_LABEL, Verdict
from ..core.vocab import MISSING_KEY, RevalidationState, RunVerdict, Source, shown
from . import charts, text
from .counters import CountersView, counters_view
from .evidence import NOT_MEASURED, attribution_view, dynamic_rows, strength_lines, verdict_evidence
from .evolution import kernel_versions
from .findings import KERNEL_LINE, FindingsView, findings_view
from .recorded import Row, recorded_sections
from .revalidation import ValidationView, statistics_rows, validation_view
from .sol_view import SolView, dropped_speedups, roofline_json, sol_view
from .summary import RunSummary, group_key, problem_key, run_summary, title
from .timing_view import DEFAULT_BASIS
from .urls import Urls

HOME = ("all variants", "index.html")


@dataclass(frozen=True)
class Page:
    """One file of the site: where it goes, which template draws it, and the data it draws."""

    path: str  # relative to the site root
    template: str
    context: Mapping[str, Any]  # read-only: a step that adds to a page makes a new one (`with_context`)

    def __post_init__(self) -> None:
        freeze(self, mappings=("context",))

    def with_context(self, **more: Any) -> Page:
        return replace(self, context={**self.context, **more})


@dataclass(frozen=True)
class Deferred:
    """A page whose data is made only when its inputs changed since the last build: `inputs` hashes
    everything `make` reads (its runs' table rows and listing rows, and the URLs it links), so a build keeps
    an unchanged grid or problem page without computing it (`write._write_listings`)."""

    path: str
    template: str
    inputs: str
    make: Callable[[], Page]


def inputs_hash(*parts: Any) -> str:
    """A hash of page inputs (a `Deferred` page's), JSON with anything else written by `repr`."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=repr).encode()).hexdigest()


def group_label(key: tuple[str, str]) -> str:
    """How a (benchmark, configuration) group is named on pages; partial traces have neither."""
    bench, conf = key
    if key == (MISSING_KEY, MISSING_KEY):
        return "not recorded (partial traces)"
    return shown(bench) if conf == MISSING_KEY else f"{shown(bench)} · {conf}"


def measured_profiles(r: RunRecord, cached: CachedValidation | None) -> tuple[dict[str, ProfileSet], dict[str, str]]:
    """The run's attached exports, with counters from `reporter validate --ncu` taking precedence per role."""
    profiles = dict(r.profiles)
    sources = {role: f"attached export ({p.ncu_source})" for role, p in profiles.items() if p.ncu_source}
    if cached is not None:
        for role, p in cached.ncu.items():
            old = profiles.get(role, ProfileSet())
            profiles[role] = ProfileSet(old.profiler, p.ncu_kernels, p.ncu_source)
            sources[role] = f"reporter validate --ncu ({cached.result.environment.gpu})"
    return profiles, sources


def _summary_rows(r: RunRecord, s: RunSummary, sv: SolView) -> tuple[Row, ...]:
    run = r.trace.run
    flags = {f.field: f for f in r.flags}
    # A re-measured time names its basis; a recorded one is the harness's, on whatever basis it used.
    how = f"{BASIS_LABEL[DEFAULT_BASIS]}, {s.verdict_source}" if s.verdict_source == Source.RE_VALIDATED else str(s.verdict_source)
    return (
        Row("model", run.model or text.DASH),
        Row("turns / max", s.turns, flags.get("run.turns_used")),
        Row("tool calls", text.num(run.tool_calls), flags.get("run.tool_calls")),
        Row("tokens (total)", text.num(run.tokens_total), flags.get("run.tokens_total")),
        Row("wall clock", f"{text.num(run.wall_clock_s, 1)} s" if run.wall_clock_s is not None else text.DASH),
        Row("truncated", text.num(run.truncated)),
        Row("backend", f"{run.backend or text.DASH} {run.precision or text.DASH}" if run.backend or run.precision
            else f"{text.DASH} (not recorded)"),
        Row("benchmark", run.benchmark or text.DASH),
        # the reference's own hash, so a reader can tell versions of a problem apart (`collect.refversion`)
        Row("reference", f"{run.problem_file or 'reference'} · sha256 {sha256_text(ref)[:12]}" if (ref := r.source.reference_source)
            else f"{text.DASH} (not recorded)", flags.get("reference_source"), wide=True),
        Row(f"runtime ({how})", s.runtime, s.runtime_flag),
        Row(f"ref runtime ({how})", s.ref_runtime, flags.get("timing.ref_runtime") if s.verdict_source == Source.RECORDED else None),
        Row(f"speedup ({how})", s.speedup),
        Row("fraction of speed of light", sv.headline if not sv.why else f"{text.DASH} ({sv.why})", wide=True),
        Row("SOL score", sv.score),
        Row("started", run.started_at or text.DASH, wide=True),
    )


def _figures(r: RunRecord, counters: CountersView | None, rep: SolReport) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    if (roof := roofline_json(rep)) is not None:
        figures["sol-roofline"] = roof
    timeline = charts.timeline_figure(r.trace.turns)
    if timeline is not None:
        figures["timeline"] = charts.to_json(timeline)
    if counters is not None:
        figures.update(counters.figures)
    return figures


def _kernel_marks(fv: FindingsView | None) -> frozenset[int]:
    """Lines of the final kernel to highlight: each finding's, and the line a reviewer's quote names."""
    if fv is None:
        return frozenset()
    lines = {int(f.line) for f in fv.rows if f.line.isdigit()}
    if fv.review is not None and fv.review.quote_href.startswith(f"#{KERNEL_LINE}"):
        lines.add(int(fv.review.quote_href.removeprefix(f"#{KERNEL_LINE}")))
    return frozenset(lines)


def _evidence(r: RunRecord, cached: CachedValidation | None, v: ValidationView) -> dict[str, Any]:
    """The run page's evidence: findings with their lines and turns, the verdict's witness, launches, dynamic checks."""
    res = cached.result if cached is not None else None
    sus = suspicion(r, res)
    fv = findings_view(r, sus)
    return {"findings": fv, "suspicion": sus, "evidence_anchor": evidence_anchor(sus, res),
            "verdict_evidence": verdict_evidence(res) if res is not None else None,
            "attribution": attribution_view(res), "dynamic_rows": dynamic_rows(res), "not_measured": NOT_MEASURED,
            "statistics_rows": statistics_rows(res, r.trace.run.precision) if res is not None else (), "kernel_marks": _kernel_marks(fv),
            "incomplete": suspects.missing_checks(res) if res is not None else (),
            "weak": suspects.weak_check(res) if res is not None else None, "strength_lines": strength_lines(res)}


def run_page(r: RunRecord, cached: CachedValidation | None, urls: Urls, prev: str | None, nxt: str | None) -> Page:
    """The run page; `prev` and `nxt` link the neighbouring runs' pages as the page names them (relative to it)."""
    trace, run = r.trace, r.trace.run
    v: ValidationView = validation_view(trace.final_kernel is not None, cached, trace.metrics, run.recorded_verdict,
                                        run.precision, run.recorded_gpu)
    rep = sol_report(r, v.result)
    correct = v.result.verdict == Verdict.CORRECT if v.result is not None else run.recorded_verdict == RunVerdict.CORRECT
    flagged = any(f.field in ("timing.runtime", "timing.ref_runtime") and f.severity == "error" for f in r.flags)
    sv = sol_view(rep, flagged, speedup_reported(correct, suspicion(r, v.result).excluded),
                  trace.metrics.nsight.sol_score if trace.metrics.nsight else None)
    v = replace(v, timing=dropped_speedups(v.timing, rep))  # a basis under the hardware floor has no speedup
    summary = run_summary(r, v)
    profiles, sources = measured_profiles(r, cached)
    flags = {f.field: f for f in r.flags}
    counters = counters_view(profiles, sources, trace.metrics.nsight, flags)
    key, model = group_key(r), run.model or MISSING_KEY
    pkey = problem_key(r)
    fk = trace.final_kernel
    res = v.result
    judged = judge_run(run, res)
    return Page(urls.run(r.run_id), "run.html", {
        "j": judged, "rules_rows": rules_rows(judged.rules), "verdict_rules": verdict_rules(summary.verdict_source == Source.RE_VALIDATED, judged),
        "title": title(r), "r": r, "run": run, "summary": summary, "summary_rows": _summary_rows(r, summary, sv), "sol": sv,
        "crumbs": [HOME, (group_label(key), urls.group(key)), (shown(model), urls.model(key, model))],
        "who": " · ".join((run.model or "— model not recorded", run.benchmark or text.DASH, run.configuration or text.DASH)),
        "problem": run.problem_file or run.title or r.run_id, "problem_href": urls.problem(pkey) if pkey else None,
        "sections": recorded_sections((trace.metrics.timing, trace.metrics.precision, trace.metrics.memory,
                                       trace.metrics.launches, trace.metrics.nsight), flags),
        "recorded_badge": "compare with re-validation above" if v.state is RevalidationState.MEASURED else "not re-measured",
        "v": v, **_evidence(r, cached, v), "counters": counters, "figures": _figures(r, counters, rep), "prev": prev, "next": nxt,
        "kernel_lines": text.num(fk.source.count("\n") + (0 if fk.source.endswith("\n") else 1)) if fk else "0",
        "kernel_chars": text.num(len(fk.source)) if fk else "0",
        "kernel_file": urls.download(r.run_id, "kernel").removeprefix("runs/"),
        "reference_file": urls.download(r.run_id, "reference").removeprefix("runs/"),
        "validate_cmd": f"reporter validate DATA --run {r.run_id}", "versions": (versions := kernel_versions(trace)),
        "show_evolution": len(versions) > 1,  # one kernel has no evolution to show
        "metadata": sorted(trace.harness_metadata.items()),
    })
