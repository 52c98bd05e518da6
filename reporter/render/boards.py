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
from ..aggregates.sol import SOL_GEOMEAN_RULE
from ..core.audit import DEFAULT_OPTIONS, PageOptions
from ..core.schema import Basis
from ..core.suspects import STRICT_OWN_SHARE
from ..core.vocab import MISSING_KEY, Source, shown
from ..frames import export_bytes
from . import charts, numbers
from .moves import audit_view
from .research import SampleBoard, SampleRow, sample_board
from .runpage import HOME, Page, group_label
from .timing_view import basis_view
from .urls import GroupKey, Urls

REVALIDATED = "--revalidated"
STRICT_RULE = (f"fast₁ counting only runs whose own kernels (the submission's, not PyTorch's or a library's) do at least "
               f"{STRICT_OWN_SHARE:.0%} of one call's kernel time; leaving the GEMM to cuBLAS is allowed by KernelBench and by "
               "every other column, so this is the column for readers who want fully custom kernels (the share is "
               "measured at re-validation only)")


@dataclass(frozen=True)
class FastCell:
    sort: str  # the share, for sorting
    shown: str
    count: str  # "numerator/denominator"
    title: str  # what the denominator is and how much of it we re-measured
    with_suspects: str = ""  # the share with suspect runs counted (KernelBench's way), where the row has any
    own: str = ""  # fast_1 only: the strict view's share, "own kernels 0.50" (`suspects.STRICT_OWN_SHARE`)
    own_title: str = ""


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
    problems: str = ""  # "attempted/n" where n is the problem set's
    not_attempted: str = ""  # "1 not attempted", "no L2 kernels"
    compile_shown: str = ""  # fast_1 and the geomean against torch.compile, where it was recorded
    mark: str = ""  # on a board mixing recorded and re-measured rows: "recorded", "3 of 4 recorded"
    rank: str = ""  # "2", or "2=" where rows print the same fast₁ and geomean (`aggregates.RANK_RULE`)
    geomean_with_suspects: str = ""  # the geomean with suspect runs counted (KernelBench's way), where the row has any
    correct_split: str = ""  # "3 by us · 1 as recorded": where `correct` comes from, as on the index
    correct_title: str = ""  # how many were re-validated, and what the harness itself recorded
    weak_checks: int = 0  # correct runs on problems whose comparison accepts a wrong answer: no win here
    incomplete: int = 0  # runs whose suspect checks did not all run
    audit: str = ""  # "audit pending" (`core.audit.PENDING_TOP`), "audited 2/3" (counting runs judged), or ""
    audit_css: str = ""  # "pending" for the first
    sol_sort: str = ""  # the geomean of the counting runs' fractions of speed of light (`collect.sol`)
    sol_shown: str = numbers.DASH
    sol_n: str = ""


@dataclass(frozen=True)
class Board:
    """One leaderboard page's scope: its runs and where it and its variants live."""

    title: str
    base: str  # site path without ".html"
    runs: pd.DataFrame
    by: tuple[str, ...]
    levels: tuple[tuple[str, str], ...] = ()  # (label, href) of the per-level boards, on an all-levels page
    space: pd.DataFrame | None = None  # the recorded problem set (frames.load_universe)
    options: PageOptions = DEFAULT_OPTIONS  # the audit rule and the user's prices


def _left_out(row: dict[str, Any]) -> tuple[str, str]:
    """What the default boards leave out that KernelBench counts: ("suspect runs and weak-check wins", "susp. & weak")."""
    sus, weak = int(row["excluded"]), int(row.get("weak_check", 0))
    words = [w for w, n in (("the suspect runs", sus), ("the correct runs on weak-check problems", weak)) if n]
    short = [w for w, n in (("susp.", sus), ("weak", weak)) if n]
    return " and ".join(words), " & ".join(short)


def _fast(row: dict[str, Any], p: float) -> FastCell:
    col = ag.fast_column(p)
    n, d, reval, tried = int(row[f"{col}_n"]), int(row["problems"]), int(row["revalidated"]), int(row["attempted"])
    tip = (f"{n} of {d} problems correct and faster than {p:g}× ({tried} attempted, {d - tried} not attempted); "
           f"{reval} of the {tried} attempted re-validated by us, {tried - reval} as recorded")
    kb = int(row.get(f"{col}_with_suspects_n", n))
    words, short = _left_out(row)
    if words:
        tip += f"; {kb}/{d} = {numbers.share(kb, d)} with {words} counted, as KernelBench's own scoring would"
    also = f"{numbers.share(kb, d)} w/ {short}" if words else ""
    own, own_title = _own(row) if p == 1.0 and "strict_fast_1.0_n" in row else ("", "")
    return FastCell(f"{n / d:.6f}" if d else "0", numbers.share(n, d), f"{n}/{d}", tip, also, own, own_title)


