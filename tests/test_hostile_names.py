"""A hostile name or value never costs more than its run (issue 43, items 1, 2 and 6).

Run folders, model names and problem files are written by whoever made DATA. Redaction works on values before
they are serialised; the last pass over written files only verifies. Each output format is parsed back with a
real parser after a build whose names hold secrets, separators and quote characters."""

from __future__ import annotations

import csv
import io
import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import KERNELS, kernel_run, minimal_trace, write_trace
from reporter.cli import main
from reporter.core.sitefiles import owned_files

HEX = "ab12" * 16
HEADER = f"run-X-Api-Key: {HEX}"  # the name that bricked a site: the status file lost a quote and a colon
NAMES = [HEADER, 'quote"and\\back', "colon: x", "tab\tand\nnewline", "<script>alert(1)</script>", "rlo\u202ecod.exe",
         f"Authorization: Bearer {HEX}", "]}\"',{", "sk-proj-" + "A1b2C3d4" * 6]


def _build(data: Path, site: Path, *extra: str) -> str:
    res = CliRunner().invoke(main, ["build", str(data), str(site), "--no-validate", *extra])
    assert res.exit_code == 0, res.output
    return res.output


def _jsonp(text: str) -> object:
    body = text[text.index("(") + 1: text.rindex(")")]
    return json.loads(f"[{body}]")


@pytest.mark.parametrize("name", NAMES, ids=range(len(NAMES)))
def test_a_hostile_run_name_never_bricks_the_site(name: str, tmp_path: Path) -> None:
    data, site = tmp_path / "data", tmp_path / "site"
    kernel_run(data, "plain", (KERNELS / "correct.py").read_text())
    kernel_run(data, name, (KERNELS / "correct.py").read_text())
    _build(data, site)
    assert owned_files(site) is not None  # what `reporter publish` and the next build check first
    json.loads((site / ".reporter-status.json").read_text())
    assert "up to date" in _build(data, site).splitlines()[-1]  # read back exactly: nothing rendered again
    (data / "plain" / "trace.json").write_text((data / "plain" / "trace.json").read_text().replace("model-a", "model-b"))
    assert "wrote" in _build(data, site).splitlines()[-1]
    assert owned_files(site) is not None
    for path in site.rglob("*"):
        if path.is_file() and not path.name.endswith((".pf_fragment", ".pf_index", ".pf_meta", ".pagefind", ".wasm")):
            text = path.read_text(encoding="utf-8", errors="replace")
            assert HEX not in text and "\u202e" not in text, path
            if path.suffix == ".json":
                json.loads(text)
            elif path.suffix == ".js" and path.parent.name in ("search", "runs"):
                _jsonp(text)
            elif path.suffix == ".csv":
                list(csv.reader(io.StringIO(text)))


def test_a_password_in_a_problem_file_leaves_the_search_shard_valid(tmp_path: Path) -> None:
    data, site = tmp_path / "data", tmp_path / "site"
    reference = (KERNELS / "reference.py").read_text() + '\npassword = "hunter2-is-my-db-secret"\n'
    doc = minimal_trace(model="leaky-model", problem_file='password="hunter2-is-my-db-secret".py', title="password")
    doc["reference_source"] = reference
    doc["final_kernel"] = {"source": (KERNELS / "correct.py").read_text()}
    write_trace(data, "p", doc)
    _build(data, site)
    shards = list((site / "search").glob("*.js"))
    assert shards
    for shard in shards:
        text = shard.read_text()
        assert "hunter2-is-my-db-secret" not in text
        parsed = _jsonp(text)
        assert isinstance(parsed, list) and parsed[0]["rows"], text[:300]
    assert "hunter2" not in (site / "runs.csv").read_text()
    node = subprocess.run(["node", "-e", "const fs=require('fs');global.reporterShard=()=>{};"
                           "for (const f of process.argv.slice(1)) eval(fs.readFileSync(f,'utf8'));"] + [str(s) for s in shards],
                          capture_output=True, text=True)
    assert node.returncode == 0, node.stderr


def test_invisible_characters_in_a_model_name_make_a_visible_row_and_a_problem(tmp_path: Path) -> None:
    data, site = tmp_path / "data", tmp_path / "site"
    kernel = (KERNELS / "correct.py").read_text()
    for name, model in (("a", "Kimi-K2.6"), ("b", "Kimi-K2.6\u200b"), ("c", "Caf\u00e9"), ("d", "Cafe\u0301")):
        doc = minimal_trace(model=model, problem_file=f"{name}.py")
        doc["reference_source"] = (KERNELS / "reference.py").read_text()
        doc["final_kernel"] = {"source": kernel}
        write_trace(data, name, doc)
    out = _build(data, site)
    assert "run.model" in out and "U+200B ZERO WIDTH SPACE" in out
    pages = "".join(p.read_text() for p in site.rglob("*.html"))
    assert "Kimi-K2.6\\u200b" in pages and "\u200b" not in pages
    models = {row["model"] for row in csv.DictReader(io.StringIO((site / "runs.csv").read_text()))}
    assert models == {"Kimi-K2.6", "Kimi-K2.6\\u200b", "Caf\u00e9"}  # the two spellings of Café are one model


def test_a_right_to_left_override_in_a_run_folder_is_shown_escaped(tmp_path: Path) -> None:
    data, site = tmp_path / "data", tmp_path / "site"
    kernel_run(data, "evil\u202egnp.py", (KERNELS / "correct.py").read_text())
    _build(data, site)
    ids = [row["run_id"] for row in csv.DictReader(io.StringIO((site / "runs.csv").read_text()))]
    assert ids == ["evil\\u202egnp.py"]
    assert all("\u202e" not in p.read_text(errors="replace") for p in site.rglob("*.html"))


