"""The typed row between the runs table and the pages (issue 47, item 5): `reporter/runrow.py` is what
scripts/runrow.py makes from `frames.COLUMNS` now, so a renamed column renames its key, and a page that reads the
old key by index fails mypy, not silently at run time."""

from __future__ import annotations

import importlib.util
from typing import get_type_hints

from conftest import ROOT
from reporter.frames import COLUMNS
from reporter.render.pages import GRID_CELL_COLUMNS
from reporter.runrow import GridRow, RunRow


def test_the_committed_row_is_the_one_the_script_makes() -> None:
    spec = importlib.util.spec_from_file_location("runrow_script", ROOT / "scripts" / "runrow.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert (ROOT / "reporter" / "runrow.py").read_text(encoding="utf-8") == script.source(), \
        "the runs table's columns changed: run python scripts/runrow.py"


def test_every_column_is_a_key_and_every_grid_cell_reads_a_key() -> None:
    assert list(get_type_hints(RunRow)) == list(COLUMNS)
    assert set(GRID_CELL_COLUMNS) <= set(get_type_hints(GridRow))
