"""examples/analysis.py runs as a script on the sample data, as a notebook user would run its cells."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DATA, ROOT
from reporter.tables import load


@pytest.mark.slow  # minutes of builds on two cores: CI runs it (-m slow), the README's command leaves it out
def test_analysis_script(tmp_path: Path) -> None:
    out = tmp_path / "fast_p.html"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "analysis.py"), str(DATA), "--out", str(out)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    runs = load(DATA)
    flips = runs.loc[runs["recorded_verdict"].notna() & runs["revalidated_verdict"].notna()
                     & (runs["recorded_verdict"] != runs["revalidated_verdict"]), "run_id"]
    listed = proc.stdout.split("verdicts disagree:")[1]
    assert len(flips) >= 1 and all(run_id in listed for run_id in flips)
    assert f"{len(flips)} runs where" in proc.stdout
    # one fast_p curve per leaderboard row (model x benchmark x level x configuration)
    spec = json.loads(re.search(r"Plotly\.newPlot\(\s*\"[^\"]+\",\s*(\[.*?\]),\s*\{", out.read_text(), re.S).group(1))  # type: ignore[union-attr]
    groups = runs.dropna(subset=["level", "problem_id"]).groupby(["benchmark", "level", "configuration", "model"]).ngroups
    assert len(spec) == groups and all(max(t["y"]) <= 1 for t in spec)
