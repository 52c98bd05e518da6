"""Page data for the leaderboards: one per benchmark × level × configuration with a row per model, one
all-levels page per benchmark × configuration, each also as "re-validated only", and each with its runs
as a CSV download. Every number comes from `reporter.aggregates` over the runs table (`reporter.frames`).

The re-validated-only view is a page of its own (`...--revalidated.html`): the switch is a link, so the
choice lives in the URL and survives a reload, a bookmark or a shared link. Each page holds its table and
charts once per timing basis (`#basis=wall` picks one, as on the grid); device time is shown first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from .. import aggregates as ag
from ..core.schema import Basis
from ..core.vocab import Source, shown
from ..frames import export_bytes
from . import charts, numbers
from .runpage import HOME, Page, group_label
from .timing_view import BasisView, basis_view
from .urls import GroupKey, Urls

REVALIDATED = "--revalidated"


@dataclass(frozen=True)
class FastCell:
    sort: str  # the share, for sorting
    shown: str
    count: str  # "numerator/denominator"
    title: str  # what the denominator is and how much of it we re-measured


@dataclass(frozen=True)
class BoardRow:
    """A leaderboard row as the page prints it."""

    model: str
    attempted: int
    compiled: int
    correct: int
    correct_recorded: int
    revalidated_sort: int
    revalidated_shown: str
    fast: tuple[FastCell, ...]
    geomean_sort: str
    geomean_shown: str
    geomean_n: str
    median_turns: str
    median_tokens: str
    recorded_only: int
    other_gpu: int
    excluded: int
    reward_hacks: int = 0  # runs a reviewer called reward hacks (all of them, not only the best per problem)


@dataclass(frozen=True)
class Board:
    """One leaderboard page's scope: its runs and where it and its variants live."""

    title: str
    base: str  # site path without ".html"
    runs: pd.DataFrame
    by: tuple[str, ...]
    levels: tuple[tuple[str, str], ...] = ()  # (label, href) of the per-level boards, on an all-levels page


def _fast(row: dict[str, Any], p: float) -> FastCell:
    n, d, reval = int(row[f"{ag.fast_column(p)}_n"]), int(row["attempted"]), int(row["revalidated"])
    tip = (f"{n} of {d} attempted problems correct and faster than {p:g}×; {reval} of the {d} re-validated by us, "
           f"{d - reval} as recorded")
    return FastCell(f"{n / d:.6f}" if d else "0", numbers.share(n, d), f"{n}/{d}", tip)


def board_rows(table: pd.DataFrame) -> list[BoardRow]:
    rows = []
    for row in table.to_dict("records"):
        gm = None if pd.isna(row["geomean"]) else float(row["geomean"])
        reval = int(row["revalidated"])
        rows.append(BoardRow(
            shown(str(row["model"])), int(row["attempted"]), int(row["compiled"]), int(row["correct"]), int(row["correct_recorded"]),
            int(row["correct_revalidated"]) if reval else -1,
            f"{int(row['correct_revalidated'])} of {reval} re-validated" if reval else "— (none re-validated)",
            tuple(_fast(row, p) for p in ag.FAST_P), f"{gm:.6f}" if gm is not None else "", numbers.speedup(gm),
            f"n={int(row['geomean_n'])}", numbers.num(None if pd.isna(row["median_turns"]) else float(row["median_turns"]), 1),
            numbers.num(None if pd.isna(row["median_tokens"]) else float(row["median_tokens"]), 0),
            int(row["recorded_only"]), int(row["baseline_other_gpu"]), int(row["excluded"]), int(row.get("reward_hacks", 0))))
    return rows


@dataclass(frozen=True)
class BasisBoard:
    """A leaderboard's table and charts on one timing basis; chart names are unique in the page."""

    table: list[BoardRow]
    charts: tuple[tuple[str, str], ...]  # (name, plotly JSON), side by side: fast_p curves, speedup distribution
    scatter: tuple[str, str] | None  # the runtime scatter, when any run has both times

    @property
    def figures(self) -> dict[str, str]:
        return dict(self.charts + ((self.scatter,) if self.scatter else ()))


Chart = tuple[str, str]