def _own(row: dict[str, Any]) -> tuple[str, str]:
    """The strict view under fast_1: the share counting only runs whose own kernels do most of the work, and why."""
    n, d, measured = int(row["strict_fast_1.0_n"]), int(row["problems"]), int(row["strict_measured"])
    tip = (f"own kernels only: {n} of {d} problems correct, faster than 1× and with the submission's own kernels doing "
           f"at least {STRICT_OWN_SHARE:.0%} of the kernel time; the share is measured on re-validated runs only "
           f"({measured} of {int(row['attempted'])} attempted), so the others never count here")
    return f"own kernels {numbers.share(n, d)}", tip


def _compile(row: dict[str, Any]) -> str:
    n = int(row.get("compile_n", 0))
    if not n:
        return ""
    gm = float(row["compile_geomean"])
    text = f"fast₁ {numbers.share(int(row['compile_fast_1.0_n']), int(row['problems']))} · {numbers.speedup(gm)} (n={n})"
    _, short = _left_out(row)
    m = int(row.get("compile_with_suspects_n", 0) or 0)
    if short and m:  # KernelBench's way, as the geomean's own line: suspect runs and weak-check wins counted
        ks = float(row["compile_geomean_with_suspects"])
        text += (f"; w/ {short}: fast₁ {numbers.share(int(row['compile_fast_1.0_with_suspects_n']), int(row['problems']))} · "
                 f"{numbers.speedup(ks)} (n={m})")
    return text


def _mark(row: dict[str, Any], mixed: bool) -> str:
    """On a board mixing recorded and re-measured rows, what a row's † says (its cells carry it)."""
    rec, tried = int(row["recorded_only"]), int(row["attempted"])
    if not mixed or not rec:
        return ""
    return f"{'all' if rec == tried else rec} of this row's {tried} problems as recorded by the harness, not re-measured"


def _missing(row: dict[str, Any]) -> str:
    gone, levels = int(row["not_attempted"]), str(row.get("levels_missing") or "")
    words = [f"{gone} not attempted"] if gone else []
    return " · ".join(words + ([f"no {levels} kernels"] if levels else []))


def _ranks(table: pd.DataFrame) -> list[str]:
    """Each row's rank as printed: "2=" where another row of the board shares it."""
    ranks = [int(r) for r in table["rank"]]
    return [f"{r}=" if ranks.count(r) > 1 else str(r) for r in ranks]


def _with_suspects(row: dict[str, Any]) -> str:
    words, short = _left_out(row)
    if not words or "geomean_with_suspects" not in row:
        return ""
    gm = None if pd.isna(row["geomean_with_suspects"]) else float(row["geomean_with_suspects"])
    return f"{numbers.speedup(gm)} w/ {short} (n={int(row['geomean_with_suspects_n'])})"


def _correct(row: dict[str, Any]) -> tuple[str, str]:
    """A row's correct count split by source (the index's words), and what else is known about it."""
    correct, ours, reval = int(row["correct"]), int(row["correct_revalidated"]), int(row["revalidated"])
    return (f"{ours} by us · {correct - ours} as recorded",
            f"correct by our re-validation: {ours} of the {reval} problems re-validated; correct as recorded by the harness "
            f"(for the rest): {correct - ours}. The harness itself recorded {int(row['correct_recorded'])} of these problems correct")


