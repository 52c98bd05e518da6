"""A review's quote must name lines its file has (issue 32's blind round: rv-* survivors)."""

from __future__ import annotations

import pytest

from conftest import minimal_trace
from reporter.collect.audit import _check_quote
from reporter.core.errors import ConfigError
from reporter.core.records import Trace

KERNEL = "line 1\nline 2\nline 3\n"  # three lines
REFERENCE = "r1\nr2\nr3\nr4\nr5\nr6\n"  # six lines


def _trace() -> Trace:
    doc = minimal_trace()
    doc["final_kernel"], doc["reference_source"] = {"source": KERNEL}, REFERENCE
    return Trace.model_validate(doc)


@pytest.mark.parametrize("quote", ["kernel.py:1", "kernel.py:3", "kernel.py:2-3", "reference.py:6", "reference.py:4-6"])
def test_a_quote_inside_its_file_is_taken(quote: str) -> None:
    _check_quote(quote, _trace())


@pytest.mark.parametrize("quote, lines", [("kernel.py:4", "1-3"), ("kernel.py:2-999", "1-3"), ("kernel.py:3-2", "1-3"),
                                          ("kernel.py:5", "1-3"), ("reference.py:7", "1-6"), ("reference.py:5-9", "1-6")])
def test_a_quote_past_its_file_or_backwards_is_refused(quote: str, lines: str) -> None:
    with pytest.raises(ConfigError, match=f"has lines {lines}"):
        _check_quote(quote, _trace())
