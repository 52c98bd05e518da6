"""Page data for the pages that list or rank many runs: index, groups, models, leaderboards, grids, problems."""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import pandas as pd

from .. import aggregates as ag
from ..core.audit import DEFAULT_OPTIONS, PageOptions
from ..core.errors import CollectError
from ..core.schema import BASIS_LABEL, Basis
from ..core.vocab import MISSING_KEY, GridState, RunVerdict, Source, shown
from ..runrow import GridRow
from . import compare, numbers
from .boards import ModelBoard, all_levels, model_boards
from .crossgpu import cross_gpu_page
from .digest import RunDigest
from .modelpage import model_view
from .runpage import HOME, Deferred, Page, group_label, inputs_hash
from .sol_view import problem_works
from .summary import CHECKS_INCOMPLETE, WEAK_CHECK, RunSummary
from .timing_view import basis_view
from .urls import GroupKey, ProblemKey, Urls


@dataclass(frozen=True)
class Listed:
    """A run as a row of a table, with its summary."""

    run_id: str
    model: str | None  # as recorded (None: not recorded)
    has_kernel: bool
    summary: RunSummary
    href: str
    title: str
    sub: str
    kernel_href: str  # the final kernel's download (problem pages link it instead of repeating the source)
    work: str | None = None  # the reference's work count as JSON (`RunDigest.work`): the problem page shows it


def listed(d: RunDigest, urls: Urls) -> Listed:
    return Listed(d.run_id, d.recorded_model, d.has_kernel, d.summary, urls.run(d.run_id), d.title, d.sub,
                  urls.download(d.run_id, "kernel"), d.work)


def _stats(rows: list[Listed]) -> dict[str, int]:
    # correct counts a correct kernel that is also suspect (as the leaderboards do: correct, never fast), so every
    # page adds up to the same count; where it came from is counted beside it
    correct = [x for x in rows if x.summary.correct]
    return {"correct": len(correct), "correct_revalidated": sum(1 for x in correct if x.summary.verdict_source == Source.RE_VALIDATED),
            "correct_recorded": sum(1 for x in correct if x.summary.verdict_source == Source.RECORDED),
            "suspect": sum(1 for x in rows if x.summary.verdict in (RunVerdict.SUSPECT, RunVerdict.REWARD_HACK, RunVerdict.CONTAMINATION)),
            "revalidated": sum(1 for x in rows if x.summary.verdict_source == Source.RE_VALIDATED),
            "flags": sum(x.summary.flags for x in rows),
            "incomplete": sum(1 for x in rows if CHECKS_INCOMPLETE in x.summary.caveats),
            "weak": sum(1 for x in rows if WEAK_CHECK in x.summary.caveats)}


@dataclass(frozen=True)
class GridCell:
    """One run in a grid cell, on one timing basis."""

    href: str
    css: str
    title: str
    shown: str
    flagged: bool
    marks: tuple[tuple[str, str, str], ...] = ()  # (css, tooltip, symbol): a weak check, checks that did not run


def _times(row: GridRow, basis: str) -> str:
    """The kernel and reference times behind a cell's speedup, for its tooltip; empty when neither is known."""
    if pd.isna(row["kernel_ms"]) and pd.isna(row["ref_ms"]):
        return ""
    where = BASIS_LABEL[Basis(basis)] if row["speedup_source"] == Source.RE_VALIDATED else "as recorded"
    k, r = (None if pd.isna(row[c]) else float(row[c]) for c in ("kernel_ms", "ref_ms"))
    return f" · kernel {numbers.time_ms(k)}, reference {numbers.time_ms(r)} ({where})"


GRID_CELL_COLUMNS = ("state", "revalidated_correct", "flagged", "weak", "incomplete", "basis", "speedup", "evidence", "kernel_ms", "ref_ms",
                     "speedup_source", "level", "problem_id", "problem", "model", "run_id")  # what a cell reads


