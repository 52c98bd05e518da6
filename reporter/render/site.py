"""Stage 3: render collected runs (and their validation results) into a static site.

Pages are rendered into a temporary folder beside the target and swapped in at the end, so an
interrupted build never leaves a half-written site in place of a good one. Every link is relative.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable

import click
import plotly.offline
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from .. import __version__
from . import charts, text
from ..collect import ncu as gm
from . import leaderboard as lb
from ..units import UNIT_LABEL
from ..checks import Comparison, Flag, check_measured, compare_runtime
from ..collect.traces import Collection, ProfileSet, RunRecord
from .assets import asset_dir as _asset_dir
from .evolution import kernel_versions
from ..publish.pages import MARKER, marker_text
from ..records import ValidationResult, slugify

ROOT = Path(__file__).resolve().parents[2]
# Measured ncu figure -> the recorded nsight field that claims the same thing (kernel side).
RECORDED_FIGURE = {"sol_score": "sol_score", "compute_util": "compute_util_pct", "dram_util": "dram_util_pct",
                   "bottleneck": "bottleneck", "dominant_pipe": "dominant_pipe", "dominant_pipe_pct": "dominant_pipe_pct",
                   "fp32_tflops": "fp32_tflops", "dram_bandwidth": "dram_bandwidth_gbps",
                   "arithmetic_intensity": "arithmetic_intensity", "peak_fp32_tflops": "peak_fp32_tflops",
                   "peak_bw": "peak_bw_gbps", "ridge_point": "ridge_point", "fp32_util": "fp32_util_pct",
                   "occupancy": "occupancy_pct", "l1_hit": "l1_hit_pct", "l2_hit": "l2_hit_pct",
                   "ld_sectors_per_req": "ld_sectors_per_req", "st_sectors_per_req": "st_sectors_per_req",
                   "regs_per_thread": "regs_per_thread", "smem_per_block": "smem_per_block_bytes", "block_size": "block_size"}
SECTION_TITLES = {"timing": "timing", "precision": "numerical precision", "memory": "gpu memory",
                  "launches": "kernel launches / fusion", "nsight": "SOL, roofline & occupancy"}


@dataclass
class Row:
    label: str
    value: str
    flag: Flag | None = None


@dataclass
class Section:
    key: str
    title: str
    source: str
    rows: list[Row]
    note: str = ""


@dataclass
class Validation:
    """What the page shows of a re-validation (or why there is none)."""

    state: str  # "measured" | "not_validated" | "no_kernel"
    result: ValidationResult | None = None
    path: Path | None = None  # the cached result file; its ncu exports sit beside it
    where: str = ""
    comparisons: list[Comparison] = field(default_factory=list)
    disagreements: int = 0


@dataclass
class RunSummary:
    """The key figures an index row shows for a run."""

    verdict: str
    verdict_source: str  # "re-validated" | "recorded" | "partial"
    turns: str
    runtime: str
    ref_runtime: str
    speedup: str
    speedup_value: float | None
    runtime_flag: Flag | None
    flags: int


def _generated_at() -> str:
    # SOURCE_DATE_EPOCH makes builds reproducible (golden tests); otherwise the real build time.
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = datetime.fromtimestamp(int(epoch), timezone.utc) if epoch else datetime.now(timezone.utc)
    return when.strftime("%Y-%m-%d %H:%M:%S UTC")


def _flag_map(flags: Iterable[Flag]) -> dict[str, Flag]:
    return {f.field: f for f in flags}


def _shown(key: tuple[str, str]) -> str:
    """How a (config, variant) group is named on pages; partial traces have neither."""
    if key == ("unknown", "unknown"):
        return "not recorded (partial traces)"
    return f"{key[1]} · {key[0]}"


def _title(r: RunRecord) -> str:
    run = r.trace.run
    if run.level is not None and run.problem_id is not None:
        return f"L{run.level} · problem {run.problem_id}"
    return run.title or r.run_id


def recorded_sections(r: RunRecord) -> list[Section]:
    """The harness's metric groups as recorded, each value next to its flag."""
    m = r.trace.metrics
    flags = _flag_map(r.flags)
    out: list[Section] = []

    def row(label: str, key: str, value: str) -> Row:
        return Row(label, value, flags.get(key))

    if m.timing:
        t, u = m.timing, UNIT_LABEL[m.timing.unit]
        out.append(Section("timing", SECTION_TITLES["timing"], t.source, [
            row("kernel runtime", "timing.runtime", f"{text.num(t.runtime)} {u}"),
            row("ref runtime", "timing.ref_runtime", f"{text.num(t.ref_runtime)} {u}"),
            row("speedup", "timing.speedup", text.speedup(t.speedup)),
            row("kernel mean / median / std", "timing.kernel_mean",
                f"{text.num(t.kernel_mean)} / {text.num(t.kernel_median)} / {text.num(t.kernel_std)} {u}"),
            row("ref mean / median / std", "timing.ref_mean",
                f"{text.num(t.ref_mean)} / {text.num(t.ref_median)} / {text.num(t.ref_std)} {u}"),
        ], note=f"values carry the unit the harness claimed ({u})"))
    if m.precision:
        p = m.precision
        out.append(Section("precision", SECTION_TITLES["precision"], p.source, [
            row("max abs error", "precision.max_abs_error", text.num(p.max_abs_error)),
            row("mean abs error", "precision.mean_abs_error", text.num(p.mean_abs_error)),
            row("max rel error", "precision.max_rel_error", text.num(p.max_rel_error)),
            row("mean rel error", "precision.mean_rel_error", text.num(p.mean_rel_error)),
        ]))
    if m.memory:
        mm = m.memory
        out.append(Section("memory", SECTION_TITLES["memory"], mm.source, [
            row("kernel peak", "memory.kernel_peak_mb", f"{text.num(mm.kernel_peak_mb)} MB"),
            row("ref peak", "memory.ref_peak_mb", f"{text.num(mm.ref_peak_mb)} MB"),
            row("kernel / ref", "memory.ratio", f"{text.num(mm.ratio)}x"),
        ]))
    if m.launches:
        la = m.launches
        out.append(Section("launches", SECTION_TITLES["launches"], la.source, [
            row("kernel launches", "launches.kernel_launches", text.num(la.kernel_launches)),
            row("ref launches", "launches.ref_launches", text.num(la.ref_launches)),
            row("fusion ratio (ref / kernel)", "launches.fusion_ratio", f"{text.num(la.fusion_ratio)}x"),
            row("total cuda time", "launches.total_cuda_time_us", f"{text.num(la.total_cuda_time_us, 0)} μs"),
        ]))
    if m.nsight:
        n = m.nsight
        pct = lambda v: f"{text.num(v, 1)}%" if v is not None else text.DASH  # noqa: E731
        rows = [
            row("SOL score (0–1)", "nsight.sol_score", text.num(n.sol_score, 3)),
            row("compute util %", "nsight.compute_util_pct", pct(n.compute_util_pct)),
            row("dram util %", "nsight.dram_util_pct", pct(n.dram_util_pct)),
            row("bottleneck", "nsight.bottleneck", n.bottleneck or text.DASH),
            row("dominant pipe", "nsight.dominant_pipe", n.dominant_pipe or text.DASH),
            row("dominant pipe %", "nsight.dominant_pipe_pct", pct(n.dominant_pipe_pct)),
            row("arithmetic intensity", "nsight.arithmetic_intensity", text.num(n.arithmetic_intensity)),
            row("ridge point", "nsight.ridge_point", text.num(n.ridge_point)),
            row("dram bandwidth", "nsight.dram_bandwidth_gbps", f"{text.num(n.dram_bandwidth_gbps)} GB/s"),
            row("fp32 tflops", "nsight.fp32_tflops", text.num(n.fp32_tflops)),
            row("fp32 util %", "nsight.fp32_util_pct", pct(n.fp32_util_pct)),
            row("fp16 tflops", "nsight.fp16_tflops", text.num(n.fp16_tflops)),
            row("occupancy %", "nsight.occupancy_pct", pct(n.occupancy_pct)),
            row("L1 hit %", "nsight.l1_hit_pct", pct(n.l1_hit_pct)),
            row("L2 hit %", "nsight.l2_hit_pct", pct(n.l2_hit_pct)),
            row("ld sectors / req", "nsight.ld_sectors_per_req", text.num(n.ld_sectors_per_req)),
            row("st sectors / req", "nsight.st_sectors_per_req", text.num(n.st_sectors_per_req)),
            row("regs / thread", "nsight.regs_per_thread", text.num(n.regs_per_thread)),
            row("smem / block", "nsight.smem_per_block_bytes", f"{text.num(n.smem_per_block_bytes)} B"),
            row("block size", "nsight.block_size", text.num(n.block_size)),
            row("peak bw", "nsight.peak_bw_gbps", f"{text.num(n.peak_bw_gbps)} GB/s"),
            row("peak fp32 tflops", "nsight.peak_fp32_tflops", text.num(n.peak_fp32_tflops)),
            row("peak fp16 tflops", "nsight.peak_fp16_tflops", text.num(n.peak_fp16_tflops)),
        ]
        out.append(Section("nsight", SECTION_TITLES["nsight"], n.source, rows))
        if n.warp_stalls_pct:
            stall_rows = [row(k, f"nsight.warp_stalls_pct.{k}", pct(v)) for k, v in n.warp_stalls_pct.items()]
            if (total := flags.get("nsight.warp_stalls_pct")) is not None:
                stall_rows.append(Row("sum of shown shares", pct(sum(n.warp_stalls_pct.values())), total))
            out.append(Section("stalls", "warp stalls (top 5)", n.warp_stalls_source, stall_rows))
    return out


