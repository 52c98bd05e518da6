"""The validation cache's manifest: what `store` records, what `cache check` finds, what `cache migrate` repairs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from reporter.cli import main
from reporter.collect import collect
from reporter.core import cache
from reporter.core.errors import CacheError
from reporter.core.records import ValidationResult
from reporter.validate import manifest


def results(data: Path) -> dict[str, Path]:
    return {p.parent.name: p for p in sorted((data / "validation").glob("*/*.json"))}


def problems(data: Path) -> list[tuple[str, str]]:
    return [(Path(p.path).name, p.message.split(":")[0].split(";")[0]) for p in manifest.check(data)]


def test_store_records_each_entry_with_its_hashes_and_files(sample_data: Path) -> None:
    (sample_data / "validation" / manifest.MANIFEST).unlink()
    on_disk = results(sample_data)
    key, path = next((k, p) for k, p in on_disk.items() if ValidationResult.model_validate_json(p.read_text()).ncu_files)
    old = ValidationResult.model_validate_json(path.read_text())
    csvs = {role: path.parent / name for role, name in old.ncu_files.items()}
    new = old.model_copy(update={"measured_at": "2030-01-01T00:00:00Z", "ncu_files": {}})
    manifest.store(sample_data, key, new, csvs)
    doc = json.loads((sample_data / "validation" / manifest.MANIFEST).read_text())
    assert doc["format"] == manifest.MANIFEST_FORMAT and doc["reporter"] == "0.1.0"
    entry = next(e for e in doc["entries"] if e["key"] == key)
    assert entry["kernel_sha256"] == old.kernel_sha256 and entry["reference_sha256"] == old.reference_sha256
    assert set(entry["files"]) == {path.name} | {p.name for p in csvs.values()}
    assert {e["key"] for e in doc["entries"]} == set(on_disk)  # the missing manifest was rebuilt from the disk
    assert manifest.check(sample_data) == []
    # A later store updates the one entry it wrote.
    manifest.store(sample_data, key, new.model_copy(update={"reason": "again"}))
    assert manifest.check(sample_data) == []


def test_check_names_missing_extra_changed_and_unreadable_files(sample_data: Path) -> None:
    manifest.write_manifest(sample_data)
    assert manifest.check(sample_data) == []
    a, b = [p for p in results(sample_data).values() if ValidationResult.model_validate_json(p.read_text()).ncu_files][:2]
    (a.parent / f"{a.stem}.kernel.ncu.csv").unlink()
    (b.parent / "notes.txt").write_text("hello")
    (b.parent / f"{b.stem}.reference.ncu.csv").write_text("edited")
    b.write_text("{}")
    found = problems(sample_data)
    assert (f"{a.stem}.kernel.ncu.csv", "missing") in found
    assert ("notes.txt", "extra") in found
    assert (f"{b.stem}.reference.ncu.csv", "changed since the manifest was written") in found
    assert (b.name, "not a validation result") in found
    res = CliRunner().invoke(main, ["cache", "check", str(sample_data)])
    assert res.exit_code == CacheError.exit_code and "notes.txt: (file): extra" in res.output


def test_check_without_a_manifest(sample_data: Path) -> None:
    (sample_data / "validation" / manifest.MANIFEST).unlink(missing_ok=True)
    assert problems(sample_data) == [(manifest.MANIFEST, "no manifest")]


def test_migrate_re_keys_entries_and_their_ncu_files(sample_data: Path) -> None:
    # Simulate a key change: entries filed under names the current key function does not produce.
    before = {k: ValidationResult.model_validate_json(p.read_text()) for k, p in results(sample_data).items()}
    for key, path in results(sample_data).items():
        shutil.move(path.parent, path.parent.with_name(f"old-{key}"))
    (sample_data / "validation" / "old-renamed").mkdir()
    first = next(iter(before))
    for p in sorted((sample_data / "validation" / f"old-{first}").iterdir()):
        p.rename(sample_data / "validation" / "old-renamed" / p.name.replace(p.name.split(".")[0], "0123456789ab"))
    moved_json = sample_data / "validation" / "old-renamed" / "0123456789ab.json"
    doc = json.loads(moved_json.read_text())
    doc["ncu_files"] = {r: n.replace(n.split(".")[0], "0123456789ab") for r, n in doc["ncu_files"].items()}
    moved_json.write_text(json.dumps(doc))
    found = manifest.check(sample_data)
    assert sum("filed under an old key" in p.message for p in found) == len(before)
    # Before migrating, a build cannot find the results: the pages say "not re-validated".
    runs = collect(sample_data).runs
    from reporter.validate import cached_lookup
    assert all(cached_lookup(sample_data, r) is None for r in runs)

    res = CliRunner().invoke(main, ["cache", "migrate", str(sample_data)])
    assert res.exit_code == 0, res.output
    assert f"{len(before)} moved, 0 dropped, 0 unreadable" in res.output
    assert manifest.check(sample_data) == []
    after = {k: ValidationResult.model_validate_json(p.read_text()) for k, p in results(sample_data).items()}
    assert set(after) == set(before)
    for key, res_ in after.items():
        assert res_.model_dump(exclude={"ncu_files"}) == before[key].model_dump(exclude={"ncu_files"})
        for name in res_.ncu_files.values():
            assert (sample_data / "validation" / key / name).is_file()
    assert not list((sample_data / "validation").glob("old-*"))
    hits = [cached_lookup(sample_data, r) for r in collect(sample_data).runs]
    assert sum(h is not None for h in hits) == len(before)


def test_migrate_keeps_the_newer_of_two_results_for_the_same_place(sample_data: Path) -> None:
    path = next(iter(results(sample_data).values()))
    old = ValidationResult.model_validate_json(path.read_text())
    stray = path.parent.with_name("stray")
    stray.mkdir()
    (stray / "x.json").write_text(old.model_copy(update={"measured_at": "1999-01-01T00:00:00Z", "ncu_files": {}}).model_dump_json())
    done = manifest.migrate(sample_data)
    assert done.dropped == ["stray/x.json"] and done.moved == []
    assert ValidationResult.model_validate_json(path.read_text()).measured_at == old.measured_at
    assert manifest.check(sample_data) == []


def test_unreadable_entries_stay_and_are_reported(sample_data: Path) -> None:
    path = next(iter(results(sample_data).values()))
    path.write_text("[1, 2]")
    done = manifest.migrate(sample_data)
    assert [p.path for p in done.problems] == [str(path)] and path.is_file()


@pytest.mark.parametrize("name", ["../../outside.csv", "/etc/passwd"])
def test_ncu_names_outside_the_entry_are_not_followed(sample_data: Path, name: str) -> None:
    path = next(iter(results(sample_data).values()))
    doc = json.loads(path.read_text())
    doc["ncu_files"]["kernel"] = name
    path.write_text(json.dumps(doc))
    entry = manifest.entry_of(path, ValidationResult.model_validate_json(path.read_text()))
    assert all("/" not in n for n in entry.files)


def test_a_result_of_the_previous_format_is_shown_but_measured_again(format4_data: Path) -> None:
    sample_data = format4_data
    # Format 5 measures differently (issue 20): a GPU must not reuse a format-4 result, a page still shows it.
    from reporter.core.records import SHOWN_FORMATS, VALIDATION_FORMAT
    from reporter.validate import cached_lookup
    assert (VALIDATION_FORMAT, SHOWN_FORMATS) == (5, (4,))
    run = next(r for r in collect(sample_data).runs if r.run_id == "seed-003-l2-p8")
    fk, ref = run.source.final_kernel, run.source.reference_source
    assert fk is not None and ref is not None
    shown = cached_lookup(sample_data, run)
    assert shown is not None and shown[0].format == 4  # the committed H200 result, found under its format-4 key
    assert cache.lookup_shown(sample_data, fk.source, ref) == shown
    current = cache.content_key(fk.source, ref)
    assert current == cache.content_keys(fk.source, ref)[0] and shown[1].parent.name == cache.content_keys(fk.source, ref)[1]
    res = shown[0]
    assert cache.lookup(sample_data, current, res.environment, res.settings) is None  # what `reporter validate` asks


def test_runs_of_one_kernel_under_two_rule_sets_share_the_stored_replays(sample_data: Path) -> None:
    """Issue 42: one stored result per kernel and reference keeps a replay per rule set; a run scored by KernelBench
    2025 and another by 2025-11 each find their own (they replaced each other before, and each build replayed again)."""
    from reporter.core.judgement import replay_for
    from reporter.core.schema import BenchmarkReplay
    key, path = next(iter(results(sample_data).items()))
    old = ValidationResult.model_validate_json(path.read_text())
    under = {name: BenchmarkReplay(name, passed, 5 if passed else 2, 5) for name, passed in
             (("kernelbench-2025", True), ("kernelbench-2025-11", False))}
    stored = manifest.store(sample_data, key, old.model_copy(update={"benchmark": under["kernelbench-2025"]}))
    again = manifest.store(sample_data, key, old.model_copy(update={"benchmark": under["kernelbench-2025-11"]}))
    assert again == stored
    now = ValidationResult.model_validate_json(stored.read_text())
    assert now.benchmark == under["kernelbench-2025-11"] and now.other_benchmarks == (under["kernelbench-2025"],)
    assert replay_for(now, "kernelbench-2025") == under["kernelbench-2025"]
    assert replay_for(now, "kernelbench-2025-11") == under["kernelbench-2025-11"]
    # a third store under the first rules again replaces that replay and keeps the other
    manifest.store(sample_data, key, old.model_copy(update={"benchmark": BenchmarkReplay("kernelbench-2025", False, 0, 5)}))
    last = ValidationResult.model_validate_json(stored.read_text())
    assert last.benchmark.passed is False and last.other_benchmarks == (under["kernelbench-2025-11"],)  # type: ignore[union-attr]
    assert manifest.check(sample_data) == []
