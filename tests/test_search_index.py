"""The search index, sharded by model: one JSONP file per model with its rows and its own prebuilt MiniSearch
index, and a manifest naming them; a rebuild rewrites only the shards whose rows changed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from reporter.cli import main
from reporter.core.sitefiles import owned_files
from reporter.render import boards, search

ROOT = Path(__file__).resolve().parent.parent
FIELDS = '["href","title","problem","model","group","verdict","source","speedup","flags","kernels","order"]'
SEARCHED = '["problem","model","kernels","verdict"]'
SAMPLE_SHARDS = ["search/demo-alpha.js", "search/demo-beta.js", "search/demo-gamma.js", "search/kimi-k2.6.js",
                 "search/unknown.js"]


def row(href: str, model: str, kernels: str = "", problem: str = "1_A.py") -> search.IndexRow:
    return search.IndexRow(href, "L1 · problem 1", problem, model or "(not recorded)", "popcorn", "correct", "recorded",
                           1.5, 0, kernels, (0, "popcorn", 0, "cfg", model or "~", 1, 1, href))


def test_one_shard_per_model_named_by_its_unique_slug() -> None:
    rows = [("GPT-5.1", row("runs/a.html", "GPT-5.1")), ("gpt 5.1", row("runs/b.html", "gpt 5.1")),
            ("", row("runs/c.html", "")), ("unknown", row("runs/d.html", "unknown")),
            ("Kimi-K2.6", row("runs/f.html", "Kimi-K2.6")), ("Kimi-K2.6", row("runs/e.html", "Kimi-K2.6"))]
    got = search.shards(rows)
    # Two spellings of one slug both carry a hash of the name; a model called "unknown" keeps its plain
    # slug and the runs with no model recorded get the suffixed one.
    assert [(s.path, [r.href for r in s.rows]) for s in got] == [
        ("search/gpt-5.1_0dba72b1.js", ["runs/b.html"]), ("search/gpt-5.1_44700474.js", ["runs/a.html"]),
        ("search/kimi-k2.6.js", ["runs/f.html", "runs/e.html"]),  # in the order given (page order)
        ("search/unknown.js", ["runs/d.html"]), ("search/unknown_e3b0c442.js", ["runs/c.html"])]
    assert search.manifest_js(got) == (
        f'reporterIndex({{"fields":{FIELDS},"search":{SEARCHED},"shards":["search/gpt-5.1_0dba72b1.js",'
        '"search/gpt-5.1_44700474.js","search/kimi-k2.6.js","search/unknown.js","search/unknown_e3b0c442.js"]});\n')
    assert search.shards([("", row("runs/c.html", ""))])[0].path == "search/unknown.js"


def test_a_shards_file_holds_its_rows_and_their_minisearch_index() -> None:
    r = search.IndexRow("runs/b.html", "L1 · problem 2", "2_Conv «d».py", "Kimi-K2.6", "popcorn", "compile_error",
                        "re-validated", None, 2, "conv_k", (0, "popcorn", 0, "cfg", "Kimi-K2.6", 1, 2, "b"))
    [shard] = search.shards([("Kimi-K2.6", r)])
    assert shard.text() == (
        'reporterShard({"shard":"search/kimi-k2.6.js","rows":[["runs/b.html","L1 · problem 2","2_Conv «d».py",'
        '"Kimi-K2.6","popcorn","compile_error","re-validated",null,2,"conv_k",[0,"popcorn",0,"cfg","Kimi-K2.6",1,2,"b"]]],'
        '"index":{"documentCount":1,"nextId":1,"documentIds":{"0":0},'
        '"fieldIds":{"problem":0,"model":1,"kernels":2,"verdict":3},"fieldLength":{"0":[4,3,2,2]},'
        '"averageFieldLength":[4.0,3.0,2.0,2.0],"storedFields":{},"dirtCount":0,'
        '"index":[["2",{"0":{"0":1}}],["6",{"1":{"0":1}}],["compile",{"3":{"0":1}}],["conv",{"0":{"0":1},"2":{"0":1}}],'
        '["d",{"0":{"0":1}}],["error",{"3":{"0":1}}],["k",{"2":{"0":1}}],["k2",{"1":{"0":1}}],["kimi",{"1":{"0":1}}],'
        '["py",{"0":{"0":1}}]],"serializationVersion":2}});\n')


def test_a_shards_key_changes_with_its_rows_and_the_builds_inputs_only() -> None:
    a, b = row("runs/a.html", "m", "k1"), row("runs/b.html", "m", "k2")
    key = search.shards([("m", a), ("m", b)], "g1")[0].key
    assert search.shards([("m", a), ("m", b)], "g1")[0].key == key
    assert search.shards([("m", a), ("m", row("runs/b.html", "m", "k3"))], "g1")[0].key != key  # a row changed
    assert search.shards([("m", a)], "g1")[0].key != key  # a run left the shard
    assert search.shards([("m", a), ("m", b)], "g2")[0].key != key  # a global input (static files, settings) changed


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run MiniSearch itself")
def test_prebuilt_index_is_what_minisearch_builds(tmp_path: Path) -> None:
    rows = [search.IndexRow("runs/a.html", "L2 · problem 10", "10_Fused-Pairwise.py", "GPT-5.1", "popcorn", "correct",
                            "recorded", 1.5, 0, "fused_kernel_r1 other"),
            search.IndexRow("runs/b.html", "L1 · problem 2", "2_Conv «d».py", "GPT-5.1", "popcorn", "compile_error",
                            "re-validated", None, 2, "")]
    [shard] = search.shards([("GPT-5.1", r) for r in rows])
    (tmp_path / "idx.js").write_text(search.manifest_js([shard]))
    (tmp_path / "shard.js").write_text(shard.text())
    script = f"""