def validation_view(r: RunRecord, found: tuple[ValidationResult, Path] | None, data: Path) -> Validation:
    if r.trace.final_kernel is None:
        return Validation("no_kernel")
    if found is None:
        return Validation("not_validated")
    res, path = found
    env = res.environment
    where = f"{env.gpu or 'unknown GPU'} · torch {env.torch or '?'} · CUDA {env.cuda or '?'} · driver {env.driver or '?'}"
    m = r.trace.metrics
    comps: list[Comparison] = []
    rec_verdict = r.trace.run.recorded_verdict
    comps.append(Comparison("verdict", rec_verdict or text.DASH, res.verdict,
                            None if rec_verdict is None else rec_verdict == res.verdict,
                            "" if rec_verdict in (None, res.verdict) else f"verdict flip: recorded {rec_verdict}, reproduced {res.verdict}"))
    unit = m.timing.unit if m.timing else "ms"
    ul = UNIT_LABEL[unit]
    for label, rec, stats in (("runtime", m.timing.runtime if m.timing else None, res.kernel_timing),
                              ("ref runtime", m.timing.ref_runtime if m.timing else None, res.reference_timing)):
        agree, why = compare_runtime(rec, unit, stats.median_ms if stats else None)
        comps.append(Comparison(label, f"{text.num(rec)} {ul}" if rec is not None else text.DASH,
                                text.ms(stats.median_ms) if stats else text.DASH, agree, why))
    rec_sp = m.timing.speedup if m.timing else None
    sp = res.speedup
    sp_ok = None if rec_sp is None or sp is None else abs(rec_sp - sp) <= 0.25 * sp
    comps.append(Comparison("speedup", text.speedup(rec_sp), text.speedup(sp), sp_ok,
                            "" if sp_ok in (None, True) else f"off by {((rec_sp or 0) / (sp or 1) - 1) * 100:+.0f}%"))
    worst = max((t.max_abs_error for t in res.trials if t.max_abs_error is not None), default=None)
    worst_rel = max((t.max_rel_error for t in res.trials if t.max_rel_error is not None), default=None)
    comps.append(Comparison("max abs error", text.num(m.precision.max_abs_error) if m.precision else text.DASH, text.num(worst), None))
    comps.append(Comparison("max rel error", text.num(m.precision.max_rel_error) if m.precision else text.DASH, text.num(worst_rel), None))
    for label, rec_n, st in (("kernel launches", m.launches.kernel_launches if m.launches else None, res.kernel_launches),
                             ("ref launches", m.launches.ref_launches if m.launches else None, res.reference_launches)):
        got = st.launches if st else None
        agree = None if rec_n is None or got is None else rec_n == got
        comps.append(Comparison(label, text.num(rec_n), text.num(got), agree,
                                "" if agree in (None, True) else f"recorded {rec_n}, counted {got} (torch.profiler, kernels only)"))
    for label, rec_mb, got_b in (("kernel peak memory", m.memory.kernel_peak_mb if m.memory else None, res.kernel_peak_bytes),
                                 ("ref peak memory", m.memory.ref_peak_mb if m.memory else None, res.reference_peak_bytes)):
        got_mb = got_b / 1e6 if got_b is not None else None
        agree = None if rec_mb is None or got_mb is None or got_mb == 0 else abs(rec_mb / got_mb - 1) <= 0.25
        comps.append(Comparison(label, f"{text.num(rec_mb)} MB" if rec_mb is not None else text.DASH,
                                f"{text.num(got_mb)} MB" if got_mb is not None else text.DASH, agree,
                                "" if agree in (None, True) else f"off by {((rec_mb or 0) / (got_mb or 1) - 1) * 100:+.0f}%"))
    try:
        shown = path.relative_to(data).as_posix()
    except ValueError:
        shown = path.name
    return Validation("measured", res, path, f"{where} · measured {res.measured_at or 'at an unknown time'} · {shown}",
                      comps, sum(1 for c in comps if c.agrees is False))


