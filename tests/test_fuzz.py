"""Fuzzing collect with Hypothesis: whatever a trace or attachment holds, the answer is a run or one message.

`benchmarks/fuzz_collect.py` does the same at scale (1,000+ mutated traces through collect and a site build).
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import minimal_trace
from reporter.collect import collect
from reporter.collect.redact import Redactor
from reporter.core.errors import CollectError
from reporter.core.safeio import parse_json

FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=50)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                           max_leaves=20)
TRACE_FIELDS = ["run", "turns", "final_kernel", "reference_source", "prompt", "metrics", "attachments", "harness_metadata"]


def _collect_one(text: str | bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "r"
        folder.mkdir()
        (folder / "trace.json").write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
        col = collect(Path(tmp))
        assert len(col.runs) + len(col.errors) == 1
        assert all(e.field != "(internal)" for e in col.errors), [str(e) for e in col.errors]
        for r in col.runs:  # everything kept must be writable as UTF-8
            r.trace.model_dump_json().encode("utf-8")


@FUZZ
@given(st.sampled_from(TRACE_FIELDS), json_values)
def test_any_value_in_any_top_level_field_is_a_run_or_one_message(name: str, value: Any) -> None:
    doc = minimal_trace()
    doc[name] = value
    _collect_one(json.dumps(doc))


@FUZZ
@given(st.sampled_from([*sorted(minimal_trace()["run"]), "turns_used", "max_turns", "model"]), json_values)
def test_any_value_in_any_run_field(name: str, value: Any) -> None:
    doc = minimal_trace()
    doc["run"][name] = value
    _collect_one(json.dumps(doc))


@FUZZ
@given(st.binary(max_size=300))
def test_any_bytes_as_a_trace(raw: bytes) -> None:
    _collect_one(b'{"schema_version": 2, "run": {}, "turns": [' + raw)


@FUZZ
@given(st.text(max_size=400))
def test_parse_json_answers_a_document_or_a_collect_error(text: str) -> None:
    with contextlib.suppress(CollectError):
        parse_json(text, Path("t.json"))


@FUZZ
@given(st.lists(st.sampled_from(["ID", "Kernel Name", "gpu__time_duration.sum", "x"]), min_size=1, max_size=4),
       st.lists(st.text(max_size=20), min_size=1, max_size=4), st.sampled_from(["ncu_raw_csv", "ncu_details_csv"]))
def test_any_ncu_csv_is_parsed_or_one_message(header: list[str], row: list[str], kind: str) -> None:
    doc = minimal_trace()
    doc["attachments"] = [{"kind": kind, "role": "kernel", "path": "k.csv"}]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "r"
        folder.mkdir()
        (folder / "trace.json").write_text(json.dumps(doc), encoding="utf-8")
        cells = ",".join(json.dumps(c) for c in row)
        (folder / "k.csv").write_text('"ID","Process ID",' + ",".join(f'"{h}"' for h in header) + "\n" + cells + "\n",
                                      encoding="utf-8", errors="surrogatepass")
        (run,) = collect(Path(tmp)).runs
        assert all(isinstance(e, CollectError) for e in run.attachment_errors)


KEY = st.from_regex(r"(sk-proj-|ghp_|hf_)[A-Za-z]{10}[0-9]{6}[A-Za-z0-9]{20}|AKIA[0-9A-Z]{16}", fullmatch=True)


@FUZZ
@given(st.text(max_size=200), KEY, st.text(max_size=200))
def test_a_key_anywhere_in_any_text_is_redacted(before: str, key: str, after: str) -> None:
    counts: Counter[str] = Counter()
    out = Redactor().text(f"{before} {key} {after}", counts)
    assert key not in out and sum(counts.values()) >= 1
