"""Messages that lead: each dead end of the newcomer's path names what to do next, with its exit code."""

from __future__ import annotations

import io
import shutil
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from conftest import DATA, minimal_trace, write_trace
from reporter.cli import main
from reporter.progress import Progress

KB = Path(__file__).resolve().parent / "fixtures" / "kernelbench"


def small_data(tmp_path: Path) -> Path:
    """Two complete seed runs and their cached results: enough for a build's every stage, and quick."""
    data = tmp_path / "data"
    for name in ("seed-000-l2-p10", "seed-003-l2-p8", "validation"):
        shutil.copytree(DATA / name, data / name)
    return data


def test_build_on_kernelbench_output_suggests_the_import(tmp_path: Path) -> None:
    project = tmp_path / "kb"
    shutil.copytree(KB / "run_new", project / "runs" / "run_new")
    res = CliRunner().invoke(main, ["build", str(project), str(tmp_path / "site"), "--no-validate"])
    assert res.exit_code == 2, res.output
    assert "holds KernelBench run folders (runs/run_new), not traces" in res.output
    assert f"reporter import kernelbench {project / 'runs'} --problems PATH/TO/KernelBench/KernelBench --out" in res.output
    assert not (tmp_path / "site").exists()  # refused before anything was written
    # a KernelBench checkout's problem folder beside the runs: the command names it, not a literal example path
    shutil.copytree(KB / "problems", project / "KernelBench" / "KernelBench")
    res = CliRunner().invoke(main, ["build", str(project / "runs"), str(tmp_path / "site"), "--no-validate"])
    assert f"--problems {project / 'KernelBench' / 'KernelBench'} --out data/" in res.output, res.output


