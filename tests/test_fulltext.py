"""Full-text search (issue 37, item 1): each run's search document holds every turn and kernel version under its run
page's anchor, escaped; the build indexes them with Pagefind when its binary is there, keeps the index when no document
changed, and still builds without it. The browser half (a phrase of seed 000 opens its turn) is in test_browser.py."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from reporter.build import build
from reporter.core.records import Trace, ValidationSettings
from reporter.render import fulltext

FACETS = fulltext.Facets("L1 · problem 1 · m", "m<x>", "kb", "1", "1_P.py", "correct", ("reads_other_results", "weak check"))


pytestmark = pytest.mark.fulltext  # these tests' own builds make the index (conftest.no_fulltext_index)

def test_a_document_holds_every_turn_and_version_under_its_anchor_escaped() -> None:
    trace = Trace.model_validate({"schema_version": 2, "run": {"model": "m"}, "final_kernel": {"source": "final </pre><b>"},
                                  "turns": [{"index": 0, "reasoning": "bank conflicts <script>alert(1)</script>",
                                             "calls": [{"tool": "compile", "arguments": {"kernel_code": "v1 src", "flags": "-O3"},
                                                        "result": {"ok": False, "text": "error: cp.async"}}]},
                                            {"index": 1, "calls": [{"tool": "compile", "arguments": {"kernel_code": "v2 src"}}]}]})
    doc, cut = fulltext.document(trace, FACETS)
    assert not cut and cut.sentence() is None
    assert '<h2 id="turn-0">turn 0</h2><pre>bank conflicts &lt;script&gt;alert(1)&lt;/script&gt;</pre>' in doc
    assert "error: cp.async" in doc and "&quot;flags&quot;: &quot;-O3&quot;" in doc and "v1 src" not in doc.split('id="version-1"')[0]
    assert '<h2 id="version-1">kernel version 1</h2><pre>v1 src</pre>' in doc and 'id="version-2"' in doc
    assert '<h2 id="final">final kernel</h2><pre>final &lt;/pre&gt;&lt;b&gt;</pre>' in doc
    assert '<span data-pagefind-filter="model">m&lt;x&gt;</span>' in doc
    assert '<span data-pagefind-filter="flag">reads_other_results</span><span data-pagefind-filter="flag">weak check</span>' in doc
    assert "<script>" not in doc


def test_one_run_s_search_text_is_bounded_and_the_page_says_what_it_leaves_out(tmp_path: Path) -> None:
    # Issue 49, item 1: a 4 MB base64 tool result cost ~15 s of indexing; a longer one stalled the build.
    import base64
    import random

    from click.testing import CliRunner

    from conftest import minimal_trace, write_trace
    from reporter.cli import main
    blob = base64.encodebytes(random.Random(7).randbytes(300_000)).decode()  # 5,263 lines of 76 characters and one of 12
    hexword = "ab" * 500  # one 1,000-character word
    prose = "warp shuffle " * 100_000  # 1,300,000 characters of words
    trace = Trace.model_validate({"schema_version": 2, "run": {"model": "m"}, "turns": [
        {"index": 0, "reasoning": f"dumping the tensor\n{blob}\nthen {hexword} done",
         "calls": [{"tool": "run", "arguments": {}, "result": {"ok": True, "text": prose}}]}]})
    doc, cut = fulltext.document(trace, FACETS)
    assert (cut.blob_lines, cut.long_words) == (5263, 1)
    assert len(doc) < 1_010_000 and "dumping the tensor" in doc and "then " + "ab" * 32 + "… done" in doc
    assert 300_000 < cut.chars_past_cap < 300_200  # the prose's last 300,000 characters, and the call's few others
    sentence = cut.sentence()
    assert sentence is not None and "5,263 lines of base64 or hex" in sentence and "1 word past their first 64" in sentence
    data = tmp_path / "data"
    doc_json = minimal_trace()
    doc_json["turns"] = [{"index": 0, "reasoning": f"dumping\n{blob}", "calls": []}]
    write_trace(data, "blob", doc_json)
    res = CliRunner().invoke(main, ["build", str(data), str(tmp_path / "site"), "--no-validate"])
    assert res.exit_code == 0, res.output
    page = next((tmp_path / "site" / "runs").glob("*.html")).read_text()
    assert '<p class="note search-cut">Full-text search leaves out 5,263 lines of base64 or hex' in page
    assert blob.splitlines()[100] in next((tmp_path / "site" / "runs").glob("*.turns.js")).read_text()  # shown in full


def _build(data: Path, site: Path) -> None:
    assert build(data, site, ValidationSettings(), validate=False).committed


def test_the_index_is_kept_when_no_document_changed_and_made_again_when_one_did(small_data: Path, tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    if fulltext.binary() is None:
        pytest.fail("the Pagefind binary is missing: pip install 'pagefind[bin]' (a dependency of reporter)")
    calls: list[int] = []
    real = fulltext.run_binary

    def counted(*args: Any) -> None:
        calls.append(1)
        real(*args)
    monkeypatch.setattr(fulltext, "run_binary", counted)
    site = tmp_path / "site"
    _build(small_data, site)
    files = sorted(p.relative_to(site).as_posix() for p in (site / "pagefind").rglob("*") if p.is_file())
    # a few runs: one shard, named by the manifest the search page reads first
    assert "pagefind/00/pagefind.js" in files and "pagefind/00/pagefind-entry.json" in files and calls == [1]
    assert json.loads((site / "pagefind" / "shards.json").read_text()) == {"shards": ["00"]}
    assert not any("ui" in f for f in files)  # Pagefind's own UI bundles are left out
    assert list(fulltext.previous(site)) == ["00"] and fulltext.previous(site)["00"][1] == [f for f in files if "/00/" in f]
    # every document's signature is recorded as it stands, so the next build reads none that did not change
    docs = sorted((site / fulltext.DOCS).glob("*.doc"))
    recorded = fulltext.previous_docs(site)
    assert docs and sorted(recorded) == sorted(p.stem for p in docs)
    for p in docs:
        st = p.stat()
        assert recorded[p.stem] == [st.st_size, st.st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest()]
    # an edit to the index page's inputs only (a problem set's note) is no document's: the index stays
    (small_data / "reviews.toml").write_text("")
    _build(small_data, site)
    assert calls == [1] and sorted(p.relative_to(site).as_posix() for p in (site / "pagefind").rglob("*") if p.is_file()) == files
    trace = small_data / "seed-000-l2-p10" / "trace.json"
    trace.write_text(trace.read_text().replace("The kernel compiled.", "The kernel compiled, bank conflicts aside."))
    _build(small_data, site)
    assert calls == [1, 1]


def test_a_site_builds_without_the_binary(small_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fulltext, "binary", lambda: None)
    site = tmp_path / "site"
    _build(small_data, site)
    assert not (site / "pagefind").exists() and fulltext.previous(site) == {}
    assert "Full-text search is unavailable" in (site / "static").joinpath(
        next(p.name for p in (site / "static").glob("fulltext.*.js"))).read_text()


def test_shards_are_powers_of_two_of_about_shard_runs_runs_and_bounded() -> None:
    assert fulltext.SHARD_RUNS == 128 and fulltext.MAX_SHARDS == 32
    assert [fulltext.shard_count(n) for n in (0, 1, 128, 129, 300, 513, 4096, 4097, 10_000)] == [1, 1, 1, 2, 4, 8, 32, 32, 32]
    slugs = [f"run-{i}" for i in range(300)]
    split = fulltext.shards(slugs)
    assert len(split) <= 4 and sorted(s for members in split.values() for s in members) == sorted(slugs)
    assert all(members == [s for s in slugs if s in set(members)] for members in split.values())  # page order kept
    # one more run (the count stays 4) moves no other run
    grown = fulltext.shards([*slugs, "run-new"])
    assert {s: n for n, ms in grown.items() for s in ms if s != "run-new"} == {s: n for n, ms in split.items() for s in ms}


def test_a_changed_run_indexes_its_shard_again_and_keeps_the_others(small_data: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []
    real = fulltext.build_index

    def counted(tmp: Path, slugs: Any, exe: Any, shard: str, known: Any = None) -> Any:
        calls.append(list(slugs))
        return real(tmp, slugs, exe, shard, known)
    monkeypatch.setattr(fulltext, "build_index", counted)
    monkeypatch.setattr(fulltext, "SHARD_RUNS", 1)  # a shard per run, about
    site = tmp_path / "site"
    _build(small_data, site)
    made = fulltext.previous(site)
    assert len(calls) == len(made) > 1 and json.loads((site / "pagefind" / "shards.json").read_text())["shards"] == sorted(made)
    inodes = {f: (site / f).stat().st_ino for _, files in made.values() for f in files}
    calls.clear()
    trace = small_data / "seed-000-l2-p10" / "trace.json"
    trace.write_text(trace.read_text().replace("The kernel compiled.", "The kernel compiled, bank conflicts aside."))
    _build(small_data, site)
    (again,) = calls  # one shard made again: the one holding seed 000
    assert any("seed-000" in s for s in again)
    after = fulltext.previous(site)
    assert sorted(after) == sorted(made) and len([n for n in made if after[n][0] != made[n][0]]) == 1
    for name, (key, files) in made.items():
        if after[name][0] == key:  # kept: the same files, hard links of the last build's
            assert after[name][1] == files and all((site / f).stat().st_ino == inodes[f] for f in files)