def grid_cell(row: GridRow, href: str) -> GridCell:
    """A run (a row of `aggregates.grid`) as its grid cell: state colour, speedup or state, and a tooltip."""
    state = GridState(row["state"])
    recorded_only = pd.isna(row["revalidated_correct"])
    flagged = bool(row["flagged"]) if not pd.isna(row["flagged"]) else False
    label = ag.STATES[state]
    tip = label + (" · flagged" if flagged else "") + (" · not re-validated" if recorded_only else "") \
        + _times(row, str(row["basis"]))
    speed = None if pd.isna(row["speedup"]) else float(row["speedup"])
    shown = numbers.speedup(speed) if state in (GridState.FASTER, GridState.SLOWER) else label
    anchor = "" if pd.isna(row.get("evidence")) or not row.get("evidence") else f"#{row['evidence']}"
    marks = ((("weak", f"{WEAK_CHECK}: a wrong answer would also pass this problem's comparison", "≈"),) if row.get("weak") is True else ()) \
        + ((("incomplete", f"{CHECKS_INCOMPLETE}: a suspect check did not run", "◌"),) if row.get("incomplete") is True else ())
    return GridCell(href + anchor, f"s-{state.replace('_', '-')}" + (" recorded" if recorded_only else ""), tip, shown, flagged, marks)


def _problem_key(row: Mapping[str, Any]) -> ProblemKey:
    return (int(row["level"]), int(row["problem_id"]), str(row["problem"]))


def unattempted(runs: pd.DataFrame, space: pd.DataFrame | None) -> list[ProblemKey]:
    """The group's recorded problems that no run attempted (the boards count them in n): rows of their own on the grid."""
    tried = {(int(lv), int(p)) for lv, p in zip(runs["level"], runs["problem_id"])}
    return sorted((lv, pid, file) for (_, lv, pid), file in ag.recorded_problems(ag.comparable(runs), space).items()
                  if (lv, pid) not in tried)


def grid_page(key: GroupKey, runs: pd.DataFrame, urls: Urls, space: pd.DataFrame | None = None) -> Page:
    """Problems × models for one group, each cell once per timing basis (the page shows the chosen one); a recorded
    problem no model attempted is a row of "not attempted" cells, without a problem page to link."""
    views = []
    cells: dict[tuple[Basis, ProblemKey, str], list[GridCell]] = {}
    for b in Basis:
        views.append(basis_view(b, None))
        for row in cast(list[GridRow], ag.grid(runs, basis=b)[list(GRID_CELL_COLUMNS)].to_dict("records")):
            cells.setdefault((b, _problem_key(row), str(row["model"])), []).append(grid_cell(row, urls.run(str(row["run_id"]))))
    models = sorted({m for _, _, m in cells})
    problems = sorted({p for _, p, _ in cells} | set(unattempted(runs, space)))
    rows = [(p, urls.problems.get(p) and urls.problem(p), [[(v, cells.get((Basis(v.key), p, m), [])) for v in views] for m in models])
            for p in problems]
    return Page(urls.grid(key), "grid.html", {
        "bases": views,
        "title": f"Problems × models · {group_label(key)}", "crumbs": [HOME, (group_label(key), urls.group(key))],
        "models": [shown(m) for m in models], "rows": rows, "states": ag.STATES, "leaderboard": urls.leaderboard(key),
        "timed": timed_on(runs)})


@dataclass(frozen=True)
class ProblemEntry:
    model: str
    href: str
    row: Listed
    group: str


def problem_page(pkey: ProblemKey, runs: pd.DataFrame, rows: dict[str, Listed], urls: Urls) -> Page:
    """Every run of one problem, by group, then model, then run id."""
    ordered = runs[["benchmark", "configuration", "model", "run_id"]].sort_values(["benchmark", "configuration", "model", "run_id"],
                                                                           kind="stable")
    entries = [ProblemEntry(shown(str(r["model"])), urls.run(str(r["run_id"])), rows[str(r["run_id"])],
                            group_label((str(r["benchmark"]), str(r["configuration"])))) for r in ordered.to_dict("records")]
    kernels = compare.choices([(e.row.run_id, e.model, e.group, str(e.row.summary.verdict)) for e in entries
                               if e.row.has_kernel], urls)
    return Page(urls.problem(pkey), "problem.html", {
        "title": f"L{pkey[0]} · problem {pkey[1]}", "name": pkey[2], "crumbs": [HOME], "entries": entries,
        "count": f"{len(entries)} run{'s' if len(entries) != 1 else ''}", "kernels": kernels,
        "can_compare": len(kernels) > 1, "works": problem_works([e.row.work for e in entries]), "timed": timed_on(runs)})


