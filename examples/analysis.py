"""Analyse a data folder the way a notebook would: python examples/analysis.py [DATA] [--out FIGURE.html]

Loads every run as a pandas table (`reporter.load`), plots fast_p per model for each leaderboard with
plotly, and lists the runs whose recorded and re-measured verdicts disagree. Paste the cells into a
notebook as they are; tests/test_examples.py runs this file as a script.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import plotly.graph_objects as go

import reporter
from reporter import aggregates as ag

# %% Load: one row per run, units in the column names.
parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("data", nargs="?", default=Path(__file__).resolve().parent.parent / "data", type=Path)
parser.add_argument("--out", type=Path, default=Path("fast_p.html"), help="Where to write the plotly figure.")
args = parser.parse_args()
runs = reporter.load(args.data)
print(f"{len(runs)} runs, {runs['model'].nunique()} models, {int(runs['revalidated_verdict'].notna().sum())} re-validated")

# %% The leaderboards, as the site shows them: fast_p over the problem set recorded at import (KernelBench's n;
# where none was recorded, over the attempted problems), with and without the suspect runs counted.
space = reporter.frames.load_universe(args.data)
board = ag.leaderboard(runs, space=space)
columns = ["benchmark", "level", "configuration", "model", "problems", "attempted", "not_attempted", "correct",
           "revalidated", "fast_0.0", "fast_1.0", "fast_1.0_with_suspects", "fast_2.0", "geomean", "geomean_n"]
print(board[columns].to_string(index=False, float_format=lambda x: f"{x:.3f}"))

# %% fast_p per model as a curve: the same group-by at 81 thresholds instead of six.
thresholds = [round(x, 2) for x in np.linspace(0, 4, 81)]
curves = ag.leaderboard(runs, fast_ps=thresholds, space=space)
fig = go.Figure()
for row in curves.to_dict("records"):
    fig.add_scatter(x=thresholds, y=[row[ag.fast_column(p)] for p in thresholds], mode="lines", line={"shape": "hv"},
                    name=f"{row['model']} · {row['benchmark']} L{row['level']} · {row['configuration']}")
fig.update_layout(title="fast_p per model", xaxis_title="speedup threshold p", yaxis_title="fast_p", yaxis_range=[0, 1.02])
fig.write_html(args.out, include_plotlyjs="cdn")
print(f"wrote {args.out}")

# %% Runs whose recorded verdict and our re-validation disagree.
flips = runs.loc[runs["verdicts_disagree"].fillna(False), ["run_id", "model", "recorded_verdict", "revalidated_verdict",
                                                           "recorded_speedup", "speedup_device"]]
print(f"{len(flips)} runs where the recorded and re-measured verdicts disagree:")
print(flips.to_string(index=False) if len(flips) else "(none)")