def board_rows(table: pd.DataFrame, mixed: bool = False, audit: dict[str, tuple[str, str]] | None = None) -> list[BoardRow]:
    rows = []
    for row, rank in zip(table.to_dict("records"), _ranks(table)):
        gm = None if pd.isna(row["geomean"]) else float(row["geomean"])
        reval = int(row["revalidated"])
        rows.append(BoardRow(
            shown(str(row["model"])), int(row["attempted"]), int(row["compiled"]), int(row["correct"]), int(row["correct_recorded"]),
            int(row["correct_revalidated"]) if reval else -1,
            f"re-val. {int(row['correct_revalidated'])}/{reval}" if reval else "none re-val.",
            tuple(_fast(row, p) for p in ag.FAST_P), f"{gm:.6f}" if gm is not None else "", numbers.speedup(gm),
            f"n={int(row['geomean_n'])}", numbers.num(None if pd.isna(row["median_turns"]) else float(row["median_turns"]), 1),
            numbers.num(None if pd.isna(row["median_tokens"]) else float(row["median_tokens"]), 0),
            int(row["recorded_only"]), int(row["baseline_other_gpu"]), int(row["excluded"]), int(row.get("reward_hacks", 0)),
            f"{int(row['attempted'])}/{int(row['problems'])}", _missing(row), _compile(row), _mark(row, mixed), rank,
            _with_suspects(row), *_correct(row), int(row.get("weak_check", 0)), int(row.get("checks_incomplete", 0)),
            *(audit or {}).get(str(row["model"]), ("", "")), **_sol(row)))
    return rows


def _sol(row: dict[str, Any]) -> dict[str, str]:
    """The row's geomean fraction of speed of light, over the counting runs that have one."""
    gm, n, above = row.get("sol_geomean"), int(row.get("sol_n", 0)), int(row.get("sol_above_n", 0))
    left_out = f", {above} above 100% left out" if above else ""  # the bound was wrong for them (`core.sol.AboveCause`)
    if gm is None or pd.isna(gm) or not n:
        return {"sol_n": f"none; {above} above 100% left out"} if above else {}
    return {"sol_sort": f"{float(gm):.6f}", "sol_shown": numbers.percent(float(gm)), "sol_n": f"n={n}{left_out}"}


@dataclass(frozen=True)
class BasisBoard:
    """A leaderboard's table and charts on one timing basis; chart names are unique in the page."""

    table: list[BoardRow]
    charts: tuple[tuple[str, str], ...]  # (name, plotly JSON), side by side: fast_p curves, speedup distribution
    scatter: tuple[str, str] | None  # the runtime scatter, when any run has both times
    samples: SampleBoard | None = None  # every sample counted, cost and audits (`research`)
    models: tuple[str, ...] = ()  # each table row's model as the runs table keys it (`vocab.MISSING_KEY`: none)

    @property
    def figures(self) -> dict[str, str]:
        extra = (self.scatter,) if self.scatter else ()
        return dict(self.charts + extra + ((self.samples.frontier,) if self.samples and self.samples.frontier else ()))


Chart = tuple[str, str]


def _figures(scoped: pd.DataFrame, urls: Urls, basis: Basis, ns: dict[str, int]) -> tuple[tuple[Chart, Chart], Chart | None]:
    """The board's charts from its runs scoped on `basis` (`aggregates.scoped`)."""
    best = ag.best_per_problem(scoped, ())
    per_model: dict[str, list[float]] = {}
    problems: dict[str, int] = {}
    for m, counts, speed in zip(best["model"].tolist(), best["counts"].tolist(), best["speedup"].tolist(), strict=True):
        per_model.setdefault(str(m), []).extend([float(speed)] if counts else [])
        problems[str(m)] = problems.get(str(m), 0) + 1
    series = [(shown(m), per_model[m], ns.get(m, problems[m])) for m in sorted(per_model)]
    pair = ((f"fastp-{basis.value}", charts.to_json(charts.fast_p_curves(series))),
            (f"dist-{basis.value}", charts.to_json(charts.speedup_distribution([(m, s) for m, s, _ in series]))))
    timed = scoped.loc[(scoped["ref_ms"] > 0) & (scoped["kernel_ms"] > 0),
                       ["ref_ms", "kernel_ms", "run_id", "correct", "speedup_source", "model", "level", "problem_id"]]
    pts = [{"ref_ms": float(r["ref_ms"]), "kernel_ms": float(r["kernel_ms"]), "href": "../" + urls.run(str(r["run_id"])),
            "correct": bool(r["correct"]), "measured": r["speedup_source"] == Source.RE_VALIDATED,
            "label": f"{shown(str(r['model']))} · L{r['level']} P{r['problem_id']}"} for r in timed.to_dict("records")]
    return pair, (f"scatter-{basis.value}", charts.to_json(charts.runtime_scatter(pts))) if pts else None


