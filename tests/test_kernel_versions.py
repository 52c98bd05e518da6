"""One kernel-version rule for the run page and its lazy chunk: what the page calls version n is the
chunk's `versions[n - 1]`, and a call's "kernel version n" link names the same n (A, B, A is 3 versions)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from conftest import minimal_trace
from reporter.core.records import Trace
from reporter.render.evolution import kernel_versions
from reporter.render.lazy import CHUNK_CALLBACK, chunk_js

A, B = "__global__ void a() {}\n", "__global__ void b() {}\n// faster\n"


def trace(*codes: str) -> Trace:
    doc: dict[str, Any] = minimal_trace()
    doc["turns"] = [{"index": i, "calls": [{"tool": "compile_kernel", "arguments": {"kernel_code": code},
                                            "result": {"ok": True, "text": f"built {i}"}}]} for i, code in enumerate(codes)]
    return Trace.model_validate(doc)


def chunk(t: Trace) -> dict[str, Any]:
    js = chunk_js(t)
    doc: dict[str, Any] = json.loads(js.removeprefix(f"{CHUNK_CALLBACK}(").removesuffix(");\n"))
    return doc


@pytest.mark.parametrize(("codes", "expected"), [((A, B, A), [A, B, A]), ((A, A, B), [A, B]), ((A, B, B, A, A), [A, B, A])])
def test_the_page_and_the_chunk_number_versions_alike(codes: tuple[str, ...], expected: list[str]) -> None:
    t = trace(*codes)
    page = kernel_versions(t)
    data = chunk(t)
    assert [v.source for v in page] == expected == data["versions"]
    assert [v.number for v in page] == list(range(1, len(expected) + 1))
    # each call's link names the version the page lists for that turn
    links = [int(m) for html in data["turns"] for m in re.findall(r'data-version="(\d+)"', html)]
    assert all(1 <= n <= len(data["versions"]) for n in links) and links[-1] == len(expected) == page[-1].number


def test_a_kernel_sent_again_after_another_is_a_new_version_diffed_against_the_one_before() -> None:
    t = trace(A, B, A)
    third = kernel_versions(t)[2]
    assert (third.number, third.previous, third.turn) == (3, 2, 2)
    assert (third.added, third.removed) == (1, 2)  # against B, not against itself
    data = chunk(t)
    assert data["versions"][third.previous - 1] == B  # what lazy.js diffs version 3 against
