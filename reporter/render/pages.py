"""Page data for the pages that list or rank many runs: index, groups, models, leaderboards, grids, problems."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from ..collect.traces import RunRecord
from ..errors import CollectError
from ..validate.schema import Basis
from . import charts
from . import leaderboard as lb
from .runpage import HOME, Page, group_label
from .summary import RunSummary, group_key, title
from .timing_view import basis_view
from .urls import GroupKey, ProblemKey, Urls


@dataclass(frozen=True)
class Listed:
    """A run as a row of a table, with its summary."""

    run: RunRecord
    summary: RunSummary
    href: str
    title: str
    sub: str
    kernel_href: str  # the final kernel's download (problem pages link it instead of repeating the source)


def listed(r: RunRecord, s: RunSummary, urls: Urls) -> Listed:
    return Listed(r, s, urls.run(r.run_id), title(r), r.trace.run.problem_file or r.run_id, urls.download(r.run_id, "kernel"))


def _stats(rows: list[Listed]) -> dict[str, int]:
    return {"correct": sum(1 for x in rows if x.summary.verdict == "correct"),
            "revalidated": sum(1 for x in rows if x.summary.verdict_source == "re-validated"),
            "flags": sum(x.summary.flags for x in rows)}


def leaderboard_page(key: GroupKey, group: list[lb.Outcome], urls: Urls) -> Page:
    best = {m: list(lb.best_per_problem(os_).values()) for m, os_ in sorted(_by_model(group).items())}
    figures: dict[str, Any] = {
        "fastp": charts.to_json(charts.fast_p_curves(
            [(m, [o.speedup for o in b if o.counts and o.speedup is not None], len(b)) for m, b in best.items()])),
        "dist": charts.to_json(charts.speedup_distribution(
            [(m, [o.speedup for o in b if o.counts and o.speedup is not None]) for m, b in best.items()])),
    }
    pts = [{"ref_ms": o.ref_ms, "kernel_ms": o.kernel_ms, "href": "../" + o.href, "correct": o.correct,
            "measured": o.speedup_source == "re-validated", "label": f"{o.model} · L{o.problem[0]} P{o.problem[1]}"}
           for o in group if o.ref_ms and o.kernel_ms]
    if pts:
        figures["scatter"] = charts.to_json(charts.runtime_scatter(pts))
    return Page(urls.leaderboard(key), "leaderboard.html", {
        "title": f"Leaderboard · {group_label(key)}", "crumbs": [HOME, (group_label(key), urls.group(key))],
        "views": [basis_view(b, lb.leaderboard_rows([o.on_basis(b.value) for o in group])) for b in Basis],
        "fast_ps": lb.FAST_P, "figures": figures, "grid": urls.grid(key)})


def _by_model(group: list[lb.Outcome]) -> dict[str, list[lb.Outcome]]:
    out: dict[str, list[lb.Outcome]] = defaultdict(list)
    for o in group:
        out[o.model].append(o)
    return out


def grid_page(key: GroupKey, group: list[lb.Outcome], urls: Urls) -> Page:
    models = sorted({o.model for o in group})
    problems = sorted({o.problem for o in group})
    views = [basis_view(b, None) for b in Basis]
    cells: dict[tuple[ProblemKey, str], list[lb.Outcome]] = defaultdict(list)
    for o in group:
        cells[(o.problem, o.model)].append(o)
    # Each cell once per timing basis; the page shows the chosen one (#basis= in the URL).
    rows = [(p, urls.problem(p), [[(v, [lb.grid_cell(o.on_basis(v.key)) for o in cells.get((p, m), [])]) for v in views]
                                  for m in models]) for p in problems]
    return Page(urls.grid(key), "grid.html", {
        "bases": views,
        "title": f"Problems × models · {group_label(key)}", "crumbs": [HOME, (group_label(key), urls.group(key))],
        "models": models, "rows": rows, "states": lb.STATES, "leaderboard": urls.leaderboard(key)})


def problem_page(pkey: ProblemKey, group: list[lb.Outcome], rows: dict[str, Listed], urls: Urls) -> Page:
    entries = [(o, rows[o.run_id], group_label(o.group)) for o in sorted(group, key=lambda o: (o.group, o.model, o.run_id))]
    return Page(urls.problem(pkey), "problem.html", {
        "title": f"L{pkey[0]} · problem {pkey[1]}", "name": pkey[2], "crumbs": [HOME], "entries": entries,
        "count": f"{len(entries)} run{'s' if len(entries) != 1 else ''}"})


def listing_pages(runs: list[RunRecord], rows: dict[str, Listed], outcomes: list[lb.Outcome], urls: Urls,
                  errors: list[CollectError]) -> list[Page]:
    """Every page above the run pages; `runs` is in page order."""
    groups: dict[GroupKey, dict[str, list[Listed]]] = defaultdict(lambda: defaultdict(list))
    for r in runs:
        groups[group_key(r)][r.trace.run.model or "unknown"].append(rows[r.run_id])
    by_group: dict[GroupKey, list[lb.Outcome]] = defaultdict(list)
    by_problem: dict[ProblemKey, list[lb.Outcome]] = defaultdict(list)
    for o in outcomes:
        by_group[o.group].append(o)
        by_problem[o.problem].append(o)
    pages: list[Page] = []
    index_rows = []
    for key, models in groups.items():
        members = [x for xs in models.values() for x in xs]
        ranked = key in by_group
        index_rows.append({"benchmark": key[0] if key[0] != "unknown" else "— not recorded (partial traces)",
                           "configuration": key[1] if key[1] != "unknown" else "—", "href": urls.group(key),
                           "models": len(models), "runs": len(members), "stats": _stats(members),
                           "leaderboard": urls.leaderboard(key) if ranked else None, "grid": urls.grid(key) if ranked else None})
        model_rows = []
        for model, xs in models.items():
            model_rows.append({"model": model, "href": urls.model(key, model), "runs": len(xs), "stats": _stats(xs)})
            shown_model = model if model != "unknown" else "model not recorded"
            pages.append(Page(urls.model(key, model), "model.html", {
                "title": f"{shown_model} · {group_label(key)}", "crumbs": [HOME, (group_label(key), urls.group(key))], "rows": xs}))
        pages.append(Page(urls.group(key), "variant.html", {"title": group_label(key), "crumbs": [HOME], "rows": model_rows}))
        if ranked:
            pages.append(leaderboard_page(key, by_group[key], urls))
            pages.append(grid_page(key, by_group[key], urls))
    problem_rows = []
    for pkey, group in sorted(by_problem.items()):
        pages.append(problem_page(pkey, group, rows, urls))
        problem_rows.append({"href": urls.problem(pkey), "label": f"L{pkey[0]} · problem {pkey[1]}", "file": pkey[2],
                             "runs": len(group), "correct": sum(1 for o in group if o.correct)})
    pages.append(Page("index.html", "index.html", {
        "title": "All variants", "crumbs": [], "rows": index_rows, "errors": errors, "problems": problem_rows,
        "lede_runs": f"{len(runs)} run{'' if len(runs) == 1 else 's'} read."}))
    pages.append(Page("404.html", "404.html", {"title": "Page not found", "crumbs": []}))
    return pages
