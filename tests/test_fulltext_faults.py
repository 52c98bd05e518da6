"""The full-text index's shard key (`reporter.render.fulltext.key_of`) against the cases round three's planted
faults showed untested: a run renamed with its document unchanged, and a run whose search document is missing.

The key decides whether a shard of the live site's index is kept (`write._fulltext`): it must change whenever the
shard's runs or their documents do, and be None when one document is missing (the shard is then not indexed).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from reporter.render import fulltext
from reporter.render.fulltext import build_index, doc_path, key_of


def _doc(root: Path, slug: str, text: str) -> None:
    path = root / doc_path(slug)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# ft-key-slug: the key names the runs as well as their documents
def test_a_run_renamed_with_an_unchanged_document_changes_the_key(tmp_path: Path) -> None:
    _doc(tmp_path, "model-a/run-1", "<html>same words</html>")
    _doc(tmp_path, "model-a/run-2", "<html>same words</html>")
    old = key_of(tmp_path, ["model-a/run-1"])
    new = key_of(tmp_path, ["model-a/run-2"])
    assert old is not None and new is not None
    assert old != new


def test_two_runs_swapping_their_documents_change_the_key(tmp_path: Path) -> None:
    (a := tmp_path / "a").mkdir()
    (b := tmp_path / "b").mkdir()
    _doc(a, "r1", "first")
    _doc(a, "r2", "second")
    _doc(b, "r1", "second")
    _doc(b, "r2", "first")
    assert key_of(a, ["r1", "r2"]) != key_of(b, ["r1", "r2"])


def test_the_same_runs_and_documents_give_the_same_key(tmp_path: Path) -> None:
    (a := tmp_path / "a").mkdir()
    (b := tmp_path / "b").mkdir()
    for root in (a, b):
        _doc(root, "r1", "first")
        _doc(root, "r2", "second")
    key = key_of(a, ["r1", "r2"])
    assert key is not None and len(key) == 64
    assert key_of(b, ["r1", "r2"]) == key
    _doc(b, "r2", "second, edited")
    assert key_of(b, ["r1", "r2"]) != key


# ft-missing-doc: one missing document and the shard has no key, wherever it stands in the list
@pytest.mark.parametrize("slugs", [["missing"], ["r1", "missing"], ["missing", "r1"], ["r1", "missing", "r2"]])
def test_a_missing_document_gives_no_key(tmp_path: Path, slugs: list[str]) -> None:
    _doc(tmp_path, "r1", "first")
    _doc(tmp_path, "r2", "second")
    assert key_of(tmp_path, slugs) is None


def test_a_shard_with_a_missing_document_is_not_indexed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _doc(tmp_path, "r1", "first")
    # the warning is read from the module's logger itself: another test's CLI run may have changed how the "reporter"
    # loggers propagate, which caplog depends on
    said: list[str] = []
    monkeypatch.setattr(fulltext.log, "warning", lambda msg, *args: said.append(msg % args if args else msg))
    # the binary is never started for such a shard: a path that runs nothing is enough to show it
    assert build_index(tmp_path, ["r1", "gone"], tmp_path / "no-such-pagefind", "00") == (None, [])
    assert any("a run's search document is missing" in m for m in said)
    assert not (tmp_path / "pagefind").exists()


def test_a_recorded_signature_spares_reading_an_unchanged_document(tmp_path: Path) -> None:
    # at 10,000 runs, reading every document to find the changed shard was 3.8 GB and 5 CPU-s of each rebuild
    _doc(tmp_path, "r1", "first")
    _doc(tmp_path, "r2", "second")
    seen: fulltext.DocSigs = {}
    key = key_of(tmp_path, ["r1", "r2"], None, seen)
    assert sorted(seen) == ["r1", "r2"] and seen["r1"][2] == hashlib.sha256(b"first").hexdigest()
    again: fulltext.DocSigs = {}
    assert key_of(tmp_path, ["r1", "r2"], seen, again) == key
    assert again == seen  # the signatures kept are recorded too, for the build after this one
    forged = {**seen, "r1": [*seen["r1"][:2], "00" * 32]}  # same size and time, another recorded hash
    assert key_of(tmp_path, ["r1", "r2"], forged) != key  # taken as recorded: the file was not read


def test_a_document_rewritten_since_its_signature_is_read_again(tmp_path: Path) -> None:
    _doc(tmp_path, "r1", "first")
    seen: fulltext.DocSigs = {}
    key = key_of(tmp_path, ["r1"], None, seen)
    path = tmp_path / doc_path("r1")
    path.write_text("FIRST", encoding="utf-8")  # the same size
    os.utime(path, ns=(seen["r1"][1] + 1_000_000, seen["r1"][1] + 1_000_000))
    again: fulltext.DocSigs = {}
    assert key_of(tmp_path, ["r1"], seen, again) != key
    assert again["r1"][2] == hashlib.sha256(b"FIRST").hexdigest()