PAGE_PROBLEM = ("level", "problem_id", "problem")  # problem pages gather a problem across benchmarks


def _run_inputs(runs: pd.DataFrame, rows: dict[str, Listed], by_id: dict[str, RunDigest], urls: Urls) -> list[Any]:
    """What a page of these runs reads of each: its table row, its listing row and its slug."""
    return [(i, urls.runs[i], by_id[i].row, repr(rows[i])) for i in sorted(str(r) for r in runs["run_id"])]


def _problem_pages(runs: pd.DataFrame, rows: dict[str, Listed], urls: Urls, by_id: dict[str, RunDigest]
                   ) -> tuple[list[Deferred], list[dict[str, Any]]]:
    """A page per problem, and the index's row for each: its runs and how many were correct (`aggregates.problems`)."""
    pages, index = [], []
    counts = ag.problems(runs, by=PAGE_PROBLEM).to_dict("records")
    groups = dict(iter(runs.groupby(list(PAGE_PROBLEM), sort=True)))
    for c in counts:
        pkey = _problem_key(c)
        g = groups[(c["level"], c["problem_id"], c["problem"])]
        pages.append(Deferred(urls.problem(pkey), "problem.html",
                              inputs_hash("problem", pkey, urls.problem(pkey), _run_inputs(g, rows, by_id, urls)),
                              functools.partial(problem_page, pkey, g, rows, urls)))
        index.append({"href": urls.problem(pkey), "label": f"L{pkey[0]} · problem {pkey[1]}", "file": pkey[2],
                      "runs": int(c["runs"]), "correct": int(c["correct"])})
    return pages, index


def timed_on(frame: pd.DataFrame) -> str:
    """Where a page's speedups come from, GPU and baseline: re-measured ones on our GPU against the reference we ran,
    recorded ones on the harness's GPU against the reference time it recorded (a speedup means nothing without both)."""
    def names(col: pd.Series) -> str:
        return ", ".join(sorted({shown(str(x)) for x in col.dropna()})) or "a GPU the trace does not name"
    measured = frame["revalidated_gpu"].notna()
    parts = [f"re-measured by us on {names(frame.loc[measured, 'revalidated_gpu'])}: the kernel against the reference in eager "
             "PyTorch, run by us on the same GPU"] if measured.any() else []
    if (~measured).any():
        parts.append(f"as recorded on {names(frame.loc[~measured, 'recorded_gpu'])}: the harness's kernel time against the "
                     "reference time it recorded (its baseline)")
    return "; ".join(parts)


def gpu_words(frame: pd.DataFrame) -> dict[GroupKey, str]:
    """Per (benchmark, configuration): the GPUs its runs were recorded on and those we re-validated them on."""
    f = frame.assign(**{c: frame[c].fillna(MISSING_KEY) for c in ("benchmark", "configuration")})
    out = {}
    for (bench, conf), g in f.groupby(["benchmark", "configuration"], sort=True):
        parts = [f"{how}: {', '.join(sorted({shown(str(x)) for x in g[col].dropna()}))}"
                 for how, col in (("recorded", "recorded_gpu"), ("re-validated", "revalidated_gpu")) if g[col].notna().any()]
        out[(str(bench), str(conf))] = " · ".join(parts) or "not recorded"
    return out


def model_page(key: GroupKey, model: str, xs: list[Listed], by_id: dict[str, RunDigest], frame: pd.DataFrame,
               g: pd.DataFrame | None, urls: Urls, space: pd.DataFrame | None, options: PageOptions,
               boards_of: dict[GroupKey, dict[str, ModelBoard]]) -> Page:
    """One model's page (`modelpage`); `boards_of` holds each group's board rows once made, for its other models."""
    board = None
    if g is not None:
        if key not in boards_of:
            boards_of[key] = model_boards(all_levels(frame, g, key, urls, space, options), urls)
        board = boards_of[key].get(model)
    rows = {x.run_id: by_id[x.run_id].table_row() for x in xs}
    fields = {x.run_id: [f.field for f in by_id[x.run_id].flags] for x in xs}
    shown_model = model if model != MISSING_KEY else "model not recorded"
    return Page(urls.model(key, model), "model.html", {
        "title": f"{shown_model} · {group_label(key)}", "crumbs": [HOME, (group_label(key), urls.group(key))], "rows": xs,
        "view": model_view(xs, rows, fields, board)})


