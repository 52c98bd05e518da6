"""The hostile cases of issue 21 for `fuzz_collect.py`: an open recorder, user files around a site,
hostile KernelBench run folders and publishing a site that holds links and files we did not write.

Each function returns counts (a Counter) of what went wrong; every count must be 0.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
KB = ROOT / "tests" / "fixtures" / "kernelbench"
SYSTEM = [sys.prefix, sys.base_prefix, sys.exec_prefix, "/usr/share/zoneinfo", "/dev/null", str(ROOT / "reporter"),
          str(ROOT / "templates"), str(ROOT / "static"), str(ROOT / "__editable__")]


class Hang(Exception):
    pass


def timed(seconds: int, fn: Callable[[], Any]) -> Any:
    def hang(*_: object) -> None:
        raise Hang(f"no answer within {seconds} s (a blocking read?)")
    old = signal.signal(signal.SIGALRM, hang)
    signal.alarm(seconds)
    try:
        return fn()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


class Opens:
    """Every path opened (by `open`, `io.open`, `os.open`, and so pathlib) while recording, resolved."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.on = False
        self._real = real_open, real_os_open = io.open, os.open

        def note(path: Any, dir_fd: int | None = None) -> None:
            if self.on and not isinstance(path, int):
                name = os.fsdecode(path)
                # a name relative to a folder's descriptor (shutil.rmtree walks a tree so) is inside that folder
                base = os.readlink(f"/proc/self/fd/{dir_fd}") if dir_fd is not None and not os.path.isabs(name) else ""
                self.paths.append(os.path.realpath(os.path.join(base, name)))

        def patched_open(file: Any, *args: Any, **kwargs: Any) -> Any:
            note(file)
            return real_open(file, *args, **kwargs)

        def patched_os_open(path: Any, *args: Any, **kwargs: Any) -> int:
            note(path, kwargs.get("dir_fd"))
            return real_os_open(path, *args, **kwargs)

        builtins.open = io.open = patched_open
        os.open = patched_os_open

    def close(self) -> None:
        """Put the real `open` and `os.open` back."""
        builtins.open = io.open = self._real[0]
        os.open = self._real[1]

    @contextmanager
    def recording(self) -> Iterator[list[str]]:
        self.paths, self.on = [], True
        try:
            yield self.paths
        finally:
            self.on = False

    @staticmethod
    def outside(paths: list[str], *allowed: Path) -> list[str]:
        roots = [os.path.realpath(a) for a in allowed] + [os.path.realpath(s) for s in SYSTEM]
        return sorted({p for p in paths if not any(p == r or p.startswith(r.rstrip("/") + "/") for r in roots)})


# --- user files around a site: they must survive every build untouched -----------------------------------

def plant_user_files(site: Path, outside: Path) -> dict[Path, bytes]:
    """A CNAME, notes, a .git/ and a link out inside SITE; decoys named like our temporaries beside it."""
    victim = outside / "victim.txt"
    victim.write_text("the user's own file outside SITE\n")
    made: dict[Path, bytes] = {victim: victim.read_bytes()}
    if site.is_dir():
        for rel, text in (("CNAME", "report.example.org\n"), ("notes/mine.txt", "my notes\n"), (".git/HEAD", "ref: main\n")):
            (site / rel).parent.mkdir(parents=True, exist_ok=True)
            if not (site / rel).exists():
                (site / rel).write_text(text)
            made[site / rel] = (site / rel).read_bytes()
        if not (site / "link-out").is_symlink():
            (site / "link-out").symlink_to(victim)
    for name, inside in ((f".{site.name}.old-backup", ".reporter-site"), (f".{site.name}.tmp-2", ".reporter-building"),
                         (f".{site.name}.tmp-" + "0" * 32, ".reporter-building")):
        folder = site.parent / name
        folder.mkdir(exist_ok=True)
        (folder / inside).write_text("reporter 0.1.0\n")
        (folder / "keep.txt").write_text(f"{name}: someone else's\n")
        made[folder / "keep.txt"] = (folder / "keep.txt").read_bytes()
    return made


def stray_marker_home(work: Path) -> dict[Path, bytes]:
    """A home directory that holds a stray `.reporter-site`: never a site of ours."""
    home = work / "home"
    (home / ".ssh").mkdir(parents=True, exist_ok=True)
    files = {home / ".ssh" / "id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n", home / "thesis.tex": "\\chapter{One}\n",
             home / ".reporter-site": "reporter 0.1.0\nsource: an uncommitted tree\n"}
    for path, text in files.items():
        path.write_text(text)
    return {p: p.read_bytes() for p in files}


def touched(files: dict[Path, bytes]) -> list[str]:
    out = []
    for path, blob in files.items():
        try:
            if path.read_bytes() != blob:
                out.append(str(path))
        except OSError:
            out.append(str(path))
    return out


# --- hostile KernelBench run folders ---------------------------------------------------------------------

def _kernel(run: Path) -> Path:
    return run / "level_1_problem_2_sample_0_kernel.py"


def _relink(path: Path, target: str | Path) -> None:
    path.unlink()
    path.symlink_to(target)


