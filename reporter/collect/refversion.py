"""Whether a run's reference is the version of its problem that the run was scored with (issue 45, item 2).

KernelBench edits its problem files (L2 P14 was 128x10x20 in early 2025 and is 1024x8192x8192 at 423217d), and
a problems folder is often a checkout of today's files: a run imported with it gets a reference it was never
timed or checked against. Three kinds of evidence, each read from the trace alone (no code runs):

- **the snapshot table** (`kernelbench-versions.json`, made by `scripts/kernelbench_versions.py`): the sha256 of
  each KernelBench problem file in known versions. A run whose rule set names the snapshot its era was scored on
  (`Rules.problems`: kernelbench-2025, the public leaderboard, used the early-2025 files) and whose reference is
  not that snapshot's file is certainly judged against another reference; the flag names both versions.
- **the prompt**, where the harness kept it: the model was given a reference, and a prompt that sets the
  reference's shapes to other values says the file is not the one the model saw.
- **the kernel's own constants**: LLM-written files often copy the problem's module-level shapes (`batch_size =
  16`); a shared name with another value says the kernel was written for another version. On the 343 dev-corpus
  kernels this fires on none with the early-2025 files and on 50 with today's.

Each is a warning flag on `reference_source`, with its evidence: the recorded times and verdict stay, but a
reader learns they may be for another reference, and re-validation may check against a problem the run never had.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..core.checks import Flag
from ..core.records import Trace
from ..core.rules import rules_named

TABLE = Path(__file__).with_name("kernelbench-versions.json")
FIELD = "reference_source"
MAX_SHOWN = 4  # constants named in one message
Number = int | float
Value = Number | tuple["Value", ...]


@dataclass(frozen=True)
class Snapshot:
    """One known version of KernelBench's problem files: "level/problem id" -> the file's sha256."""

    name: str
    title: str
    date: str
    files: Mapping[str, str]

    def label(self) -> str:
        return f"{self.title}" + (f" ({self.date})" if self.date and self.date not in self.title else "")


@cache
def snapshots() -> Mapping[str, Snapshot]:
    """The shipped table (package data, never DATA: configuration is not taken from the runs)."""
    doc = json.loads(TABLE.read_text(encoding="utf-8"))
    return {name: Snapshot(name, s["title"], s.get("date", ""), dict(s["files"])) for name, s in doc["snapshots"].items()}


def _number(node: ast.expr, depth: int = 0) -> Value | None:
    """A module-level shape as a number: literals and small arithmetic on them (`16384 * 2`), nothing else."""
    if depth > 8:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _number(node.operand, depth + 1)
        return -v if isinstance(v, int | float) else None
    if isinstance(node, ast.Tuple | ast.List):
        items = [_number(e, depth + 1) for e in node.elts]
        return tuple(i for i in items if i is not None) if all(i is not None for i in items) else None
    if isinstance(node, ast.BinOp):
        a, b = _number(node.left, depth + 1), _number(node.right, depth + 1)
        if not isinstance(a, int | float) or not isinstance(b, int | float):
            return None
        try:  # `65536.0 ** 64` overflows, `(-8) ** 0.5` is complex: neither is a shape
            if isinstance(node.op, ast.Pow):
                v = a**b if abs(b) <= 64 and abs(a) <= 2**16 else None
                return v if isinstance(v, int | float) else None
            ops = {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}
            if type(node.op) in ops:
                return ops[type(node.op)]
            return a // b if isinstance(node.op, ast.FloorDiv) and b else a / b if isinstance(node.op, ast.Div) and b else None
        except (OverflowError, ValueError, ZeroDivisionError):
            return None
    return None


def constants(source: str | None) -> dict[str, Value]:
    """The module-level `name = number` assignments of a Python source; {} when it does not parse."""
    if not source:
        return {}
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    out: dict[str, Value] = {}
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else \
            node.target if isinstance(node, ast.AnnAssign) and node.value is not None else None
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if isinstance(target, ast.Name) and value is not None and (v := _number(value)) is not None:
            out[target.id] = v
    return out


_PROMPT_CONST = re.compile(r"^[ \t]*([A-Za-z_]\w*)[ \t]*=[ \t]*([^\n#]+)", re.MULTILINE)


def _prompt_constants(prompt: str, names: set[str]) -> dict[str, Value]:
    """The values a prompt's code sets for `names` (its first assignment of each, read as a module line)."""
    out: dict[str, Value] = {}
    for m in _PROMPT_CONST.finditer(prompt):
        if m.group(1) in names and m.group(1) not in out:
            out.update(constants(f"{m.group(1)} = {m.group(2).strip()}"))
    return out