const MiniSearch = require({json.dumps(str(ROOT / 'static' / 'minisearch.js'))});
let m, p; global.reporterIndex = d => {{ m = d; }}; global.reporterShard = d => {{ p = d; }};
require({json.dumps(str(tmp_path / 'idx.js'))}); require({json.dumps(str(tmp_path / 'shard.js'))});
const ms = new MiniSearch({{fields: m.search}});
ms.addAll(p.rows.map((r, i) => Object.fromEntries([['id', i], ...m.search.map(f => [f, String(r[m.fields.indexOf(f)])])])));
const norm = j => {{ j.index.sort((a, b) => a[0] < b[0] ? -1 : 1); return JSON.stringify(j); }};
console.log(norm(ms.toJSON()) === norm(p.index) ? 'same' : 'different');
console.log(JSON.stringify(MiniSearch.loadJS(p.index, {{fields: m.search}}).search('fused_kernel', {{prefix: true, combineWith: 'AND'}}).map(r => r.id)));
"""
    out = subprocess.run(["node", "-e", script], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["same", "[0]"]


def _build(data: Path, site: Path) -> None:
    res = CliRunner().invoke(main, ["build", str(data), str(site), "--no-validate"])  # as `sample_site` was built
    assert res.exit_code == 0, res.output


def _inodes(site: Path) -> dict[str, int]:
    return {p.relative_to(site).as_posix(): p.stat().st_ino for p in [site / search.MANIFEST, *(site / "search").iterdir()]}


def _edit(trace: Path, old: str, new: str) -> None:
    text = trace.read_text(encoding="utf-8")
    assert old in text
    trace.write_text(text.replace(old, new), encoding="utf-8")


def test_a_rebuild_rewrites_only_the_shards_whose_rows_changed(sample_data: Path, site_copy: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    indexed: list[int] = []
    real = search.minisearch_index
    monkeypatch.setattr(search, "minisearch_index", lambda rows: indexed.append(len(rows)) or real(rows))
    # A changed row changes the runs table, and ranking it again is most of a rebuild's time; the
    # leaderboards have their own tests, so here there are none.
    monkeypatch.setattr(boards, "leaderboards", lambda *args: ([], {}, {}))
    before = _inodes(site_copy)
    assert sorted(before) == ["search-index.js", *SAMPLE_SHARDS]
    sweep = sample_data / "kernelbench-sweep"
    _edit(sweep / "kernelbench-level1_demo-beta" / "l1-p96-s0" / "trace.json", "huber_sum", "huber_total")  # a kernel renamed
    _edit(sweep / "kernelbench-level1_demo-alpha" / "l1-p94-s0" / "trace.json", '"source_note": "', '"source_note": "Edited. ')
    _build(sample_data, site_copy)
    after = _inodes(site_copy)
    assert sorted(after) == sorted(before)
    assert [p for p in after if after[p] != before[p]] == ["search/demo-beta.js"]
    assert indexed == [4]  # only the changed shard's rows were indexed again: the others were kept as they are
    beta = (site_copy / "search" / "demo-beta.js").read_text(encoding="utf-8")
    assert "huber_total" in beta and "huber_sum" not in beta

    # Both runs with no model recorded go, and a run of a new model comes: its shard is written, the
    # emptied one leaves the site and the manifest lists the new set.
    shutil.rmtree(sample_data / "seed-001-partial")
    shutil.rmtree(sample_data / "seed-002-partial")
    shutil.copytree(sample_data / "seed-003-l2-p8", sample_data / "seed-900-new-model")
    _edit(sample_data / "seed-900-new-model" / "trace.json", '"model": "Kimi-K2.6"', '"model": "New Model"')
    indexed.clear()
    _build(sample_data, site_copy)
    now = _inodes(site_copy)
    assert sorted(now) == ["search-index.js", "search/demo-alpha.js", "search/demo-beta.js", "search/demo-gamma.js",
                           "search/kimi-k2.6.js", "search/new-model.js"]
    assert [p for p in now if now[p] != after.get(p)] == ["search-index.js", "search/new-model.js"]
    assert indexed == [1]
    assert "search/unknown.js" not in (owned_files(site_copy) or ())
    manifest = (site_copy / search.MANIFEST).read_text(encoding="utf-8")
    assert json.loads(manifest[manifest.index("(") + 1: manifest.rindex(")")])["shards"] == sorted(now)[1:]
    assert "seed-900-new-model" in (site_copy / "search" / "new-model.js").read_text(encoding="utf-8")
