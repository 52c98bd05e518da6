"""Property: whatever values a schema-shaped trace holds, the site builds and every readable run is on it.

Traces are drawn from the trace format's JSON Schema (`reporter schema`), and cached results from the
validation result's, with values pushed to the extremes: integers of 2^63 and 10^39, 0, negatives, NaN
and infinities, strings of 100,000 characters, the key separator, "unknown", right-to-left marks, lone
surrogates. Deterministic (derandomized) and bounded, so it passes the same way on a busy machine.
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import minimal_trace, write_trace
from reporter.build import build
from reporter.collect import collect
from reporter.core import cache
from reporter.core.errors import replace_surrogates
from reporter.core.records import Trace, ValidationResult, ValidationSettings

EXTREME_INTS = [0, 1, -1, 2**31, 2**63 - 1, 2**63, -(2**63) - 1, 10**39, -(10**39)]
EXTREME_FLOATS = [0.0, -0.0, -1.5, 1e-300, 5e-324, 1e308, -1e308, math.nan, math.inf, -math.inf, 1e39]
ODD_TEXT = ["", " ", "unknown", "\x1f", "c\x1fl2", "a/b", "../../x", "\u202eevil", "🙂" * 3, "\ud800", "<b>x</b>",
            "x" * 100_000, "NaN", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0"]
PROPERTY = settings(max_examples=10, derandomize=True, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

ints = st.sampled_from(EXTREME_INTS) | st.integers(-5, 5)
floats = st.sampled_from(EXTREME_FLOATS) | st.floats(allow_nan=True, allow_infinity=True)
texts = st.sampled_from(ODD_TEXT) | st.text(max_size=12)
anything = st.recursive(st.none() | st.booleans() | ints | floats | texts,
                        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3), max_leaves=6)


def from_schema(node: dict[str, Any], defs: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values that fit a (pydantic) JSON Schema node, with every leaf drawn from the extremes above."""
    if "$ref" in node:
        return st.deferred(lambda: from_schema(defs[node["$ref"].rsplit("/", 1)[-1]], defs, depth + 1))
    if "anyOf" in node:
        return st.one_of([from_schema(n, defs, depth) for n in node["anyOf"]])
    if "const" in node:
        return st.just(node["const"])
    if "enum" in node:
        return st.sampled_from(node["enum"]) | texts
    kind = node.get("type")
    if kind == "object" and "properties" in node:
        required = set(node.get("required", []))
        props = {k: from_schema(v, defs, depth) for k, v in node["properties"].items()}
        return st.fixed_dictionaries({k: v for k, v in props.items() if k in required},
                                     optional={k: v for k, v in props.items() if k not in required})
    if kind == "array":
        return st.lists(from_schema(node.get("items", {}), defs, depth + 1), max_size=3 if depth < 3 else 1)
    simple = {"integer": ints, "number": floats | ints, "string": texts, "boolean": st.booleans(), "null": st.none()}
    return simple.get(kind, anything)  # type: ignore[arg-type]


def schema_strategy(model: type[Trace] | type[ValidationResult]) -> st.SearchStrategy[Any]:
    schema = model.model_json_schema()
    return from_schema(schema, schema.get("$defs", {}))


traces = schema_strategy(Trace)
results = schema_strategy(ValidationResult)


def _store_result(data: Path, doc: dict[str, Any], result: dict[str, Any]) -> None:
    """A cached result for the trace's kernel, where it has one (so the recorded-vs-measured comparisons run)."""
    fk, ref = doc.get("final_kernel"), doc.get("reference_source")
    if not isinstance(fk, dict) or not isinstance(fk.get("source"), str) or not isinstance(ref, str):
        return
    # keyed as the collector keys it: lone surrogates read as U+FFFD
    folder = cache.entry_dir(data, cache.content_key(replace_surrogates(fk["source"]), replace_surrogates(ref)))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "r.json").write_text(json.dumps(result), encoding="utf-8", errors="surrogatepass")


@PROPERTY
@given(st.lists(st.tuples(traces, results), min_size=1, max_size=4))
def test_any_schema_shaped_traces_build_and_every_readable_run_is_shown(cases: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        write_trace(data, "good", minimal_trace())
        for i, (doc, result) in enumerate(cases):
            folder = data / f"case-{i}"
            folder.mkdir(parents=True)
            (folder / "trace.json").write_text(json.dumps(doc), encoding="utf-8", errors="surrogatepass")
            _store_result(data, doc, result)
        readable = {r.run_id for r in collect(data).runs}
        summary = build(data, Path(tmp) / "site", ValidationSettings(), validate=False, jobs=1)
        assert summary.committed
        assert not [p for p in summary.problems if p.field in ("(internal)", "(page)")], summary.problems
        status = json.loads((Path(tmp) / "site" / ".reporter-status.json").read_text())
        assert "good" in readable and readable <= set(status["runs"])
        for run in status["runs"].values():
            assert (Path(tmp) / "site" / run["files"][0]).is_file()