IMPORT_CASES: dict[str, Callable[[Path, Path], object]] = {
    "results-list-for-dict": lambda run, out: (run / "eval_results.json").write_text(json.dumps(
        {"1": [{"sample_id": 0, "runtime_stats": [1], "ref_runtime_stats": ["x"], "metadata": [1]}]})),
    "int-hardware": lambda run, out: (run / "eval_results.json").write_text(json.dumps(
        {"1": [{"sample_id": 0, "compiled": True, "correctness": True, "runtime": 1.0, "ref_runtime": 2.0,
                "ref_runtime_stats": {"hardware": 7}, "metadata": {"hardware": 5}}]})),
    "results-top-level-list": lambda run, out: (run / "eval_results.json").write_text("[1, 2, 3]"),
    "non-utf8-kernel": lambda run, out: _kernel(run).write_bytes(b"# \xff\xfe\n"),
    "non-utf8-results": lambda run, out: (run / "eval_results.json").write_bytes(b'{"1": "\xff"}'),
    "dev-zero-kernel": lambda run, out: _relink(_kernel(run), "/dev/zero"),
    "fifo-kernel": lambda run, out: _fifo(_kernel(run)),
    "environ-kernel": lambda run, out: _relink(_kernel(run), "/proc/self/environ"),
    "billion-laughs": lambda run, out: (run / "generation_config.yaml").write_text(
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
        + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))),
    "out-trace-is-a-link": lambda run, out: _link_out_trace(out),
    "duplicate-samples": lambda run, out: _duplicate(run),
}


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _duplicate(run: Path) -> None:
    (run / "sub").mkdir()
    shutil.copy(_kernel(run), run / "sub" / _kernel(run).name)


def _link_out_trace(out: Path) -> None:
    dest = out / "kernelbench-run_new" / "l1-p1-s0"
    dest.mkdir(parents=True)
    (dest / "trace.json").symlink_to(out.parent / "outside" / "victim.txt")


def import_cases(work: Path, opens: Opens, repeats: int = 4) -> Counter[str]:
    """Every hostile run folder `repeats` times: import it and count what went wrong."""
    from reporter.collect.kernelbench import import_kernelbench
    bad: Counter[str] = Counter()
    os.environ["FUZZ_ENVIRON_MARKER"] = "environ-must-never-be-imported"
    for r in range(repeats):
        for name, make in IMPORT_CASES.items():
            case = work / f"import-{r}-{name}"
            run, out, outside = case / "run_new", case / "out", case / "outside"
            shutil.copytree(KB / "run_new", run)
            outside.mkdir(parents=True)
            victim = outside / "victim.txt"
            victim.write_text("the user's file\n")
            make(run, out)
            bad["cases"] += 1
            try:
                with opens.recording() as paths:
                    rep = timed(120, lambda run=run, out=out: import_kernelbench(run, KB / "problems", out))
            except Hang:
                bad["hangs"] += 1
                continue
            except Exception:  # noqa: BLE001 - counting them is the point
                bad["tracebacks"] += 1
                print(f"  import {name}: {traceback.format_exc(limit=2).strip().splitlines()[-1]}")
                continue
            bad["outside opens"] += len(Opens.outside(paths, run, KB / "problems", out))
            bad["user files touched"] += victim.read_text() != "the user's file\n"
            written = "".join(p.read_text() for p in out.rglob("trace.json") if not p.is_symlink())
            bad["environ imported"] += "environ-must-never-be-imported" in written
            if name == "duplicate-samples":
                bad["duplicates lost"] += len(rep.written) != 3
            shutil.rmtree(case)
    return bad


# --- publishing a site that holds links and files it did not write -------------------------------------------

def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout.strip()


def publish_cases(site: Path, work: Path) -> Counter[str]:
    """Publish a copy of a built site holding a link out and a user's file; and to branches it must refuse."""
    from reporter.core.errors import PublishError
    from reporter.publish import publish_site
    bad: Counter[str] = Counter()
    repo, copy, outside = work / "repo", work / "publish-site", work / "publish-outside"
    for path in (repo, copy, outside):
        shutil.rmtree(path, ignore_errors=True)
    shutil.copytree(site, copy, symlinks=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("OUTSIDE-CONTENT never published\n")
    (copy / "leak.html").symlink_to(outside / "secret.txt")
    (copy / "runs" / "notes.txt").write_text("USER-NOTE never published\n")
    repo.mkdir()
    for args in (("init", "-q", "-b", "main"), ("config", "user.email", "f@example.org"), ("config", "user.name", "f"),
                 ("commit", "-q", "--allow-empty", "-m", "source")):
        _git(repo, *args)
    main_tip = _git(repo, "rev-parse", "main")
    publish_site(copy, repo)
    tree = _git(repo, "ls-tree", "-r", "--name-only", "gh-pages").splitlines()
    blobs = subprocess.run(["git", "-C", str(repo), "grep", "-l", "-e", "OUTSIDE-CONTENT", "-e", "USER-NOTE", "gh-pages"],
                           capture_output=True, text=True).stdout
    bad["cases"] += 1
    bad["outside or user files published"] += ("leak.html" in tree) + ("runs/notes.txt" in tree) + bool(blobs.strip())
    for branch, force, checkout in (("main", False, None), ("main", True, None), ("gh-pages", False, "pages")):
        if checkout:
            _git(repo, "worktree", "add", "-q", str(work / checkout), branch)
        tip = _git(repo, "rev-parse", branch)
        bad["cases"] += 1
        try:
            publish_site(copy, repo, branch=branch, force=force)
            bad["branches taken over"] += 1
        except PublishError:
            pass
        bad["branches taken over"] += _git(repo, "rev-parse", branch) != tip
    bad["branches taken over"] += _git(repo, "rev-parse", "main") != main_tip
    _git(repo, "worktree", "remove", "--force", str(work / "pages"))
    return bad