@dataclass(frozen=True)
class BoardView:
    """A board's table on one timing basis, or on the harness's recorded figures when nothing was re-measured;
    `heading` says which numbers these are (GPU and baseline file for recorded ones)."""

    key: str
    label: str
    note: str
    hidden: bool
    rows: BasisBoard
    heading: str


def recorded_words(runs: pd.DataFrame) -> str:
    """Where the recorded speedups of these runs come from: "recorded by the harness on <GPUs> against <baselines>"."""
    rec = runs[runs["speedup_source"].ne(Source.RE_VALIDATED).fillna(True).astype(bool)]
    gpus = ", ".join(sorted({shown(str(g)) for g in rec["recorded_gpu"].dropna()})) or "a GPU it did not name"
    bases = " and ".join(sorted({str(b) for b in rec["recorded_baseline_source"].dropna()})) or "a baseline it did not name"
    return f"recorded by the harness on {gpus} against {bases}"


def basis_boards(board: Board, revalidated_only: bool, urls: Urls) -> tuple[list[BoardView], str, int]:
    """The board's table and charts on each timing basis, device time first and shown by default; a board
    with no re-measured speedup has one view, headed as the harness's recorded numbers. Also the board's n, as
    its definition of fast_p says it (`universe_sentence`), and how many runs it scopes."""
    every = ag.scopes(board.runs, revalidated_only, bases=(ag.DEFAULT_BASIS,))
    scoped = every[ag.DEFAULT_BASIS][0]
    measured = bool(scoped["speedup_source"].eq(Source.RE_VALIDATED).fillna(False).any())
    if measured:  # a view per basis; a board of recorded figures has the one
        every |= ag.scopes(board.runs, revalidated_only, bases=[b for b in Basis if b != ag.DEFAULT_BASIS])
    mixed = measured and bool(scoped["speedup_source"].eq(Source.RECORDED).fillna(False).any())
    words = recorded_words(scoped)
    views = []
    sentence = ""
    for b in Basis if measured else (ag.DEFAULT_BASIS,):
        # each basis's runs scoped once, for the table and the charts alike
        runs, kernelbench_count = every[b]
        table = ag.board_table(runs, kernelbench_count, board.by, space=board.space)
        sentence = sentence or universe_sentence(table)
        ns = {str(m): int(n) for m, n in zip(table["model"], table["problems"])}  # one row per model on a board
        extra, marks = sample_board(table, runs, board.by, board.options, b.value)
        rows = BasisBoard(board_rows(table, mixed, marks), *_figures(runs, urls, b, ns), extra,
                          tuple(model_key(m) for m in table["model"]))
        if not measured:  # an empty view (re-validated only, none re-validated) names no GPU or baseline
            views.append(BoardView(b.value, "recorded", "none of these runs was re-validated by us" if len(scoped) else "",
                                   False, rows, f"Speedups {words}" if len(scoped) else "No run here was re-validated by us"))
            continue
        v = basis_view(b, rows)
        heading = f"Speedups on {v.label}" + (" where re-validated, elsewhere as recorded (†)" if mixed else "")
        note = f"{v.note}. † cells: the harness's figures, {words}" if mixed else v.note
        views.append(BoardView(v.key, v.label, note, v.hidden, rows, heading))
    return views, sentence, len(scoped)


def board_pages(board: Board, grid: str | None, urls: Urls) -> tuple[list[Page], dict[str, bytes]]:
    """The page, its re-validated-only twin and the CSV of its runs."""
    pages = []
    csv = f"{board.base}.runs.csv"
    for only in (False, True):
        bases, sentence, in_scope = basis_boards(board, only, urls)
        here, other = (f"{board.base}{REVALIDATED}.html", f"{board.base}.html") if only else \
                      (f"{board.base}.html", f"{board.base}{REVALIDATED}.html")
        rows = [r for b in bases[:1] for r in b.rows.table]
        pages.append(Page(here, "leaderboard.html", {
            "title": f"Leaderboard · {board.title}" + (" · re-validated only" if only else ""), "crumbs": [HOME],
            "bases": bases, "switchable": len(bases) > 1, "fast_ps": ag.FAST_P,
            "figures": {k: v for b in bases for k, v in b.rows.figures.items()},
            "any_rows": any(b.rows.table for b in bases), "grid": grid, "compile": any(r.compile_shown for r in rows),
            "effort": any(r.median_turns != numbers.DASH or r.median_tokens != numbers.DASH for r in rows),
            "problems_n": sentence,
            "revalidated_only": only, "switch": other, "csv": csv,
            "levels": board.levels, "runs_in_scope": in_scope, "rank_rule": ag.RANK_RULE,
            "strict_rule": STRICT_RULE, "sol_rule": SOL_GEOMEAN_RULE, "cross_gpu": urls.cross_gpu(),
            "moves": None if only else audit_view(board.runs, urls)}))  # the re-validated twin is the audit itself
    return pages, {csv: export_bytes(board.runs, "csv")}