def test_a_bare_build_names_every_missing_argument(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no pyproject.toml with [tool.reporter]
    res = CliRunner().invoke(main, ["build"])
    assert res.exit_code == 2 and "missing DATA and SITE: give them (e.g. reporter build data/ site/)" in res.output
    res = CliRunner().invoke(main, ["build", str(tmp_path)])
    assert res.exit_code == 2 and "missing SITE: give it" in res.output


def test_publishing_the_data_folder_says_to_build_it_first(tmp_path: Path) -> None:
    write_trace(tmp_path / "data", "run-1", minimal_trace())
    res = CliRunner().invoke(main, ["publish", str(tmp_path / "data"), "--repo", str(tmp_path)])
    assert res.exit_code == 4, res.output
    assert f"{tmp_path / 'data'} holds runs (a data folder), not a built site" in res.output
    assert f"reporter build {tmp_path / 'data'} site/ && reporter publish site/" in res.output


def test_build_on_an_empty_folder_says_so(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    res = CliRunner().invoke(main, ["build", str(tmp_path / "data"), str(tmp_path / "site"), "--no-validate"])
    assert res.exit_code == 2 and "is empty: nothing to build" in res.output, res.output
    (tmp_path / "data" / "notes.txt").write_text("no traces here\n")
    res = CliRunner().invoke(main, ["build", str(tmp_path / "data"), str(tmp_path / "site"), "--no-validate"])
    assert res.exit_code == 2 and "holds no trace.json or *.trace.json" in res.output, res.output


def test_import_with_missing_references_fails_naming_the_folder_searched(tmp_path: Path) -> None:
    wrong = tmp_path / "not-kernelbench"
    wrong.mkdir()
    args = ["import", "kernelbench", str(KB / "run_new"), "--problems", str(wrong), "--out", str(tmp_path / "out")]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 2, res.output
    assert "no problem file for 2 problems (L1 1_*.py, L1 2_*.py)" in res.output
    assert f"searched level 1: {wrong / 'level1'}" in res.output and "--allow-missing-reference" in res.output
    assert not (tmp_path / "out").exists()
    res = CliRunner().invoke(main, [*args, "--allow-missing-reference"])
    assert res.exit_code == 0, res.output
    assert "imported without a reference" in res.output and "wrote 2 traces" in res.output
    # the right folder imports every reference (the fixture's one message is its duplicate result)
    res = CliRunner().invoke(main, ["import", "kernelbench", str(KB / "run_new"), "--problems", str(KB / "problems"),
                                    "--out", str(tmp_path / "good")])
    assert res.exit_code == 0 and "wrote 2 traces from 1 run folders" in res.output and "no problem file" not in res.output


def test_cache_check_with_nothing_cached_is_fine(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(DATA / "seed-000-l2-p10", data / "seed-000-l2-p10")
    res = CliRunner().invoke(main, ["cache", "check", str(data)])
    assert res.exit_code == 0 and "nothing cached yet" in res.output and "reporter validate" in res.output
    (data / "validation").mkdir()
    assert CliRunner().invoke(main, ["cache", "check", str(data)]).exit_code == 0
    # results without their manifest are a real problem, not "nothing cached"
    shutil.copytree(next(p for p in (DATA / "validation").iterdir() if p.is_dir()), data / "validation" / "entry")
    assert CliRunner().invoke(main, ["cache", "check", str(data)]).exit_code == 5


def test_validate_without_torch_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` fails, as on a machine without it
    res = CliRunner().invoke(main, ["validate", str(DATA)])
    assert res.exit_code == 6, res.output
    assert "torch is not installed" in res.output and "pip install torch" in res.output
    assert "no CUDA device" not in res.output


def test_help_lists_every_command() -> None:
    res = CliRunner().invoke(main, ["--help"])
    assert res.exit_code == 0

    def commands(group: click.Group, prefix: str) -> list[str]:
        out = []
        ctx = click.Context(group)
        for name in group.list_commands(ctx):  # a group's commands may be made on demand (`reporter import`'s importers)
            cmd = group.get_command(ctx, name)
            out += commands(cmd, f"{prefix} {name}") if isinstance(cmd, click.Group) else [f"{prefix} {name}"]
        return out

    listed = commands(main, "reporter")
    assert {"reporter init-workflow", "reporter cache migrate", "reporter import kernelbench"} <= set(listed)
    assert [c for c in listed if c not in res.output] == []


def test_verbose_build_names_each_stage_and_a_rebuild_is_up_to_date(tmp_path: Path) -> None:
    data, site = small_data(tmp_path), tmp_path / "site"
    res = CliRunner().invoke(main, ["-v", "build", str(data), str(site), "--no-validate"])
    assert res.exit_code == 0, res.output
    for line in ("validate: skipped (--no-validate)", f"collect: 2 traces under {data}; 0 unchanged since the last build, 2 to read",
                 "run seed-003-l2-p8: read (new); cached re-validation result validation/641c9820710799f882dd/",
                 "run page seed-000-l2-p10: re-rendered, it was not in the last build",
                 "reading runs: 2/2", "writing listing pages: ", "write: "):  # a run's page is written as it is read
        assert line in res.output, line
    again = CliRunner().invoke(main, ["build", str(data), str(site), "--no-validate"])
    assert again.exit_code == 0, again.output
    assert f"{site} is up to date: read 2 runs (0 unreadable), nothing changed since the last build" in again.output
    # without -v and without a terminal: no progress and no debug lines in the output
    assert "reading runs" not in again.output and "collect:" not in again.output
    quiet = CliRunner().invoke(main, ["-q", "build", str(data), str(site), "--no-validate"])
    assert quiet.exit_code == 0 and "redacted" not in quiet.output and "is up to date" in quiet.output  # no "no secrets"
    (data / "seed-000-l2-p10" / "trace.json").write_text((data / "seed-000-l2-p10" / "trace.json").read_text() + "\n")
    changed = CliRunner().invoke(main, ["-v", "build", str(data), str(site), "--no-validate"])
    assert "run page seed-000-l2-p10: re-rendered, its trace, attachments or cached result changed" in changed.output
    assert "run page seed-003-l2-p8" not in changed.output and "1 run pages to render, 1 kept" in changed.output


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_draws_a_bar_only_on_a_terminal_or_when_asked() -> None:
    tty = _Terminal()
    bar = Progress(quiet=False, verbose=False, stream=tty)
    for i in range(1, 5):
        bar("reading runs", i, 4)
    assert tty.getvalue().endswith("\rreading runs [" + "#" * 24 + "] 4/4\n")
    assert "\rreading runs [" + "#" * 12 + "-" * 12 + "] 2/4" in tty.getvalue()
    for quiet, verbose in ((False, False), (True, True)):  # a pipe without -v, and -q even under -v
        pipe = io.StringIO()
        Progress(quiet=quiet, verbose=verbose, stream=pipe)("reading runs", 1, 1)
        assert pipe.getvalue() == ""
    assert Progress(quiet=True, verbose=False, stream=_Terminal()).mode == "off"
    assert Progress(quiet=False, verbose=True, stream=io.StringIO()).mode == "log"


def test_a_build_by_changed_code_renders_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """reporter's version string does not move with every commit: a site built by older code (columns, causes, page
    parts it did not know) is rendered again by newer code, never reported up to date with stale pages."""
    from reporter.render import status
    data, site = small_data(tmp_path), tmp_path / "site"
    assert CliRunner().invoke(main, ["build", str(data), str(site), "--no-validate"]).exit_code == 0
    assert "is up to date" in CliRunner().invoke(main, ["build", str(data), str(site), "--no-validate"]).output
    monkeypatch.setattr(status, "code_hash", lambda: "other code")
    again = CliRunner().invoke(main, ["-v", "build", str(data), str(site), "--no-validate"])
    assert again.exit_code == 0 and "is up to date" not in again.output
    assert "collect: 2 traces under" in again.output and "0 unchanged since the last build, 2 to read" in again.output
