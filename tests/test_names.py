"""Collision-free slugs: every distinct name gets its own page, whatever its case or punctuation."""

from __future__ import annotations

import json
import os
import string
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import minimal_trace, write_trace
from reporter.collect import collect
from reporter.core.names import KEY_SEPARATOR, MAX_SLUG_BYTES, slug, unique_slugs

SLUG_CHARS = set(string.ascii_lowercase + string.digits + ".-_")


def test_names_that_differ_only_in_case_or_punctuation_get_different_slugs() -> None:
    for names in (["GPT 4", "gpt-4", "GPT_4"], ["A", "a", "a-1"], ["a-b-1", "a-b", "a/b"]):
        slugs = unique_slugs(names)
        assert len(set(slugs.values())) == 3, slugs


def test_a_name_that_is_already_its_slug_keeps_it_and_others_get_a_hash() -> None:
    slugs = unique_slugs(["gpt-4", "GPT 4"])
    assert slugs["gpt-4"] == "gpt-4"
    assert slugs["GPT 4"].startswith("gpt-4_") and len(slugs["GPT 4"]) == len("gpt-4_") + 8


def test_slugs_are_stable_and_an_unrelated_name_renames_nothing() -> None:
    names = ["GPT 4", "gpt-4", "GPT_4", "Kimi-K2.6"]
    first = unique_slugs(names)
    assert unique_slugs(reversed(names)) == first
    more = unique_slugs([*names, "claude", "Claude 3", "x" * 500])
    assert {n: more[n] for n in names} == first


def test_paths_keep_every_part() -> None:
    slugs = unique_slugs(["level2/8_Matmul.py", "other/8_Matmul.py"])
    assert slugs["level2/8_Matmul.py"] == "level2-8-matmul.py"
    assert slugs["other/8_Matmul.py"] == "other-8-matmul.py"


def test_a_very_long_name_stays_short_and_two_long_names_stay_apart() -> None:
    a, b = "model-" + "x" * 1000, "model-" + "x" * 999 + "y"
    slugs = unique_slugs([a, b, "é" * 300])
    assert slugs[a] != slugs[b]
    assert all(len(s.encode()) <= MAX_SLUG_BYTES < 200 for s in slugs.values())
    assert len(slug("ü" * 10_000).encode()) <= MAX_SLUG_BYTES


def test_composite_keys_are_unique_as_a_whole() -> None:
    keys = [("kb", "a-b", "m"), ("kb", "a", "b-m"), ("KB", "a-b", "m")]
    slugs = unique_slugs(keys)
    assert slugs[keys[1]] == "kb--a--b-m" and len(set(slugs.values())) == 3


def test_a_key_separator_inside_a_part_moves_no_boundary() -> None:
    keys = [("a", "b" + KEY_SEPARATOR + "c"), ("a" + KEY_SEPARATOR + "b", "c"), ("a", "b", "c")]
    slugs = unique_slugs(keys)
    assert len(set(slugs.values())) == 3 and slugs[("a", "b", "c")] == "a--b--c"
    assert unique_slugs([("", "")], shown=lambda p: p or "unknown") == {("", ""): "unknown--unknown"}
    both = unique_slugs([("", ""), ("unknown", "unknown")], shown=lambda p: p or "unknown")
    assert len(set(both.values())) == 2


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=300), max_size=20))
def test_any_names_get_distinct_safe_bounded_slugs(names: list[str]) -> None:
    slugs = unique_slugs(names)
    assert set(slugs) == set(names)
    assert len(set(slugs.values())) == len(slugs)
    for s in slugs.values():
        assert s and s[0] not in "_." and set(s) <= SLUG_CHARS and len(s.encode()) <= MAX_SLUG_BYTES


def test_runs_whose_names_collide_get_one_page_each(tmp_path: Path) -> None:
    for name in ("A", "a", "a-1", "a-b", "a b"):
        write_trace(tmp_path, name, minimal_trace())
    (tmp_path / "a.trace.json").write_text(json.dumps(minimal_trace()), encoding="utf-8")
    runs = collect(tmp_path).runs
    ids = sorted(r.run_id for r in runs)
    assert ids == ["A", "a", "a b", "a-1", "a-b", "a.trace.json"]  # ids stay the folder paths
    assert len({r.slug for r in runs}) == 6
    assert next(r.slug for r in runs if r.run_id == "a") == "a"


def test_page_maps_are_in_the_same_order_whatever_the_hash_seed() -> None:
    """The leaderboards' input hash is made from the Urls maps: in set order it changed from process to
    process, so every build re-rendered every leaderboard."""
    import subprocess
    import sys
    snippet = ("from reporter.render.urls import Urls; import dataclasses; "
               "u = Urls.build(['b/run', 'a/run', 'c'], [('kb', 'x'), ('kb', 'a'), ('pc', 'm')], "
               "[(('kb', 'x'), 'gpt'), (('kb', 'a'), 'claude'), (('pc', 'm'), 'o3')], "
               "[(1, 2, 'b.py'), (1, 1, 'a.py'), (2, 9, 'z.py')]); print(repr(dataclasses.astuple(u)))")
    outs = {subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in (1, 2, 3)}
    assert len(outs) == 1
    runs, groups, models, problems = eval(outs.pop())  # our own repr of str and int tuples
    assert list(runs) == ["a/run", "b/run", "c"]
    assert list(models) == [(("kb", "a"), "claude"), (("kb", "x"), "gpt"), (("pc", "m"), "o3")]
    assert list(groups) == [("kb", "a"), ("kb", "x"), ("pc", "m")]
    assert list(problems) == [(1, 1, "a.py"), (1, 2, "b.py"), (2, 9, "z.py")]
