"""One count of "correct" on every page, with its source named, and a suspect run's flags never "0".

examples/kernelbench holds two re-validated runs, one of them correct but suspect (a plain torch.matmul):
its index row, variant page and leaderboard must all say 2 correct, where the index used to say 1.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ROOT, shared_build


@pytest.fixture(scope="module")
def kb_site(request: pytest.FixtureRequest) -> Path:
    from reporter.collect import collect
    from reporter.collect.validation import load_validations
    from reporter.render import build_site

    def make(folder: Path) -> None:
        data = ROOT / "examples" / "kernelbench"
        col = collect(data)
        build_site(col, load_validations(data, col.runs)[0], data, folder / "site")
    return shared_build(request, "kernelbench-example-site", make) / "site"


def cells(html: str, row: str) -> list[str]:
    """The text of each cell of the first table row containing `row`, tags dropped."""
    tr = next(t for t in re.findall(r"<tr>(.*?)</tr>", html, re.S) if row in t)
    return [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]


def test_index_variant_and_leaderboard_count_the_same_correct_runs(kb_site: Path) -> None:
    index = cells((kb_site / "index.html").read_text(), "run_new")
    assert index[5:11] == ["2 2 by us · 0 as recorded", "1", "2", "0", "0", "2"]  # correct (by source), suspect, re-validated, checks incomplete, weak check, flags
    variant = cells(next((kb_site / "variants").glob("*.html")).read_text(), "gpt-4o")
    assert variant[2:6] == ["2 2 by us · 0 as recorded", "1", "2", "2"]
    board = cells((kb_site / "leaderboards" / "kernelbench--run-new--l1.html").read_text(), "gpt-4o")
    assert board[3] == "2 2 by us · 0 as recorded" and board[-2] == "1"  # the suspect is correct (never fast), and suspect


def test_a_suspect_run_counts_its_findings_as_flags(kb_site: Path) -> None:
    model = next((kb_site / "models").glob("*.html")).read_text()
    model = model[model.index('id="runs"'):]  # its table of every run (the flags-by-kind table above names runs too)
    suspect, clean = cells(model, "problem 1"), cells(model, "problem 2")
    assert suspect[1].startswith("suspect") and int(suspect[-1]) >= 1  # the findings behind "suspect" are its flags
    assert clean[1].startswith("correct") and clean[-1] == "0"
    # the problem's file is a line of its own, with a space between: never "problem 11_Square..."
    assert "problem 1</a> <span class=\"sub line\">1_Square_matrix_multiplication_.py</span>" in model
