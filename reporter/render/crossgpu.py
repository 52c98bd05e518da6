"""Page data for the cross-GPU board: each model ranked by its fraction of speed of light, whatever GPU took its
times (`aggregates.sol.cross_gpu`). A speedup depends on the GPU and on the baseline; a fraction of SOL only on the
problem's work and the datasheet of the GPU that took the time, so this board can rank a model's runs recorded on
one GPU beside runs re-measured on another, and it says that it does."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..aggregates.sol import ABOVE_RULE, CROSS_GPU_RULE, cross_gpu
from ..core.vocab import shown
from . import numbers
from .runpage import HOME, Page, group_label
from .urls import Urls


@dataclass(frozen=True)
class CrossRow:
    rank: str
    model: str
    href: str | None  # the model's page in its group
    problems: int
    geomean: str
    geomean_sort: str
    median: str
    best: str
    gpus: str
    above: str  # "2 above 100% left out" (`ABOVE_RULE`), or ""


@dataclass(frozen=True)
class CrossGroup:
    label: str
    board: str  # the group's leaderboard (speedups), for comparison
    rows: tuple[CrossRow, ...]
    gpus: str  # "2 GPUs": distinct GPUs among the group's counted times


def _model_href(urls: Urls, key: tuple[str, str], model: str) -> str | None:
    try:
        return urls.model(key, model)
    except KeyError:
        return None


def cross_gpu_page(frame: pd.DataFrame, urls: Urls) -> Page:
    table = cross_gpu(frame)
    groups = []
    for (bench, conf), g in table.groupby(["benchmark", "configuration"], sort=True):
        key = (str(bench), str(conf))
        ranks = [int(r) for r in g["rank"]]
        rows = tuple(CrossRow(f"{r}=" if ranks.count(r) > 1 else str(r), shown(str(m)), _model_href(urls, key, str(m)), int(n),
                              numbers.percent(float(gm)), f"{float(gm):.6f}", numbers.percent(float(md)), numbers.percent(float(b)),
                              str(gpus), f"{int(a)} above 100% left out" if a else "")
                     for r, m, n, gm, md, b, gpus, a in zip(ranks, g["model"], g["problems"], g["sol_geomean"], g["sol_median"],
                                                            g["sol_best"], g["gpus"], g["above"], strict=True))
        names = {n for row in g["gpu_names"] for n in row}
        groups.append(CrossGroup(group_label(key), urls.leaderboard(key), rows, f"{len(names)} GPU{'' if len(names) == 1 else 's'}"))
    return Page(urls.cross_gpu(), "crossgpu.html", {"title": "Cross-GPU board: fraction of speed of light", "crumbs": [HOME],
                                                     "groups": groups, "rule": CROSS_GPU_RULE,
                                                     "above_rule": ABOVE_RULE})