def _differ(ours: Mapping[str, Value], theirs: Mapping[str, Value]) -> list[str]:
    return [f"{n} = {theirs[n]!r} (the reference: {ours[n]!r})" for n in sorted(set(ours) & set(theirs)) if ours[n] != theirs[n]]


def _listed(items: list[str]) -> str:
    return "; ".join(items[:MAX_SHOWN]) + (f"; and {len(items) - MAX_SHOWN} more" if len(items) > MAX_SHOWN else "")


def _snapshot_flag(trace: Trace, table: Mapping[str, Snapshot]) -> Flag | None:
    run = trace.run
    try:
        rules = rules_named(run.rules) if run.rules else None
    except KeyError:
        return None
    if rules is None or not rules.problems or (want := table.get(rules.problems)) is None:
        return None
    if trace.reference_source is None or run.level is None or run.problem_id is None \
            or not (run.benchmark or "").lower().startswith("kernelbench"):
        return None
    key = f"{run.level}/{run.problem_id}"
    scored = want.files.get(key)
    sha = hashlib.sha256(trace.reference_source.encode("utf-8", "surrogatepass")).hexdigest()
    if scored is None or sha == scored:
        return None
    found = [s for s in table.values() if s.files.get(key) == sha]
    this = f"from {found[0].label()}" if found else "from no known version"
    return Flag(FIELD, "warn", f"not the problem file this run was scored with: {rules.name} runs were given "
                               f"{want.label()} (sha256 {scored[:12]}…), and this reference is {this}. Its recorded "
                               "times and verdict are for the other file")


def reference_flags(trace: Trace, table: Mapping[str, Snapshot] | None = None) -> list[Flag]:
    """A warning on `reference_source` where the trace itself says the reference may not be the one scored; the
    snapshot table first (certain), then the prompt (certain), then the kernel's constants (a strong hint).
    Runs outside the collector's per-run guard, so a failure here is this run's flag, never the site's."""
    try:
        return _reference_flags(trace, table)
    except Exception as exc:  # noqa: BLE001 - one run's text must never stop the others
        return [Flag(FIELD, "warn", f"reporter could not check which version of its problem this reference is "
                                    f"({type(exc).__name__}); please report this as a bug")]


def _reference_flags(trace: Trace, table: Mapping[str, Snapshot] | None) -> list[Flag]:
    if trace.reference_source is None:
        return []
    if (flag := _snapshot_flag(trace, snapshots() if table is None else table)) is not None:
        return [flag]
    ref = constants(trace.reference_source)
    if trace.prompt and ref and (given := _differ(ref, _prompt_constants(trace.prompt, set(ref)))):
        return [Flag(FIELD, "warn", "the prompt the model was given sets this problem's shapes otherwise: "
                                    f"{_listed(given)}. The reference is not the version the model saw")]
    kernel = constants(trace.final_kernel.source) if trace.final_kernel is not None else {}
    if ref and (differ := _differ(ref, kernel)):
        return [Flag(FIELD, "warn", f"the kernel's source sets {_listed(differ)}: it was written for another "
                                    "version of this problem, so this reference may not be the one the run was "
                                    "scored with (a problems folder of another KernelBench version?)")]
    return []


def import_note(folder: Path, written: list[Path], out: Path) -> str | None:
    """One message for a run folder just imported: how many of its kernels' references may not be the version
    scored, with the first one's evidence and what to do; None when none is."""
    from ..core.errors import CollectError
    from .read import read_document, validate_document

    flagged: list[tuple[Trace, Flag]] = []
    for path in written:
        try:
            trace = validate_document(read_document(path, out), path)
        except CollectError:
            continue  # the build names it
        flagged += [(trace, f) for f in reference_flags(trace)]
    if not flagged:
        return None
    trace, first = flagged[0]
    return (f"{folder}: {len(flagged)} of {len(written)} kernels have a reference that may not be the version of its "
            f"problem they were scored with (L{trace.run.level} P{trace.run.problem_id}: {first.message}). Their pages "
            "say so; to judge them against the right files, point --problems at the problem files of the version "
            "these runs were scored on (the public leaderboard's runs: KernelBench's early-2025 files)")
