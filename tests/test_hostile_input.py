"""Hostile input: every case becomes one message naming file and field, the run is skipped, the site builds."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import hang_guard, minimal_trace, write_trace
from reporter.cli import main
from reporter.collect import collect
from reporter.core import limits
from reporter.core.errors import CollectError, Problem


@pytest.fixture(autouse=True)
def no_hang() -> Iterator[None]:
    with hang_guard(120):
        yield


def build(data: Path, site: Path) -> str:
    result = CliRunner().invoke(main, ["build", str(data), str(site), "--no-validate"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 0, result.output
    return result.output


def only_error(data: Path) -> CollectError:
    col = collect(data)
    assert [r.run_id for r in col.runs] == ["good"], [str(e) for e in col.errors]
    (err,) = col.errors
    return err


@pytest.fixture
def data(tmp_path: Path) -> Path:
    d = tmp_path / "data"
    write_trace(d, "good", minimal_trace())
    return d


def test_trace_linked_to_dev_zero_or_outside_data_is_refused(data: Path, tmp_path: Path) -> None:
    outside = write_trace(tmp_path / "elsewhere", "x", minimal_trace())
    (data / "zero").mkdir()
    (data / "zero" / "trace.json").symlink_to("/dev/zero")
    (data / "passwd").mkdir()
    (data / "passwd" / "trace.json").symlink_to("/etc/passwd")
    (data / "out").mkdir()
    (data / "out" / "trace.json").symlink_to(outside)
    col = collect(data)
    assert [r.run_id for r in col.runs] == ["good"]
    assert len(col.errors) == 3 and all("leads outside" in e.message and e.field == "(file)" for e in col.errors)
    assert "root:" not in "".join(e.message for e in col.errors)


def test_link_to_a_trace_inside_data_is_read(data: Path) -> None:
    (data / "alias").mkdir()
    (data / "alias" / "trace.json").symlink_to(data / "good" / "trace.json")
    assert sorted(r.run_id for r in collect(data).runs) == ["alias", "good"]


def test_fifo_and_socket_are_refused_without_blocking(data: Path, tmp_path: Path) -> None:
    (data / "fifo").mkdir()
    os.mkfifo(data / "fifo" / "trace.json")
    err = only_error(data)
    assert "FIFO" in err.message and err.path.endswith("fifo/trace.json")
    (data / "fifo" / "trace.json").unlink()
    os.rmdir(data / "fifo")
    short = Path(os.path.realpath("/tmp")) / f"rs-{os.getpid()}"
    short.mkdir(exist_ok=True)
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(short / "s.trace.json"))
        (data / "s.trace.json").symlink_to(short / "s.trace.json")
        os.symlink(short / "s.trace.json", data / "good" / "sock.trace.json")
        col = collect(data)
        assert [r.run_id for r in col.runs] == ["good"] and len(col.errors) == 2
    finally:
        sock.close()
        (short / "s.trace.json").unlink()
        short.rmdir()


def test_symlink_loops_are_one_message(data: Path) -> None:
    (data / "loop").mkdir()
    os.symlink("trace.json", data / "loop" / "trace.json")
    err = only_error(data)
    assert err.field == "(file)" and "symbolic links" in err.message


def test_a_trace_over_the_size_limit_names_the_limit(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_trace(data, "big", {**minimal_trace(), "prompt": "x" * 5000})
    monkeypatch.setattr(limits, "MAX_TRACE_BYTES", 4000)
    err = only_error(data)
    assert err.path.endswith("big/trace.json") and "MAX_TRACE_BYTES (4,000 bytes)" in err.message


@pytest.mark.parametrize("depth", [100, 990, 5000])
def test_deep_nesting_names_the_limit(data: Path, depth: int) -> None:
    write_trace(data, "deep", json.dumps(minimal_trace())[:-1] + ', "harness_metadata": {"x": ' + "[" * depth + "]" * depth + "}}")
    err = only_error(data)
    assert "MAX_JSON_DEPTH (64)" in err.message
    # Where the parser itself gives up the message points at the spot, else the field path is named.
    assert err.field.startswith("harness_metadata.x[0][0]") or (err.field == "(json)" and "at line 1 column" in err.message)


def test_huge_integers_name_the_limit(data: Path) -> None:
    doc = json.dumps(minimal_trace())
    write_trace(data, "digits", doc.replace('"level": 1', '"level": ' + "9" * 5000))
    write_trace(data, "turns", doc.replace('"level": 1', '"level": 1, "turns_used": 1' + "0" * 400))
    col = collect(data)
    assert [r.run_id for r in col.runs] == ["good"]
    assert len(col.errors) == 2 and all("MAX_INT_DIGITS (40)" in e.message for e in col.errors)
    assert "5,000 digits" in col.errors[0].message


def test_a_lone_surrogate_is_shown_replaced_and_the_site_builds(data: Path, tmp_path: Path) -> None:
    doc = minimal_trace(model="m\ud800x")
    doc["turns"] = [{"index": 0, "reasoning": "before \ud800 after", "calls": [{"tool": "t", "arguments": {"k\udfff": "v"}}]}]
    write_trace(data, "surrogate", json.dumps(doc))  # json escapes them as \\ud800
    run = next(r for r in collect(data).runs if r.run_id == "surrogate")
    assert run.trace.turns[0].reasoning == "before \ufffd after" and run.trace.run.model == "m\ufffdx"
    build(data, tmp_path / "site")
    page = (tmp_path / "site" / "runs" / f"{run.slug}.html").read_text(encoding="utf-8")
    chunk = (tmp_path / "site" / "runs" / f"{run.slug}.turns.js").read_text(encoding="utf-8")  # turns load lazily
    assert "m\ufffdx" in page and "before \ufffd after" in chunk


def test_a_non_utf8_folder_name_builds(data: Path, tmp_path: Path) -> None:
    folder = os.fsdecode(os.fsencode(str(data)) + b"/caf\xe9-\xff")
    write_trace(Path(folder).parent, Path(folder).name, minimal_trace())
    ids = sorted(r.run_id for r in collect(data).runs)
    assert ids == ["caf\\xe9-\\xff", "good"]
    build(data, tmp_path / "site")


def test_names_that_would_make_too_long_file_names_build(data: Path, tmp_path: Path) -> None:
    write_trace(data, "r" * 250, minimal_trace(model="M" * 400, configuration="c" * 300, benchmark="b" * 300,
                                               problem_file="p" * 300 + ".py"))
    out = build(data, tmp_path / "site")
    assert "read 2 runs (0 unreadable)" in out
    assert max(len(p.name.encode()) for p in (tmp_path / "site").rglob("*")) < 200


def test_nul_byte_and_escapes_in_attachment_paths(data: Path) -> None:
    doc = minimal_trace()
    doc["attachments"] = [{"kind": "ncu_raw_csv", "role": "kernel", "path": "a\u0000b.csv"},
                          {"kind": "ncu_raw_csv", "role": "reference", "path": "/etc/passwd"},
                          {"kind": "torch_profiler_trace", "role": "kernel", "path": "loop.json"},
                          {"kind": "torch_profiler_trace", "role": "reference", "path": "fifo.json"}]
    path = write_trace(data, "att", doc)
    os.symlink("loop.json", path.parent / "loop.json")
    os.mkfifo(path.parent / "fifo.json")
    run = next(r for r in collect(data).runs if r.run_id == "att")
    errs = run.attachment_errors
    assert [e.field for e in errs] == [f"attachments[{i}].path" for i in range(4)]
    assert all(e.path == "att/trace.json" for e in errs)  # relative to DATA, as a page shows it
    assert "not a usable file name" in errs[0].message and "leads outside" in errs[1].message
    assert "symbolic links" in errs[2].message and "FIFO" in errs[3].message


def _with_attachment(data: Path, kind: str, name: str, content: str) -> list[CollectError]:
    doc = minimal_trace()
    doc["attachments"] = [{"kind": kind, "role": "kernel", "path": name}]
    path = write_trace(data, "att", doc)
    (path.parent / name).write_text(content, encoding="utf-8")
    return next(r for r in collect(data).runs if r.run_id == "att").attachment_errors


@pytest.mark.parametrize("dur", ['"fast"', "null", "{}", "-1", "true"])
def test_profiler_trace_with_a_non_numeric_dur(data: Path, dur: str) -> None:
    events = '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "dur": 3}, {"ph": "X", "cat": "kernel", "name": "k", "dur": %s}]}'
    (err,) = _with_attachment(data, "torch_profiler_trace", "p.json", events % dur)
    assert err.path.endswith("att/p.json") and err.field == "traceEvents[1].dur"


def test_profiler_durations_that_overflow_their_sum_are_one_message_and_the_run_keeps_its_page(data: Path, tmp_path: Path) -> None:
    """Two durations of 1e308 µs are each finite, their sum is not: fsum raised and the run lost its page."""
    events = '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "dur": 1e308}, {"ph": "X", "cat": "kernel", "name": "k", "dur": 1e308}]}'
    (err,) = _with_attachment(data, "torch_profiler_trace", "p.json", events)
    assert err.field == "traceEvents[].dur" and "add up past the largest number" in err.message
    out = build(data, tmp_path / "site")
    assert "1 page that failed" not in out and len(list((tmp_path / "site" / "runs").glob("att*.html"))) == 1, out


HEADER = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","gpu__time_duration.sum"\n'
UNITS = '"","","","","","","","","","","","nsecond"\n'


@pytest.mark.parametrize("launch_id", ["abc", "inf", "1.5"])
def test_ncu_csv_with_a_non_numeric_id(data: Path, launch_id: str) -> None:
    row = f'"{launch_id}","1","python","h","k","1","7","(256, 1, 1)","(4, 1, 1)","0","9.0","1500"\n'
    (err,) = _with_attachment(data, "ncu_raw_csv", "k.csv", HEADER + UNITS + row)
    assert err.path.endswith("att/k.csv") and err.field == "ID" and launch_id in err.message


def test_ncu_csv_with_a_field_over_the_limit(data: Path) -> None:
    row = '"0","1","python","h","' + "k" * 140_000 + '","1","7","(256, 1, 1)","(4, 1, 1)","0","9.0","1500"\n'
    (err,) = _with_attachment(data, "ncu_raw_csv", "k.csv", HEADER + UNITS + row)
    assert err.path.endswith("att/k.csv") and "MAX_CSV_FIELD_CHARS (131,072)" in err.message


def test_a_linked_folder_is_reported_not_followed(data: Path, tmp_path: Path) -> None:
    write_trace(tmp_path / "outside", "run", minimal_trace())
    (data / "linked").symlink_to(tmp_path / "outside")
    err = only_error(data)
    assert err.path.endswith("linked") and "not followed" in err.message


@pytest.mark.slow  # minutes of builds on two cores: CI runs it (-m slow), the README's command leaves it out
def test_cached_results_cannot_name_files_outside_their_folder(sample_data: Path, tmp_path: Path) -> None:
    from reporter.validate import cached_lookup
    results = sorted((sample_data / "validation").glob("*/*.json"))
    for res in results:
        doc = json.loads(res.read_text(encoding="utf-8"))
        doc["ncu_files"] = {"kernel": "/etc/passwd", "reference": "../../seed-000-l2-p10/trace.json"}
        res.write_text(json.dumps(doc), encoding="utf-8")
    runs = [r for r in collect(sample_data).runs if r.trace.final_kernel is not None]
    errors: list[Problem] = []
    found = [cached_lookup(sample_data, r, errors) for r in runs]
    assert any(found) and all(f is None or f[0].ncu_files == {} for f in found)
    assert {e.field for e in errors} == {"ncu_files.kernel", "ncu_files.reference"}
    assert all(e.path.endswith(".json") and "not a file name beside the result" in e.message for e in errors)
    build(sample_data, tmp_path / "site")
    pages = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "site").rglob("*.html"))
    assert "root:x:0" not in pages


def test_a_cached_result_linked_from_outside_data_is_refused(sample_data: Path, tmp_path: Path) -> None:
    from reporter.validate import cached_lookup
    for res in sorted((sample_data / "validation").glob("*/*.json")):
        moved = tmp_path / res.name
        res.replace(moved)
        res.symlink_to(moved)
    runs = [r for r in collect(sample_data).runs if r.trace.final_kernel is not None]
    errors: list[Problem] = []
    assert all(cached_lookup(sample_data, r, errors) is None for r in runs)
    assert errors and all("leads outside" in e.message and e.kind == "cache" for e in errors)


def test_kernelbench_results_that_are_deep_huge_or_odd_become_messages(tmp_path: Path) -> None:
    import shutil

    from reporter.collect.kernelbench import import_kernelbench
    kb = Path(__file__).resolve().parent / "fixtures" / "kernelbench"
    for name, results in (("deep", "[" * 5000 + "]" * 5000), ("digits", '{"1": [{"sample_id": 1' + "0" * 5000 + "}]}"),
                          ("odd", '{"1": [{"sample_id": "abc", "compiled": true}], "2": {"sample_id": [1]}}')):
        run = tmp_path / name
        shutil.copytree(kb / "run_new", run)
        (run / "eval_results.json").write_text(results, encoding="utf-8")
        report = import_kernelbench(run, kb / "problems", tmp_path / "out" / name)
        assert report.written, name
        if name != "odd":
            assert any("eval_results.json" in m and "MAX_" in m for m in report.messages), (name, report.messages)
