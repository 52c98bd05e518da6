"""The bounded reader (core/safeio.py) and its limits (core/limits.py) exactly at each bound.

Every limit is written here as a number, not read from `limits`: a value that moves, or a comparison that
lets one more (or one fewer) through, fails a test. test_hostile_input.py shows the same limits on whole
builds with hostile traces.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from reporter.core import limits
from reporter.core.errors import CollectError
from reporter.core.safeio import checked_path, parse_json, read_bounded, write_inside


def test_the_limits_are_the_documented_ones() -> None:
    assert (limits.MAX_TRACE_BYTES, limits.MAX_ATTACHMENT_BYTES, limits.MAX_CACHE_FILE_BYTES) == (67_108_864, 268_435_456, 16_777_216)
    assert (limits.MAX_CONFIG_FILE_BYTES, limits.MAX_INDEX_BYTES) == (1_048_576, 536_870_912)
    assert (limits.MAX_JSON_DEPTH, limits.MAX_INT_DIGITS, limits.MAX_CSV_FIELD_CHARS) == (64, 40, 131_072)
    assert limits.describe("MAX_TRACE_BYTES") == "MAX_TRACE_BYTES (67,108,864 bytes)"
    assert limits.describe("NCU_REPORT_TIMEOUT_S") == "NCU_REPORT_TIMEOUT_S (600.0 s)"
    assert limits.describe("MAX_JSON_DEPTH") == "MAX_JSON_DEPTH (64)"


def test_a_file_of_exactly_the_size_limit_is_read_and_one_byte_more_is_refused(tmp_path: Path) -> None:
    exact, over = tmp_path / "exact.toml", tmp_path / "over.toml"
    exact.write_bytes(b"x" * 1_048_576)
    over.write_bytes(b"x" * 1_048_577)
    assert len(read_bounded(exact, tmp_path, "(file)", "MAX_CONFIG_FILE_BYTES")) == 1_048_576
    with pytest.raises(CollectError, match=r"is 1,048,577 bytes, over the limit MAX_CONFIG_FILE_BYTES \(1,048,576 bytes\)"):
        read_bounded(over, tmp_path, "(file)", "MAX_CONFIG_FILE_BYTES")


def test_a_sibling_folder_whose_name_starts_with_the_roots_is_outside_it(tmp_path: Path) -> None:
    root, sibling = tmp_path / "data", tmp_path / "data-old"
    root.mkdir()
    sibling.mkdir()
    (sibling / "trace.json").write_text("{}")
    (root / "trace.json").symlink_to(sibling / "trace.json")
    for path in (sibling / "trace.json", root / "trace.json", root / ".." / "data-old" / "trace.json"):
        with pytest.raises(CollectError, match="leads outside"):
            checked_path(path, root, "(file)", "MAX_TRACE_BYTES")
    (root / "inner.json").write_text("{}")
    assert checked_path(root / "inner.json", root, "(file)", "MAX_TRACE_BYTES") == Path(os.path.realpath(root / "inner.json"))


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_json_nested_exactly_to_the_depth_limit_is_read_and_one_level_more_is_refused() -> None:
    assert parse_json(nested(64), Path("t.json")) is not None
    assert parse_json(json.dumps({"a": json.loads(nested(63))}), Path("t.json"))
    for text in (nested(65), json.dumps({"a": json.loads(nested(64))})):
        with pytest.raises(CollectError, match=r"nested deeper than the limit MAX_JSON_DEPTH \(64\)"):
            parse_json(text, Path("t.json"))


def test_an_integer_of_exactly_the_digit_limit_is_read_with_or_without_its_sign() -> None:
    forty = "9" * 40
    assert parse_json(forty, Path("t.json")) == int(forty)
    assert parse_json(f'{{"n": -{forty}}}', Path("t.json")) == {"n": -int(forty)}
    with pytest.raises(CollectError, match=r"an integer of 41 digits is over the limit MAX_INT_DIGITS \(40\)"):
        parse_json(f"-{forty}9", Path("t.json"))


def test_lone_surrogates_in_keys_and_values_are_replaced() -> None:
    doc = parse_json('{"k\\ud800": ["v\\udfff", {"\\udc00": 1}]}', Path("t.json"))
    assert doc == {"k\ufffd": ["v\ufffd", {"\ufffd": 1}]}
    json.dumps(doc, ensure_ascii=False).encode("utf-8")  # encodable: nothing left that UTF-8 refuses


def test_write_inside_never_writes_through_a_linked_folder(tmp_path: Path) -> None:
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "runs").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(CollectError, match="is a link or not a folder"):
        write_inside(out, ("runs", "page.html"), "x")
    assert list(elsewhere.iterdir()) == []
    assert write_inside(out, ("pages", "a", "page.html"), "y").read_text() == "y"


def test_a_hard_linked_file_in_data_is_refused_and_the_other_runs_build(tmp_path: Path) -> None:
    """A hard link is a second name of an outside file that no path resolution can see (issue 32, item 4)."""
    from conftest import minimal_trace, write_trace
    from reporter.build import build
    from reporter.core.records import ValidationSettings
    outside, data = tmp_path / "home", tmp_path / "data"
    outside.mkdir()
    secret = outside / "notes.json"
    secret.write_text(json.dumps(minimal_trace(model="OUTSIDE-MODEL")))
    write_trace(data, "good", minimal_trace())
    (data / "linked").mkdir()
    os.link(secret, data / "linked" / "trace.json")
    with pytest.raises(CollectError, match="has 2 hard links: another name of the same file may be outside DATA"):
        read_bounded(data / "linked" / "trace.json", data, "(file)", "MAX_TRACE_BYTES")
    assert read_bounded(secret, outside, "(file)", "MAX_TRACE_BYTES", one_name=False)  # a site's own reads allow them
    site = tmp_path / "site"
    summary = build(data, site, ValidationSettings(), validate=False, jobs=1)
    assert summary.runs == 1 and summary.committed
    assert not [p for p in site.rglob("*") if p.is_file() and b"OUTSIDE-MODEL" in p.read_bytes()]
    os.unlink(secret)  # its only name is inside DATA now: an ordinary file
    assert b"OUTSIDE-MODEL" in read_bounded(data / "linked" / "trace.json", data, "(file)", "MAX_TRACE_BYTES")