def _clean() -> object:
    from collections import Counter

    from reporter.collect.redact import Redactor
    red = Redactor()
    return lambda text: red.text(text, Counter())


# The search shard that hung the search page: a redactor run over its text took `",{` for a value's start.
SHARD = 'reporterShard({"index":[["password=",{"0":{"1":1}}]]});\n'


def test_the_last_pass_leaves_a_file_whose_values_hold_no_secret_as_it_was() -> None:
    from reporter.render.verify import check
    clean = _clean()
    assert clean(SHARD) != SHARD  # the old pass rewrote this file ...
    assert check("search/m.js", SHARD, clean) == SHARD  # ... which no value of holds a secret
    page = '<td title="db_password=">x</td><td>hunter2-is-my-secret</td>'
    assert check("a.html", page, clean) == page


@pytest.mark.parametrize(("rel", "text", "where"), [
    ("build-info.json", '{"note": "password=\\"hunter2-is-very-secret\\""}', "JSON.note"),
    ("runs/a.turns.js", 'reporterChunk({"turns":["<p>DB_PASSWORD=hunter2-is-very-secret</p>"]});', "arguments[0].turns[0], line 1 column 4"),
    ("a.html", '<p>ok</p>\n<a title="DB_PASSWORD=hunter2-is-very-secret">x</a>', "line 2 column 1"),
    ("runs.csv", 'model,note\nm,"DB_PASSWORD=hunter2-is-very-secret"\n', "row 2 column 2"),
    ("runs/a.kernel.py", "x = 1\nDB_PASSWORD = 'hunter2-is-very-secret'\n", "the file"),
])
def test_a_value_that_still_holds_a_secret_stops_its_file_naming_the_place(rel: str, text: str, where: str) -> None:
    from reporter.render.verify import LeakError, check
    with pytest.raises(LeakError) as err:
        check(rel, text, _clean())
    assert str(err.value.message).startswith(f"{rel}: {where} holds") and "secret-assignment" in err.value.message


def test_no_published_file_names_the_folder_the_site_was_built_from(tmp_path: Path) -> None:
    # Issue 49, item 2: the index's list of unreadable runs showed DATA's absolute path (a user name, a home folder).
    import shutil

    from conftest import DATA
    from reporter.core.sitefiles import is_state
    data = tmp_path / "home" / "alice-private-name" / "projects" / "runs"
    shutil.copytree(DATA, data)
    write_trace(data, "broken", '{"schema_version": 2, "run": ')
    doc = minimal_trace()
    doc["attachments"] = [{"kind": "ncu_raw_csv", "role": "kernel", "path": "missing.csv"}]
    write_trace(data, "missing-attachment", doc)
    site = tmp_path / "site"
    out = _build(data, site)
    assert "alice-private-name" in out  # the terminal names the files in full ...
    published = [p for p in site.rglob("*") if p.is_file() and not is_state(p.relative_to(site).as_posix())]
    assert published
    leaked = [p for p in published if b"alice-private-name" in p.read_bytes()]
    assert leaked == []  # ... no published file does
    index = (site / "index.html").read_text()
    assert "<code>broken/trace.json</code>" in index


def test_a_kernel_hash_that_looks_like_a_key_is_no_leak() -> None:
    # About 1 sha256 in 1,500 holds a ClickHouse key's shape; the run page prints the kernel's own hash.
    from reporter.render.verify import check
    clean = _clean()
    digest = "7c46e3fe7eb2c9db4b1d" + "0123456789abcdef0123456789abcdef0123456789ab"
    assert clean(digest) != digest
    page = f"<p>kernel sha256 {digest}</p>"
    assert check("runs/a.html", page, clean) == page


def test_a_name_that_begins_like_an_encoded_one_is_read_back_as_itself() -> None:
    # A blind planting survivor: a run folder named "hex:616263" must not come back as "abc".
    from reporter.core.sitefiles import decode_state, encode_state
    for name in ("hex:616263", "hex:zz", "plain"):
        assert decode_state(encode_state({name: [name]}, str)) == {name: [name]}


def test_a_secret_held_by_a_json_key_stops_the_file_and_the_message_keeps_it_hidden() -> None:
    # A blind planting survivor: the keys of a JSON object (a run id or a file name used as a key) are values too.
    from reporter.render.verify import LeakError, check
    for rel, text in (("build-info.json", '{"runs": {"DB_PASSWORD=hunter2-is-very-secret": {"n": 1}}}'),
                      ("search/m.js", 'reporterChunk({"DB_PASSWORD=hunter2-is-very-secret": 1});')):
        with pytest.raises(LeakError) as err:
            check(rel, text, _clean())
        assert "secret-assignment" in err.value.message and "hunter2-is-very-secret" not in err.value.message


def test_a_literal_backslash_x_and_the_byte_it_spells_keep_different_ids() -> None:
    # A blind planting survivor: without the doubled backslash, a folder named `\\xff` (four characters) and one
    # named with the byte 0xff got one id, and one run was listed as the other.
    import os

    from reporter.core.names import path_id
    literal, byte = "run\\xff", os.fsdecode(b"run\xff")
    assert path_id(literal) == "run\\\\xff" and path_id(byte) == "run\\xff"
    assert path_id("a\\b") == "a\\\\b" and path_id("plain") == "plain"
