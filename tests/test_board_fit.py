"""Every leaderboard column is in view at 1280 px in real Chromium: no table wider than its box (issue 23).

The widest boards we make: the sample data (a board mixing recorded and re-validated rows, with the
torch.compile column; a board with turns and tokens) and a KernelBench sweep with long model names,
suspects (a second line in every fast_p cell), not-attempted problems and a torch.compile baseline."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_kernelbench_scoring import CLEAN, NO_KERNEL, result, run_folder, sweep

from conftest import DATA, launch_chromium, without_charts
from reporter.cli import main

playwright = pytest.importorskip("playwright.sync_api")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [pytest.mark.browser, pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")]
LONG = ("gemini-2.5-pro-preview-06-05-thinking", "claude-opus-4-1-20250805-extended", "deepseek-r1-distill-llama-70b")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fit")
    data = root / "data"
    shutil.copytree(DATA, data)
    kb = sweep(root / "kb")
    for i, model in enumerate(LONG):
        run_folder(kb, f"long-{i}", model, 1, {1: CLEAN, 2: NO_KERNEL, 3: CLEAN},
                   {1: result(True, 0.5, 2.0), 2: result(True, 0.1, 2.0), 3: result(False, 1.0, 2.0)})
    compile_base = {"level1": {f: {"mean": 1.5} for f in ("1_A.py", "2_B.py", "3_C.py", "4_D.py", "5_E.py")},
                    "level2": {f: {"mean": 1.5} for f in ("1_F.py", "2_G.py")}}
    (kb / "compile.json").write_text(json.dumps(compile_base))
    res = CliRunner().invoke(main, ["import", "kernelbench", str(kb / "runs"), "--problems", str(kb / "problems"),
                                    "--baseline", str(kb / "baseline_time_torch.json"), "--baseline-compile",
                                    str(kb / "compile.json"), "--configuration", "long-names", "--out", str(data / "kb")])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, ["build", str(data), str(root / "site"), "--no-validate"])
    assert res.exit_code == 0, res.output
    return root / "site"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with playwright.sync_playwright() as p:
        b = launch_chromium(p, CHROMIUM, ["--no-sandbox", "--disable-gpu", "--no-first-run"])
        yield b
        b.close()


WIDTHS = """() => [...document.querySelectorAll('div[data-basis]:not([hidden]) .scroll')].map(
    d => [d.scrollWidth, d.clientWidth, d.querySelectorAll('thead th').length])"""


def test_every_leaderboard_column_fits_at_1280(site: Path, browser: object) -> None:
    pages = sorted(p for p in (site / "leaderboards").glob("*.html") if not p.name.endswith("--revalidated.html"))
    assert len(pages) >= 6
    page = browser.new_page(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    without_charts(page)  # tables are measured, not charts
    widest = 0
    for path in pages:
        page.goto(path.as_uri())
        tables = page.evaluate(WIDTHS)
        assert tables, path.name
        for scroll, box, columns in tables:
            assert scroll <= box, f"{path.name}: table {scroll} px wide in a {box} px box ({columns} columns)"
            widest = max(widest, columns)
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280, path.name
    assert widest >= 16  # the compile column, turns and tokens were all there somewhere
    long_board = (site / "leaderboards" / "kernelbench--long-names--l1.html").read_text()
    assert all(m in long_board for m in LONG) and "w/ susp." in long_board and "vs torch.compile" in long_board