def listing_pages(runs: list[RunDigest], rows: dict[str, Listed], frame: pd.DataFrame, urls: Urls,
                  errors: Sequence[CollectError], boards: dict[GroupKey, list[tuple[str, str]]] | None = None,
                  space: pd.DataFrame | None = None, options: PageOptions = DEFAULT_OPTIONS) -> list[Page | Deferred]:
    """Every page above the run pages; `runs` is in page order, `frame` is their runs table (`reporter.frames`).
    Grid, problem and model pages are `Deferred`: made only where their inputs changed."""
    by_id = {d.run_id: d for d in runs}
    boards_of: dict[GroupKey, dict[str, ModelBoard]] = {}
    groups: dict[GroupKey, dict[str, list[Listed]]] = defaultdict(lambda: defaultdict(list))
    for d in runs:
        groups[d.key][d.model].append(rows[d.run_id])
    ranked = ag.comparable(frame)
    gpus = gpu_words(frame)
    by_group = {(str(b), str(c)): g for (b, c), g in ranked.groupby(["benchmark", "configuration"])}
    pages: list[Page | Deferred] = []
    index_rows = []
    for key, models in groups.items():
        members = [x for xs in models.values() for x in xs]
        index_rows.append({"benchmark": key[0] if key[0] != MISSING_KEY else "— not recorded (partial traces)",
                           "configuration": key[1] if key[1] != MISSING_KEY else "—", "href": urls.group(key),
                           "models": len(models), "runs": len(members), "stats": _stats(members), "gpus": gpus.get(key, "—"),
                           "boards": (boards or {}).get(key, []), "grid": urls.grid(key) if key in by_group else None})
        model_rows = []
        g = by_group.get(key)
        for model, xs in models.items():
            model_rows.append({"model": shown(model), "href": urls.model(key, model), "runs": len(xs), "stats": _stats(xs)})
            own = [(x.run_id, repr(x), by_id[x.run_id].row, [f.field for f in by_id[x.run_id].flags]) for x in xs]
            # the model's board row ranks it among the group's models: every run of the group is an input
            pages.append(Deferred(urls.model(key, model), "model.html",
                                  inputs_hash("model", key, model, urls.model(key, model), urls.group(key), urls.leaderboard(key),
                                              own, _run_inputs(g, rows, by_id, urls) if g is not None else [],
                                              unattempted(g, space) if g is not None else [], repr(options)),
                                  functools.partial(model_page, key, model, xs, by_id, frame, g, urls, space, options, boards_of)))
        pages.append(Page(urls.group(key), "variant.html", {"title": group_label(key), "crumbs": [HOME], "rows": model_rows}))
        if key in by_group:
            g = by_group[key]
            problems = sorted({urls.problem(_problem_key(r)) for r in g[list(PAGE_PROBLEM)].to_dict("records")})
            pages.append(Deferred(urls.grid(key), "grid.html",
                                  inputs_hash("grid", key, urls.grid(key), urls.group(key), urls.leaderboard(key), problems,
                                              _run_inputs(g, rows, by_id, urls), unattempted(g, space)),
                                  functools.partial(grid_page, key, g, urls, space)))
    problem_pages, problem_rows = _problem_pages(ranked, rows, urls, by_id)
    pages += problem_pages
    pages.append(Page("index.html", "index.html", {
        "title": "All variants", "crumbs": [], "rows": index_rows, "errors": errors, "problems": problem_rows,
        "lede_runs": f"{len(runs)} run{'' if len(runs) == 1 else 's'} read.", "cross_gpu": urls.cross_gpu()}))
    pages.append(cross_gpu_page(frame, urls))  # issue 33: models ranked by fraction of speed of light across GPUs
    pages.append(Page("404.html", "404.html", {"title": "Page not found", "crumbs": []}))
    return pages