def universe_sentence(table: pd.DataFrame) -> str:
    """The board's n (`aggregates.leaderboard`'s `problems`), for its one-sentence definition of fast_p."""
    ns = " or ".join(str(n) for n in sorted(set(table["problems"].astype(int))))
    if not ns:
        return "the problems"
    if bool(table["universe_known"].fillna(False).any()):
        return (f"the n = {ns} problems of the benchmark's problem set (recorded at import with each file's sha256; "
                "a problem with no kernel counts as not attempted, never correct)")
    return f"the n = {ns} problems the model attempted (no problem set was recorded, so a problem with no kernel is not counted)"


def model_key(value: object) -> str:
    """A model as the runs table keys its pages: `vocab.MISSING_KEY` where none was recorded."""
    return MISSING_KEY if value is None or (isinstance(value, float) and pd.isna(value)) else str(value)


def all_levels(frame: pd.DataFrame, group: pd.DataFrame, key: GroupKey, urls: Urls, space: pd.DataFrame | None,
               options: PageOptions) -> Board:
    """The all-levels board of one (benchmark, configuration) group; `group` is its runs in `ag.comparable(frame)`."""
    base = urls.leaderboard(key).removesuffix(".html")
    levels = tuple((f"level {int(lv)}", f"{base}--l{int(lv)}.html") for lv in sorted(group["level"].unique()))
    # the boards keep the frame's own rows (not comparable()'s filled labels): their CSV is the runs as loaded
    return Board(f"{group_label(key)} · all levels", base, frame.loc[group.index], ("benchmark", "configuration"), levels,
                 space, options)


@dataclass(frozen=True)
class ModelBoard:
    """A model's row of its group's all-levels board as the board's first view shows it (every run, device time
    first where re-measured): the model page repeats it and links there."""

    href: str
    heading: str
    row: BoardRow
    samples: SampleRow | None
    sentence: str  # the board's n, as its definition of fast_p says it


def model_boards(board: Board, urls: Urls) -> dict[str, ModelBoard]:
    """Per model (`model_key`), its row of `board`'s first view."""
    views, sentence, _ = basis_boards(board, False, urls)
    if not views:
        return {}
    v = views[0].rows
    extra = v.samples.rows if v.samples else ()
    return {m: ModelBoard(board.base + ".html", views[0].heading, row, extra[i] if i < len(extra) else None, sentence)
            for i, (m, row) in enumerate(zip(v.models, v.table, strict=True))}


def leaderboards(frame: pd.DataFrame, urls: Urls, space: pd.DataFrame | None = None, options: PageOptions = DEFAULT_OPTIONS
                 ) -> tuple[list[Page], dict[str, bytes], dict[GroupKey, list[tuple[str, str]]]]:
    """Every leaderboard page and CSV, and per (benchmark, configuration) group the links the index shows."""
    runs = ag.comparable(frame)
    pages: list[Page] = []
    files: dict[str, bytes] = {}
    links: dict[GroupKey, list[tuple[str, str]]] = {}
    for (bench, conf), group in runs.groupby(["benchmark", "configuration"], sort=True):
        key = (str(bench), str(conf))
        first = all_levels(frame, group, key, urls, space, options)
        base, levels = first.base, first.levels
        boards = [first]
        boards += [Board(f"{group_label(key)} · level {int(lv)}", f"{base}--l{int(lv)}", frame.loc[g.index], ag.LEADERBOARD_KEYS,
                         space=space, options=options) for lv, g in group.groupby("level", sort=True)]
        for b in boards:
            p, f = board_pages(b, urls.grid(key), urls)
            pages += p
            files.update(f)
        links[key] = [("all levels", f"{base}.html"), *levels]
    return pages, files, links