def run_summary(r: RunRecord, v: Validation) -> RunSummary:
    run, m = r.trace.run, r.trace.metrics
    flags = _flag_map(r.flags)
    turns = f"{run.turns_used if run.turns_used is not None else len(r.trace.turns)} / {text.num(run.max_turns)}"
    if not run.complete:
        return RunSummary("partial", "partial", turns, text.DASH, text.DASH, text.DASH, None, None, len(r.flags))
    if v.state == "measured" and v.result is not None:
        res = v.result
        k, ref = res.kernel_timing, res.reference_timing
        return RunSummary(res.verdict, "re-validated", turns, text.ms(k.median_ms if k else None),
                          text.ms(ref.median_ms if ref else None), text.speedup(res.speedup), res.speedup, None, len(r.flags))
    unit = UNIT_LABEL[m.timing.unit] if m.timing else ""
    t = m.timing
    return RunSummary(run.recorded_verdict or "unknown", "recorded", turns,
                      f"{text.num(t.runtime)} {unit}" if t and t.runtime is not None else text.DASH,
                      f"{text.num(t.ref_runtime)} {unit}" if t and t.ref_runtime is not None else text.DASH,
                      text.speedup(t.speedup if t else None), t.speedup if t else None,
                      flags.get("timing.runtime"), len(r.flags))


