"""Reading traces: the seed runs, and every kind of bad input."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import DATA, minimal_trace, write_trace
from reporter.collect import collect, read_trace


def test_seed_runs_load_with_every_turn() -> None:
    runs = {r.run_id: r for r in collect(DATA).runs}
    seeds = {r for r in runs if not r.startswith("kernelbench-sweep/")}  # the example sweep has its own tests
    assert seeds == {"seed-000-l2-p10", "seed-001-partial", "seed-002-partial", "seed-003-l2-p8"}
    t0 = runs["seed-000-l2-p10"].trace
    assert (t0.run.level, t0.run.problem_id, t0.run.model, t0.run.benchmark, t0.run.configuration) == (2, 10, "Kimi-K2.6", "popcorn", "l12_default_gpt")
    assert len(t0.turns) == 10 and sum(len(t.calls) for t in t0.turns) == 10
    assert [t.turn_s for t in t0.turns][:3] == [227.3, 16.0, 17.0]
    assert t0.turns[9].final and t0.final_kernel is not None and t0.final_kernel.turn == 9
    assert t0.turns[0].calls[0].result is not None and not t0.turns[0].calls[0].result.ok
    assert "kernel_code" in t0.turns[0].calls[0].arguments
    assert t0.metrics.nsight is not None and t0.metrics.nsight.l2_hit_pct == 279.3  # kept as recorded
    assert t0.metrics.nsight.warp_stalls_pct["long_scoreboard"] == 3446.1
    assert t0.run.wall_clock_s is None  # "—" in the seed: unknown, not 0
    partial = runs["seed-002-partial"].trace
    assert not partial.run.complete and partial.final_kernel is None and len(partial.turns) == 4


def test_attachments_are_parsed() -> None:
    run = next(r for r in collect(DATA).runs if r.run_id == "seed-003-l2-p8")
    assert not run.attachment_errors
    assert run.profiles["kernel"].profiler is not None and run.profiles["kernel"].profiler.launches == 1
    assert len(run.profiles["reference"].ncu_kernels) == 8
    # raw and details exports of one launch carry the same metrics: the first listed is the one read and named
    assert (run.profiles["kernel"].ncu_source, run.profiles["reference"].ncu_source) == ("p8_new_raw.csv", "p8_ref_raw.csv")


def test_bad_inputs_name_file_and_field_and_the_rest_still_builds(tmp_path: Path) -> None:
    write_trace(tmp_path, "good", minimal_trace())
    write_trace(tmp_path, "bad-json", "{not json")
    write_trace(tmp_path, "missing-field", {"schema_version": 2, "turns": []})
    bad_type = minimal_trace()
    bad_type["turns"] = [{"index": "zero"}]
    write_trace(tmp_path, "wrong-type", bad_type)
    write_trace(tmp_path, "future", {**minimal_trace(), "schema_version": 3})
    col = collect(tmp_path)
    assert [r.run_id for r in col.runs] == ["good"]
    errors = {Path(e.path).parent.name: e for e in col.errors}
    assert errors["bad-json"].field == "(json)" and "line 1" in errors["bad-json"].message
    assert errors["missing-field"].field == "run"
    assert errors["wrong-type"].field == "turns.0.index"
    assert errors["future"].field == "schema_version" and "versions 1, 2" in errors["future"].message
    assert all(str(e).startswith(e.path) for e in col.errors)


def test_unknown_fields_are_kept_and_reported(tmp_path: Path) -> None:
    doc = minimal_trace()
    doc["run"]["gpu_hours"] = 3
    doc["novel"] = {"x": 1}
    path = write_trace(tmp_path, "extra", doc)
    run = collect(tmp_path).runs[0]
    assert sorted(run.unknown) == ["novel", "run.gpu_hours"]
    assert read_trace(path).model_extra == {"novel": {"x": 1}}


def test_attachment_errors_do_not_drop_the_run(tmp_path: Path) -> None:
    doc = minimal_trace()
    doc["attachments"] = [{"kind": "ncu_raw_csv", "role": "kernel", "path": "missing.csv"},
                          {"kind": "torch_profiler_trace", "role": "kernel", "path": "../../etc/passwd"}]
    write_trace(tmp_path, "att", doc)
    run = collect(tmp_path).runs[0]
    assert len(run.attachment_errors) == 2
    assert [e.field for e in run.attachment_errors] == ["attachments[0].path", "attachments[1].path"]
    assert all(e.path == "att/trace.json" for e in run.attachment_errors)  # relative to DATA, as a page shows it


def test_schema_documents_every_top_level_field() -> None:
    from reporter.core.records import Trace
    schema = Trace.model_json_schema()
    doc = (DATA.parent / "docs" / "trace-format.md").read_text(encoding="utf-8")
    for name in schema["properties"]:
        assert f"`{name}`" in doc, f"docs/trace-format.md does not explain {name}"
    for name in schema["$defs"]["RunInfo"]["properties"]:
        assert f"`{name}`" in doc, f"docs/trace-format.md does not explain run.{name}"
    for name in schema["$defs"]["Turn"]["properties"]:
        assert f"`{name}`" in doc, f"docs/trace-format.md does not explain turns[].{name}"
    json.dumps(schema)


def test_version_1_traces_are_migrated_on_read(tmp_path: Path) -> None:
    v1 = {"schema_version": 1, "run": {"config": "l12_default_gpt", "variant": "popcorn", "model": "m"}, "turns": []}
    kb = {"schema_version": 1, "run": {"config": "kernelbench", "variant": "run_a", "model": "m"}, "turns": []}
    write_trace(tmp_path, "v1", v1)
    write_trace(tmp_path, "kb", kb)
    runs = {r.run_id: r.trace.run for r in collect(tmp_path).runs}
    assert (runs["v1"].benchmark, runs["v1"].configuration) == ("popcorn", "l12_default_gpt")
    assert (runs["kb"].benchmark, runs["kb"].configuration) == ("kernelbench", "run_a")
    assert runs["v1"].recorded_gpu is None and not runs["v1"].model_extra


def test_which_files_are_traces_and_which_folder_is_the_cache(tmp_path: Path) -> None:
    from reporter.collect.read import find_traces
    for name in ("a/trace.json", "b.trace.json", "runs/validation/trace.json", "validation/x/trace.json",
                 "c/mytrace.json", "d/trace.json.bak", "e/trace.jsonl"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    # DATA/validation is the results cache; a run folder of that name deeper down is a run like any other
    assert [p.relative_to(tmp_path).as_posix() for p in find_traces(tmp_path)] == [
        "a/trace.json", "b.trace.json", "runs/validation/trace.json"]


def test_a_folder_run_keeps_its_short_id_beside_a_file_of_the_same_name(tmp_path: Path) -> None:
    from reporter.collect.read import find_traces, run_ids
    for name in ("a/trace.json", "a.trace.json", "trace.json", "trace/trace.json", "b/c/trace.json"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    ids = {p.relative_to(tmp_path).as_posix(): i for p, i in run_ids(tmp_path, find_traces(tmp_path)).items()}
    assert ids == {"a/trace.json": "a", "a.trace.json": "a.trace.json", "trace.json": "trace.json",
                   "trace/trace.json": "trace", "b/c/trace.json": "b/c"}


KEY = "sk-proj-Zq8Wd3Lk5Rt1Vb7Nm2Xc9Hs4Jf6Gp0Ty3Ua8Ie"


def test_the_validator_gets_the_trace_as_written_and_pages_the_redacted_one(tmp_path: Path) -> None:
    from reporter.core.records import sha256_text
    doc = minimal_trace()
    kernel = f"API = '{KEY}'\n__global__ void k() {{}}\n"
    doc["final_kernel"] = {"source": kernel}
    write_trace(tmp_path, "leaky", doc)
    (run,) = collect(tmp_path).runs
    assert run.source.final_kernel is not None and run.source.final_kernel.source == kernel
    assert run.trace.final_kernel is not None and KEY not in run.trace.final_kernel.source
    assert run.kernel_hash == sha256_text(kernel) and run.redactions == {"openai-key": 1}


def test_an_unreadable_traces_message_is_redacted(tmp_path: Path) -> None:
    write_trace(tmp_path, f"run-{KEY}", "{oops")
    (err,) = collect(tmp_path).errors
    assert KEY not in str(err) and "[redacted: openai-key]" in err.path and err.field == "(json)"


def test_a_misspelt_field_or_verdict_is_named_with_the_nearest_name_and_fails_strict(tmp_path: Path) -> None:
    # Issue 45, item 3: `run.modle` built into model "unknown" and `recorded_verdict: "corect"` counted a correct
    # kernel as not correct, both with exit 0 and no word, --strict included.
    from click.testing import CliRunner

    from conftest import minimal_trace, write_trace
    from reporter.cli import main
    data = tmp_path / "data"
    doc = minimal_trace()
    doc["run"]["modle"] = "Kimi-K2.6"
    doc["run"]["recorded_verdict"] = "corect"
    doc["run"]["benchmark"] = "KernelBench"
    doc["run"]["level"] = 7
    write_trace(data, "typos", doc)
    write_trace(data, "fine", minimal_trace())
    res = CliRunner().invoke(main, ["build", str(data), str(tmp_path / "site"), "--no-validate"])
    assert res.exit_code == 0, res.output
    page = next(p for p in (tmp_path / "site" / "runs").glob("typos*.html")).read_text()
    for said in ("<b>run.modle</b>: is not a field of the trace format (did you mean &#39;model&#39;?)",
                 "<b>run.recorded_verdict</b>: &#39;corect&#39; is not a verdict this reporter knows (did you mean &#39;correct&#39;?)",
                 "<b>run.level</b>: 7 is not a KernelBench level (1 to 4)"):
        assert said in page, said
    fine = next(p for p in (tmp_path / "site" / "runs").glob("fine*.html")).read_text()
    assert "is not a field of the trace format" not in fine
    strict = CliRunner().invoke(main, ["build", str(data), str(tmp_path / "strict"), "--no-validate", "--strict"])
    assert strict.exit_code != 0 and not (tmp_path / "strict").exists(), strict.output
