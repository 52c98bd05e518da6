"""Races between a build's writers: two render workers, two imports, two builds of one cache.

A temporary file named after something two writers share (an object's address, which forked workers
inherit; a fixed suffix) lets one writer's rename take the other's file: the loser raised, and its run
page was silently missing from the site. These tests make the writers meet on purpose."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from conftest import KERNELS, kernel_run
from reporter.render.highlight import HighlightCache


def _hammer(cache: HighlightCache, sources: list[str], start: multiprocessing.synchronize.Event, errors: multiprocessing.Queue[str]) -> None:
    start.wait()
    for source in sources:
        try:
            cache.code(source)
        except Exception as exc:  # noqa: BLE001 - the test counts them
            errors.put(f"{type(exc).__name__}: {exc}")
    os._exit(0)


def test_two_processes_highlighting_the_same_sources_never_fail(tmp_path: Path) -> None:
    # One cache object made before the fork: both children see it at the same address, as render workers do.
    cache = HighlightCache(tmp_path / "code")
    sources = [f"x = {i}\n" * 50 for i in range(400)]
    ctx = multiprocessing.get_context("fork")
    start, errors = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_hammer, args=(cache, sources, start, errors)) for _ in range(4)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(120)
    found = []
    while not errors.empty():
        found.append(errors.get())
    assert found == []
    assert sorted(p.suffix for p in (tmp_path / "code").rglob("*") if p.is_file()) == [".frag"] * len(sources)


def test_every_run_sharing_one_kernel_gets_its_page_from_parallel_workers(tmp_path: Path) -> None:
    from reporter.render.incremental import build_incremental
    data = tmp_path / "data"
    kernel = (KERNELS / "correct.py").read_text()
    # Four runs in a row share each kernel, so the four workers meet on the same new source at once.
    for i in range(96):
        kernel_run(data, f"same-{i:02d}", kernel + f"# variant {i // 4}\n")
    for attempt in range(3):
        site = tmp_path / f"site{attempt}"
        report = build_incremental(data, site, jobs=2)
        assert report.page_problems == ()
        assert len(list((site / "runs").glob("same-*.html"))) == 96


def test_a_run_page_that_cannot_be_written_is_listed_counted_and_fails_strict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from reporter.cli import main
    from reporter.render import pagemaker
    data = tmp_path / "data"
    kernel = (KERNELS / "correct.py").read_text()
    for name in ("fine", "lost"):
        kernel_run(data, name, kernel)
    real = pagemaker.write_new

    def fail_for_lost(root: Path, rel: str, content: str) -> None:
        if "lost" in rel and rel.endswith(".html"):
            raise OSError(28, "No space left on device", str(root / rel))  # the message names a path of the builder's
        real(root, rel, content)

    monkeypatch.setattr(pagemaker, "write_new", fail_for_lost)
    monkeypatch.setenv("REPORTER_JOBS", "1")  # in-process, so the patch holds
    res = CliRunner().invoke(main, ["build", str(data), str(tmp_path / "site"), "--no-validate"])
    assert res.exit_code == 0, res.output
    last = res.output.strip().splitlines()[-1]
    assert "1 run page NOT written" in last, last
    index = (tmp_path / "site" / "index.html").read_text()
    assert "Left out of this site (1)" in index and "<code>lost/trace.json</code>" in index and "No space left on device" in index
    assert str(tmp_path) not in index  # the builder's folders are not the readers' business
    assert list((tmp_path / "site" / "runs").glob("fine*.html")) and not list((tmp_path / "site" / "runs").glob("lost*.html"))
    strict = CliRunner().invoke(main, ["build", str(data), str(tmp_path / "strict"), "--no-validate", "--strict"])
    assert strict.exit_code == 3 and not (tmp_path / "strict").exists()


def test_two_imports_into_one_out_keep_every_entry_of_its_log(tmp_path: Path) -> None:
    import json

    from reporter.collect.imported import IMPORTS_FILE, ImportLog
    out = tmp_path / "out"
    first, second = ImportLog.load(out), ImportLog.load(out)  # both started before either wrote
    first.write(("a", "trace.json"), "{}")
    second.write(("b", "trace.json"), "[]")
    first.write(("c", "trace.json"), "{ }")
    assert sorted(json.loads((out / IMPORTS_FILE).read_text())["traces"]) == ["a/trace.json", "b/trace.json", "c/trace.json"]


def test_the_import_lock_keeps_out_every_other_holder(tmp_path: Path) -> None:
    # A blind planting survivor: a shared lock let two imports in at once. flock locks belong to an open file,
    # so a second open of the same file stands for another process.
    import fcntl

    from reporter.core.atomic import locked
    with locked(tmp_path, "x.lock"):
        fd = os.open(tmp_path / "x.lock", os.O_RDWR)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        finally:
            os.close(fd)
    fd = os.open(tmp_path / "x.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released on leaving
    finally:
        os.close(fd)