def outcome(r: RunRecord, v: Validation, href: str) -> lb.Outcome | None:
    """The aggregate view of one run; partial runs and runs without a problem identity have none."""
    run, m = r.trace.run, r.trace.metrics
    if not run.complete or run.level is None or run.problem_id is None:
        return None
    res = v.result if v.state == "measured" else None
    measured = res is not None and res.kernel_timing is not None and res.reference_timing is not None
    t = m.timing
    to_ms = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[t.unit] if t else 1.0
    rec_verdict = run.recorded_verdict
    verdict = res.verdict if res is not None else (rec_verdict or "unknown")
    return lb.Outcome(
        run_id=r.run_id, href=href, model=run.model or "unknown", group=(run.configuration or "unknown", run.benchmark or "unknown"),
        problem=(run.level, run.problem_id, run.problem_file or run.title or ""),
        recorded_correct=None if rec_verdict is None else rec_verdict == "correct",
        revalidated_correct=None if res is None else res.verdict == "correct",
        compiled=(verdict != "compile_error") if verdict not in ("unknown", "not_evaluated") else None,
        submitted=r.trace.final_kernel is not None,
        speedup=res.speedup if measured and res is not None else (t.speedup if t else None),
        speedup_source="re-validated" if measured else ("recorded" if t and t.speedup is not None else ""),
        kernel_ms=res.kernel_timing.median_ms if measured and res and res.kernel_timing else
        (t.runtime * to_ms if t and t.runtime is not None else None),
        ref_ms=res.reference_timing.median_ms if measured and res and res.reference_timing else
        (t.ref_runtime * to_ms if t and t.ref_runtime is not None else None),
        turns=run.turns_used if run.turns_used is not None else len(r.trace.turns),
        tokens=run.tokens_total, flagged=bool(r.flags) or v.disagreements > 0 or
        any(f.severity == "error" for f in (res.static_findings if res else [])),
        verdict=verdict)


