"""Verdicts, sources and states are spelled once, in `reporter.core.vocab` (and `core.schema.Verdict`):
code compares with the enums, never with a string that could drift from them."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pandas as pd

from conftest import ROOT
from reporter.core.schema import Verdict
from reporter.core.vocab import GridState, RevalidationState, ReviewStatus, RunVerdict, Source

VOCABULARY = {m.value for enum in (Verdict, RunVerdict, Source, RevalidationState, ReviewStatus, GridState) for m in enum}
HOME = {"vocab.py", "schema.py"}
# Words of other vocabularies that happen to be spelled alike: KernelBench's eval JSON has a `correct`
# key, and reviews.toml a `[[cleared]]` table.
FOREIGN = {("reporter/collect/kernelbench.py", "correct"), ("reporter/collect/reviews.py", "cleared")}


def _compared(tree: ast.AST) -> list[ast.Constant]:
    """String constants that are compared with (`==`, `in`, ...) or matched by pandas (`.eq`, `.isin`)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("eq", "ne", "isin"):
            operands = list(node.args)
        else:
            continue
        keys = {id(n.slice) for o in operands for n in ast.walk(o) if isinstance(n, ast.Subscript)}  # row["correct"]: a column
        found += [c for o in operands for c in ast.walk(o)
                  if isinstance(c, ast.Constant) and isinstance(c.value, str) and id(c) not in keys]
    return found


def spelled_again(root: Path) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        if path.name in HOME:
            continue
        rel = path.relative_to(root.parent).as_posix()
        for c in _compared(ast.parse(path.read_text(encoding="utf-8"))):
            if c.value in VOCABULARY and (rel, c.value) not in FOREIGN:
                out.append(f"{rel}:{c.lineno} {c.value!r}")
    return out


def test_no_module_compares_with_a_vocabulary_string() -> None:
    assert spelled_again(ROOT / "reporter") == []


def test_the_scan_finds_a_spelled_out_verdict(tmp_path: Path) -> None:
    pkg = tmp_path / "reporter"
    pkg.mkdir()
    (pkg / "m.py").write_text('def f(v, frame, row):\n    a = v == "correct" or v in ("timeout", "crashed")\n'
                              '    b = frame["verdict_source"].eq("re-validated") & frame["x"].isin(["no_kernel"])\n'
                              '    return row["correct"] == v, v == RunVerdict.CORRECT, v == "faster than light"\n',
                              encoding="utf-8")
    assert spelled_again(pkg) == ["reporter/m.py:2 'correct'", "reporter/m.py:2 'timeout'", "reporter/m.py:2 'crashed'",
                                  "reporter/m.py:3 're-validated'", "reporter/m.py:3 'no_kernel'"]


def test_members_read_as_their_strings_in_json_and_pandas() -> None:
    assert json.dumps([RunVerdict.CORRECT, Source.RE_VALIDATED]) == '["correct", "re-validated"]'
    col = pd.Series([Source.RECORDED, None, Source.RE_VALIDATED], dtype="string")
    assert col.eq("re-validated").fillna(False).tolist() == [False, False, True] and col[0] == "recorded"
    assert f"v-{GridState.NO_SUBMISSION}" == "v-no_submission"  # a CSS class built from a member
