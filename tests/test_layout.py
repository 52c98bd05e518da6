"""The tree reads in one look: no module over 400 lines, no function over 60, no arithmetic in templates,
and imports that run one way (core -> collect -> validate -> render -> publish -> the CLI) with no circles.

Each check is a function over a folder or a template environment, run on the real tree and, to show it
can fail, on a deliberately broken case.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

import pytest
from jinja2 import DictLoader, Environment, nodes

from conftest import ROOT
from reporter.render.writer import template_env

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
# Jinja's arithmetic nodes; `~` (string concatenation) is `nodes.Concat` and is allowed.
# The floors, lowest first: a module may import only from its own floor or one below it.
FLOORS = {"core": 0, "collect": 1, "validate": 2, "render": 3, "publish": 4}
# Modules (or packages) at the package's top level that are not the application itself (the CLI, `build`,
# `config`, `progress` and the package's `__init__` sit above every stage): the notebook tables read collected runs.
TOP_LEVEL_FLOORS = {"aggregates": 1, "frames": 1, "runrow": 1}
APP_FLOOR = 5
# Floors that may not import one another although the floors allow it: publishing commits what a build wrote,
# read through core.sitefiles, so it needs nothing of the renderer (and cannot drift from a page's data).
APART = {("publish", "render")}
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


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_edges(root: Path) -> dict[str, set[str]]:
    """Each module of the package at `root` and the package's modules it imports: at the top, inside a
    function (a lazy import is still a dependency) or under TYPE_CHECKING alike."""
    paths = {_module_name(p, root): p for p in _modules(root)}
    edges: dict[str, set[str]] = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                target = ".".join([*base, *([node.module] if node.module else [])])
                # `from . import cache` names a module; `from .cache import lookup` names one inside it
                found |= {f"{target}.{a.name}" if f"{target}.{a.name}" in paths else target for a in node.names}
        edges[name] = {m for m in found if m in paths and m != name}
    return edges


def floor_of(module: str) -> int:
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in FLOORS:
        return FLOORS[parts[1]]
    return TOP_LEVEL_FLOORS.get(parts[1], APP_FLOOR) if len(parts) > 1 else APP_FLOOR


def upward_imports(edges: Mapping[str, set[str]]) -> list[str]:
    return sorted(f"{m} -> {t}" for m, targets in edges.items() for t in targets if floor_of(t) > floor_of(m))


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def apart_imports(edges: Mapping[str, set[str]]) -> list[str]:
    return sorted(f"{m} -> {t}" for m, targets in edges.items() for t in targets if (_stage(m), _stage(t)) in APART)


def import_circles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """Every group of modules that import each other, directly or round a loop (Tarjan's components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = stack[stack.index(v):]
            del stack[stack.index(v):]
            if len(group) > 1:
                circles.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(circles)


def test_imports_run_one_way() -> None:
    edges = import_edges(ROOT / "reporter")
    assert "reporter.core.records" in edges and "reporter.render.writer" in edges  # the walk saw the tree
    assert upward_imports(edges) == []


def test_publish_imports_nothing_from_render() -> None:
    edges = import_edges(ROOT / "reporter")
    assert any(m.startswith("reporter.publish.") for m in edges)
    assert apart_imports(edges) == []


def test_no_import_circles() -> None:
    assert import_circles(import_edges(ROOT / "reporter")) == []


def test_the_import_checks_find_upward_imports_and_circles(tmp_path: Path) -> None:
    pkg = tmp_path / "reporter"
    for folder in ("core", "collect", "render", "publish"):
        (pkg / folder).mkdir(parents=True)
        (pkg / folder / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    # core reaches up lazily, inside a function; collect's two modules import each other.
    (pkg / "core" / "rules.py").write_text("def f() -> None:\n    from ..render import page\n", encoding="utf-8")
    (pkg / "render" / "page.py").write_text("from ..core import rules\nfrom reporter.collect.a import x\n", encoding="utf-8")
    (pkg / "collect" / "a.py").write_text("from .b import y\nx = 1\n", encoding="utf-8")
    (pkg / "collect" / "b.py").write_text("from . import a\ny = 2\n", encoding="utf-8")
    (pkg / "cli.py").write_text("from .render import page\n", encoding="utf-8")
    (pkg / "publish" / "pages.py").write_text("def f() -> None:\n    from ..render.page import x\n", encoding="utf-8")
    edges = import_edges(pkg)
    assert apart_imports(edges) == ["reporter.publish.pages -> reporter.render.page"]
    assert edges["reporter.render.page"] == {"reporter.core.rules", "reporter.collect.a"}
    assert upward_imports(edges) == ["reporter.core.rules -> reporter.render.page"]
    assert import_circles(edges) == [["reporter.collect.a", "reporter.collect.b"],
                                     ["reporter.core.rules", "reporter.render.page"]]