@dataclass
class Page:
    path: str  # relative to the site root
    template: str
    context: dict[str, Any]


class SiteBuilder:
    """Builds every page of the site from a collection and its validation lookups."""

    def __init__(self, collection: Collection, data: Path,
                 lookup: Callable[[RunRecord], tuple[ValidationResult, Path] | None]) -> None:
        self.collection = collection
        self.data = data
        self.generated = _generated_at()
        self.env = Environment(loader=FileSystemLoader(str(_asset_dir("templates"))), autoescape=True,
                               undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
        self.env.filters.update(num=text.num, ms=text.ms, speedup=text.speedup, markdown=text.markdown,
                                code=text.code, json_args=text.json_args)
        self.runs = sorted(collection.runs, key=self._sort_key)
        self.validations = {r.run_id: validation_view(r, lookup(r), data) for r in self.runs}
        self.summaries = {r.run_id: run_summary(r, self.validations[r.run_id]) for r in self.runs}
        self.outcomes = {r.run_id: o for r in self.runs
                         if (o := outcome(r, self.validations[r.run_id], self.run_path(r))) is not None}
        self.assets: dict[str, str] = {}

    @staticmethod
    def _sort_key(r: RunRecord) -> tuple[Any, ...]:
        run = r.trace.run
        return (run.configuration or "~", run.benchmark or "~", run.model or "~", run.level or 99, run.problem_id or 10**6, r.run_id)

    # --- hierarchy: all variants -> (config, variant) -> model -> run ---
    def variant_key(self, r: RunRecord) -> tuple[str, str]:
        return (r.trace.run.configuration or "unknown", r.trace.run.benchmark or "unknown")

    def variant_slug(self, key: tuple[str, str]) -> str:
        return f"variants/{slugify(key[1])}--{slugify(key[0])}.html"

    def model_slug(self, key: tuple[str, str], model: str) -> str:
        return f"models/{slugify(key[1])}--{slugify(key[0])}--{slugify(model)}.html"

    def run_path(self, r: RunRecord) -> str:
        return f"runs/{r.slug}.html"

    def leaderboard_slug(self, key: tuple[str, str]) -> str:
        return self.variant_slug(key).replace("variants/", "leaderboards/")

    def grid_slug(self, key: tuple[str, str]) -> str:
        return self.variant_slug(key).replace("variants/", "grids/")

    @staticmethod
    def problem_slug(pkey: tuple[int, int, str]) -> str:
        # Two benchmarks can both have "level 2, problem 8": the file name keeps them apart.
        return f"problems/l{pkey[0]}-p{pkey[1]}-{slugify(Path(pkey[2]).stem if pkey[2] else 'unnamed')}.html"

    def _leaderboard_page(self, key: tuple[str, str], group: list[lb.Outcome]) -> Page:
        rows = lb.leaderboard(group)
        by_model: dict[str, list[lb.Outcome]] = {}
        for o in group:
            by_model.setdefault(o.model, []).append(o)
        best = {m: list(lb.best_per_problem(os_).values()) for m, os_ in by_model.items()}
        figures = {
            "fastp": charts.to_json(charts.fast_p_curves(
                [(m, [o.speedup for o in b if o.correct and o.speedup is not None], len(b)) for m, b in sorted(best.items())])),
            "dist": charts.to_json(charts.speedup_distribution(
                [(m, [o.speedup for o in b if o.correct and o.speedup]) for m, b in sorted(best.items())])),
        }
        pts = [{"ref_ms": o.ref_ms, "kernel_ms": o.kernel_ms, "href": "../" + o.href, "correct": o.correct,
                "measured": o.speedup_source == "re-validated", "label": f"{o.model} · L{o.problem[0]} P{o.problem[1]}"}
               for o in group if o.ref_ms and o.kernel_ms]
        if pts:
            figures["scatter"] = charts.to_json(charts.runtime_scatter(pts))
        return Page(self.leaderboard_slug(key), "leaderboard.html", {
            "title": f"Leaderboard · {_shown(key)}", "crumbs": [("all variants", "index.html"), (_shown(key), self.variant_slug(key))],
            "rows": rows, "fast_ps": lb.FAST_P, "figures": figures, "grid": self.grid_slug(key)})

    def _grid_page(self, key: tuple[str, str], group: list[lb.Outcome]) -> Page:
        models = sorted({o.model for o in group})
        problems = sorted({o.problem for o in group})
        cells: dict[tuple[tuple[int, int, str], str], list[lb.Outcome]] = {}
        for o in group:
            cells.setdefault((o.problem, o.model), []).append(o)
        return Page(self.grid_slug(key), "grid.html", {
            "title": f"Problems × models · {_shown(key)}",
            "crumbs": [("all variants", "index.html"), (_shown(key), self.variant_slug(key))],
            "models": models, "problems": problems, "cells": cells, "states": lb.STATES,
            "leaderboard": self.leaderboard_slug(key), "problem_slug": self.problem_slug})

    def _problem_page(self, pkey: tuple[int, int, str], group: list[lb.Outcome]) -> Page:
        by_id = {r.run_id: r for r in self.runs}
        entries = [{"o": o, "r": by_id[o.run_id], "summary": self.summaries[o.run_id]}
                   for o in sorted(group, key=lambda o: (o.group, o.model, o.run_id))]
        name = next((o.problem[2] for o in group if o.problem[2]), "")
        return Page(self.problem_slug(pkey), "problem.html", {
            "title": f"L{pkey[0]} · problem {pkey[1]}", "name": name, "crumbs": [("all variants", "index.html")],
            "entries": entries, "states": lb.STATES})

    def _row(self, r: RunRecord) -> dict[str, Any]:
        return {"run": r, "summary": self.summaries[r.run_id], "href": self.run_path(r), "title": _title(r)}

    def pages(self) -> list[Page]:
        variants: dict[tuple[str, str], dict[str, list[RunRecord]]] = {}
        for r in self.runs:
            variants.setdefault(self.variant_key(r), {}).setdefault(r.trace.run.model or "unknown", []).append(r)
        pages: list[Page] = []
        index_rows = []
        for key, models in variants.items():
            runs = [r for rs in models.values() for r in rs]
            index_rows.append({"key": key, "href": self.variant_slug(key), "models": len(models), "runs": len(runs),
                               "stats": self._stats(runs)})
            model_rows = []
            for model, rs in models.items():
                model_rows.append({"model": model, "href": self.model_slug(key, model), "runs": len(rs), "stats": self._stats(rs)})
                crumbs = [("all variants", "index.html"), (_shown(key), self.variant_slug(key))]
                pages.append(Page(self.model_slug(key, model), "model.html",
                                  {"title": f"{model if model != 'unknown' else 'model not recorded'} · {_shown(key)}", "crumbs": crumbs, "rows": [self._row(r) for r in rs]}))
                for i, r in enumerate(rs):
                    pages.append(self._run_page(r, key, model, rs[i - 1] if i else None, rs[i + 1] if i + 1 < len(rs) else None))
            pages.append(Page(self.variant_slug(key), "variant.html",
                              {"title": _shown(key), "crumbs": [("all variants", "index.html")], "rows": model_rows}))
        outcomes = [o for r in self.runs if (o := self.outcomes.get(r.run_id)) is not None]
        for key in variants:
            group = [o for o in outcomes if o.group == key]
            if group:
                pages.append(self._leaderboard_page(key, group))
                pages.append(self._grid_page(key, group))
        for row in index_rows:
            row["leaderboard"] = self.leaderboard_slug(row["key"]) if any(o.group == row["key"] for o in outcomes) else None
            row["grid"] = self.grid_slug(row["key"]) if row["leaderboard"] else None
        problems: dict[tuple[int, int, str], list[lb.Outcome]] = {}
        for o in outcomes:
            problems.setdefault(o.problem, []).append(o)
        problem_rows = []
        for pkey, group in sorted(problems.items()):
            pages.append(self._problem_page(pkey, group))
            problem_rows.append({"href": self.problem_slug(pkey), "problem": group[0].problem, "runs": len(group),
                                 "correct": sum(1 for o in group if o.correct)})
        pages.append(Page("index.html", "index.html", {"title": "All variants", "crumbs": [], "rows": index_rows,
                                                       "errors": self.collection.errors, "runs": len(self.runs),
                                                       "problems": problem_rows}))
        pages.append(Page("404.html", "404.html", {"title": "Page not found", "crumbs": []}))
        return pages

    def _stats(self, runs: list[RunRecord]) -> dict[str, int]:
        s = [self.summaries[r.run_id] for r in runs]
        return {"correct": sum(1 for x in s if x.verdict == "correct"),
                "revalidated": sum(1 for x in s if x.verdict_source == "re-validated"),
                "flags": sum(x.flags for x in s)}

    def _run_page(self, r: RunRecord, key: tuple[str, str], model: str, prev: RunRecord | None, nxt: RunRecord | None) -> Page:
        v = self.validations[r.run_id]
        timeline = charts.timeline_figure(r.trace.turns)
        figures: dict[str, Any] = {}
        if timeline is not None:
            figures["timeline"] = charts.to_json(timeline)
        measured = self._measured_profiles(r, v)
        if measured.get("roofline") is not None:
            figures["roofline"] = charts.to_json(measured["roofline"])
        if measured.get("stalls") is not None:
            figures["stalls"] = charts.to_json(measured["stalls"])
        fk = r.trace.final_kernel
        crumbs = [("all variants", "index.html"), (_shown(key), self.variant_slug(key)), (model, self.model_slug(key, model))]
        return Page(self.run_path(r), "run.html", {
            "title": _title(r), "crumbs": crumbs, "r": r, "run": r.trace.run, "summary": self.summaries[r.run_id],
            "flags": _flag_map(r.flags), "sections": recorded_sections(r), "v": v, "figures": figures,
            "measured": measured, "prev": self.run_path(prev) if prev else None, "next": self.run_path(nxt) if nxt else None,
            "kernel_lines": fk.source.count("\n") + (0 if fk.source.endswith("\n") else 1) if fk else 0,
            "kernel_file": f"{r.slug}.kernel.py", "reference_file": f"{r.slug}.reference.py",
            "validate_cmd": f"reporter validate DATA --run {r.run_id}",
            "versions": kernel_versions(r.trace), "problem_href": self.problem_slug((run.level, run.problem_id, run.problem_file or run.title or ""))
            if (run := r.trace.run).complete and run.level is not None and run.problem_id is not None else None,
        })

    def _measured_profiles(self, r: RunRecord, v: Validation) -> dict[str, Any]:
        """Counters measured on a GPU: the run's attached exports, and ncu files from re-validation."""
        profiles = dict(r.profiles)
        sources = {role: f"attached export ({p.ncu_source})" for role, p in profiles.items() if p.ncu_source}
        if v.result is not None and v.path is not None and v.result.ncu_files:
            for role, name in v.result.ncu_files.items():
                path = v.path.parent / name
                if path.is_file():
                    old = profiles.get(role, ProfileSet())
                    profiles[role] = ProfileSet(old.profiler, tuple(gm.derive(k) for k in gm.load_ncu(path)), name)
                    sources[role] = f"reporter validate --ncu ({v.result.environment.gpu})"
        out: dict[str, Any] = {"profiles": profiles, "sources": sources, "recorded": {}}
        n = r.trace.metrics.nsight
        if n is not None:
            flags = _flag_map(r.flags)
            out["recorded"] = {key: Row(key, text.num(getattr(n, attr)), flags.get(f"nsight.{attr}"))
                               for key, attr in RECORDED_FIGURE.items()}
        summaries = {role: p.ncu_summary for role, p in profiles.items() if p.ncu_kernels}
        out["summaries"] = summaries
        out["mflags"] = {role: check_measured(s.figures) for role, s in summaries.items()}
        if summaries:
            any_sum = next(iter(summaries.values()))
            pk, pb = any_sum.figures["peak_fp32_tflops"].value, any_sum.figures["peak_bw"].value
            pts = [(role, s.figures["arithmetic_intensity"].value, s.figures["fp32_tflops"].value) for role, s in summaries.items()]
            pts_ok = [(a, float(b), float(c)) for a, b, c in pts if isinstance(b, float) and isinstance(c, float)]
            if isinstance(pk, float) and isinstance(pb, float) and pts_ok:
                out["roofline"] = charts.roofline(pk, pb, pts_ok)
            series = [(role, s.stalls_pct) for role, s in summaries.items() if s.stalls_pct]
            if series:
                out["stalls"] = charts.stall_bars(series)
        return out

    def write(self, site: Path, progress: bool = False) -> int:
        """Render everything into a fresh folder, then swap it in place of `site`."""
        site = site.resolve()
        site.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{site.name}.building-", dir=site.parent))
        try:
            self._write_assets(tmp)
            pages = self.pages()
            with click.progressbar(pages, label="rendering pages", file=sys.stderr if progress else _Null(),  # type: ignore[arg-type]
                                   show_pos=True) as bar:
                self._render_all(tmp, bar)
            for r in self.runs:
                (tmp / "runs").mkdir(exist_ok=True)
                if r.trace.final_kernel:
                    (tmp / "runs" / f"{r.slug}.kernel.py").write_text(r.trace.final_kernel.source, encoding="utf-8")
                if r.trace.reference_source:
                    (tmp / "runs" / f"{r.slug}.reference.py").write_text(r.trace.reference_source, encoding="utf-8")
            (tmp / ".nojekyll").write_text("", encoding="utf-8")
            (tmp / MARKER).write_text(marker_text(self.data), encoding="utf-8")
            old = site.with_name(f".{site.name}.old")
            if old.exists():
                shutil.rmtree(old)
            if site.exists():
                site.rename(old)
            tmp.rename(site)
            shutil.rmtree(old, ignore_errors=True)
            return len(pages)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    def _render_all(self, tmp: Path, pages: Iterable[Page]) -> None:
        for page in pages:
            depth = page.path.count("/")
            ctx = {"rel": "../" * depth, "generated": self.generated, "version": __version__, "assets": self.assets,
                   **page.context}
            out = tmp / page.path
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(self.env.get_template(page.template).render(ctx), encoding="utf-8")

    def _write_assets(self, out: Path) -> None:
        static = out / "static"
        static.mkdir(parents=True)
        blobs: dict[str, bytes] = {p.name: p.read_bytes() for p in sorted(_asset_dir("static").iterdir()) if p.is_file()}
        blobs["pygments.css"] = text.pygments_css().encode()
        blobs["plotly.min.js"] = plotly.offline.get_plotlyjs().encode()
        for name, data in blobs.items():
            # Content-hashed names so GitHub Pages' CDN never serves a stale stylesheet or script.
            stem, dot, ext = name.rpartition(".")
            hashed = f"{stem}.{hashlib.sha256(data).hexdigest()[:8]}.{ext}"
            (static / hashed).write_bytes(data)
            self.assets[name] = f"static/{hashed}"


class _Null:
    """A sink for the progress bar when nobody is watching."""

    def write(self, _: str) -> int:
        return 0

    def flush(self) -> None:
        pass


def build_site(collection: Collection, data: Path, site: Path,
               lookup: Callable[[RunRecord], tuple[ValidationResult, Path] | None], progress: bool = False) -> int:
    """Build SITE from DATA (streaming and incremental; the collection and lookup are read again from DATA)."""
    from .incremental import build_incremental
    return build_incremental(data, site).pages