def _figures(runs: pd.DataFrame, revalidated_only: bool, urls: Urls, basis: Basis) -> tuple[tuple[Chart, Chart], Chart | None]:
    scoped = ag.scoped(runs, revalidated_only, basis=basis)
    best = ag.best_per_problem(scoped, ())
    series = [(shown(str(m)), g["speedup"][g["counts"]].astype(float).tolist(), len(g)) for m, g in best.groupby("model", sort=True)]
    pair = ((f"fastp-{basis.value}", charts.to_json(charts.fast_p_curves(series))),
            (f"dist-{basis.value}", charts.to_json(charts.speedup_distribution([(m, s) for m, s, _ in series]))))
    timed = scoped[(scoped["ref_ms"] > 0) & (scoped["kernel_ms"] > 0)]
    pts = [{"ref_ms": float(r["ref_ms"]), "kernel_ms": float(r["kernel_ms"]), "href": "../" + urls.run(str(r["run_id"])),
            "correct": bool(r["correct"]), "measured": r["speedup_source"] == Source.RE_VALIDATED,
            "label": f"{shown(str(r['model']))} · L{r['level']} P{r['problem_id']}"} for r in timed.to_dict("records")]
    return pair, (f"scatter-{basis.value}", charts.to_json(charts.runtime_scatter(pts))) if pts else None


def basis_boards(board: Board, revalidated_only: bool, urls: Urls) -> list[BasisView]:
    """The board's table and charts on each timing basis, device time first and shown by default."""
    views = []
    for b in Basis:
        table = ag.leaderboard(board.runs, by=board.by, revalidated_only=revalidated_only, basis=b)
        views.append(basis_view(b, BasisBoard(board_rows(table), *_figures(board.runs, revalidated_only, urls, b))))
    return views


def board_pages(board: Board, grid: str | None, urls: Urls) -> tuple[list[Page], dict[str, bytes]]:
    """The page, its re-validated-only twin and the CSV of its runs."""
    pages = []
    csv = f"{board.base}.runs.csv"
    for only in (False, True):
        bases = basis_boards(board, only, urls)
        here, other = (f"{board.base}{REVALIDATED}.html", f"{board.base}.html") if only else \
                      (f"{board.base}.html", f"{board.base}{REVALIDATED}.html")
        pages.append(Page(here, "leaderboard.html", {
            "title": f"Leaderboard · {board.title}" + (" · re-validated only" if only else ""), "crumbs": [HOME],
            "bases": bases, "fast_ps": ag.FAST_P, "figures": {k: v for b in bases for k, v in b.rows.figures.items()},
            "any_rows": any(b.rows.table for b in bases), "grid": grid,
            "revalidated_only": only, "switch": other, "csv": csv, "levels": board.levels,
            "runs_in_scope": len(ag.scoped(board.runs, only))}))
    return pages, {csv: export_bytes(board.runs, "csv")}


def leaderboards(frame: pd.DataFrame, urls: Urls) -> tuple[list[Page], dict[str, bytes], dict[GroupKey, list[tuple[str, str]]]]:
    """Every leaderboard page and CSV, and per (benchmark, configuration) group the links the index shows."""
    runs = ag.comparable(frame)
    pages: list[Page] = []
    files: dict[str, bytes] = {}
    links: dict[GroupKey, list[tuple[str, str]]] = {}
    for (bench, conf), group in runs.groupby(["benchmark", "configuration"], sort=True):
        key = (str(bench), str(conf))
        base = urls.leaderboard(key).removesuffix(".html")
        levels = tuple((f"level {int(lv)}", f"{base}--l{int(lv)}.html") for lv in sorted(group["level"].unique()))
        # the boards keep the frame's own rows (not comparable()'s filled labels): their CSV is the runs as loaded
        boards = [Board(f"{group_label(key)} · all levels", base, frame.loc[group.index], ("benchmark", "configuration"), levels)]
        boards += [Board(f"{group_label(key)} · level {int(lv)}", f"{base}--l{int(lv)}", frame.loc[g.index], ag.LEADERBOARD_KEYS)
                   for lv, g in group.groupby("level", sort=True)]
        for b in boards:
            p, f = board_pages(b, urls.grid(key), urls)
            pages += p
            files.update(f)
        links[key] = [("all levels", f"{base}.html"), *levels]
    return pages, files, links
