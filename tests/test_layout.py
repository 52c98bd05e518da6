"""The tree reads in one look: no module over 400 lines, no function over 60, no arithmetic in templates.

Each check is a function over a folder or a template environment, run on the real tree and, to show it
can fail, on a deliberately broken case.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from jinja2 import DictLoader, Environment, nodes

from conftest import ROOT
from reporter.render.writer import template_env

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
# Jinja's arithmetic nodes; `~` (string concatenation) is `nodes.Concat` and is allowed.
ARITHMETIC = (nodes.Add, nodes.Sub, nodes.Mul, nodes.Div, nodes.FloorDiv, nodes.Mod, nodes.Pow, nodes.Neg, nodes.Pos)


def _modules(root: Path) -> list[Path]:
    return sorted(root.rglob("*.py"))


def long_modules(root: Path, limit: int = MAX_MODULE_LINES) -> list[str]:
    out = []
    for path in _modules(root):
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > limit:
            out.append(f"{path.relative_to(root.parent)}: {n} lines")
    return out


def long_functions(root: Path, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """Every function or method (nested ones too) longer than `limit` lines, decorators not counted."""
    out = []
    for path in _modules(root):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > limit:
                    out.append(f"{path.relative_to(root.parent)}:{node.lineno} {node.name}: {n} lines")
    return out


def _is_number(node: nodes.Node) -> bool:
    return isinstance(node, nodes.Const) and isinstance(node.value, int | float) and not isinstance(node.value, bool)


def _expressions(env: Environment) -> list[tuple[str, nodes.Expr]]:
    """Every expression in every template `env` can load, parsed by Jinja itself (no regex over markup)."""
    assert env.loader is not None
    return [(name, node) for name in env.list_templates()
            for node in env.parse(env.loader.get_source(env, name)[0], name).find_all(nodes.Expr)]


def template_arithmetic(env: Environment) -> list[str]:
    return [f"{name}:{node.lineno} {type(node).__name__}" for name, node in _expressions(env) if isinstance(node, ARITHMETIC)]


def template_thresholds(env: Environment) -> list[str]:
    """Comparisons with a number: a threshold is a rule, and rules are decided in Python (`checks`)."""
    return [f"{name}:{node.lineno} comparison with a number" for name, node in _expressions(env)
            if isinstance(node, nodes.Compare) and any(_is_number(x) for x in [node.expr, *(o.expr for o in node.ops)])]


def test_no_module_is_over_400_lines() -> None:
    assert long_modules(ROOT / "reporter") == []


def test_no_function_is_over_60_lines() -> None:
    assert long_functions(ROOT / "reporter") == []


def test_templates_hold_no_arithmetic() -> None:
    assert template_arithmetic(template_env()) == []


def test_templates_decide_no_thresholds() -> None:
    assert template_thresholds(template_env()) == []


def test_the_size_checks_find_what_is_too_long(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(60))
    (pkg / "long.py").write_text(f"@decorator\ndef long() -> None:\n{body}\n\n\nclass C:\n    def short(self) -> None:\n"
                                 f"        pass\n", encoding="utf-8")
    (pkg / "ok.py").write_text("def f() -> None:\n" + "\n".join(f"    y{i} = {i}" for i in range(59)) + "\n", encoding="utf-8")
    assert long_functions(pkg) == ["pkg/long.py:2 long: 61 lines"]
    assert long_functions(pkg, limit=61) == []
    assert long_modules(pkg, limit=65) == ["pkg/long.py: 67 lines"]
    assert long_modules(pkg) == []


@pytest.mark.parametrize(("source", "found"), [
    ("{{ a + b }}", ["t.html:1 Add"]),
    ("{{ (a - 1) * 100 }}", ["t.html:1 Mul", "t.html:1 Sub"]),
    ("{% set pct = a / b %}{{ pct }}", ["t.html:1 Div"]),
    ("{{ a // 2 }} {{ a % 2 }} {{ a ** 2 }} {{ -a }}", ["t.html:1 FloorDiv", "t.html:1 Mod", "t.html:1 Pow", "t.html:1 Neg"]),
    ("{% if speedup > 1.0 %}faster{% endif %}", ["t.html:1 comparison with a number"]),
    ("{{ 'x' if 0 == n else 'y' }}", ["t.html:1 comparison with a number"]),
    # allowed: concatenation, tests, filters, comparisons of strings and of precomputed values
    ("{{ rel ~ 'runs/' ~ slug }} {% if x is none %}-{% endif %} {{ n|num }} {% if a == b %}{% endif %}", []),
    ("{% if state == 'correct' and flag is true %}{{ 'a' - 'b' if false }}{% endif %}", ["t.html:1 Sub"]),
])
def test_the_template_check_finds_arithmetic(source: str, found: list[str]) -> None:
    env = Environment(loader=DictLoader({"t.html": source}))
    env.filters["num"] = str
    assert sorted(template_arithmetic(env) + template_thresholds(env)) == sorted(found)
