"""Starting the isolated worker: a fork of a warm server (the default) or a fresh interpreter (for ncu).

Either way one kernel runs in one process, with a timeout; a crash, hang or sticky CUDA error becomes
a verdict. Standard library only (the Ray executor imports this on GPU workers).
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ..core import interpreter
from ..core.schema import Verdict, WorkerJob, WorkerResult
from .forkserver import ForkServer, own_folder


def package_env(extra: dict[str, str | None] | None = None) -> dict[str, str]:
    """This process's environment with reporter importable and `extra` applied (None removes a name). The worker
    itself ignores PYTHON* variables (`core.interpreter`); these are for the programs it starts in turn."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONPATH"] = interpreter.pythonpath(env)
    for k, v in (extra or {}).items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def _write_job(job: WorkerJob, job_dir: Path, mode: str) -> None:
    job_dir.mkdir(parents=True, exist_ok=True)
    (job_dir / "job.json").write_text(job.to_json(), encoding="utf-8")
    (job_dir / f"{mode}.json").unlink(missing_ok=True)


# Lines of a dead worker's output kept as the crash's evidence, and the longest line quoted in its verdict.
TAIL_LINES = 20
QUOTED_CHARS = 300


def last_lines(log: str, n: int = TAIL_LINES) -> str:
    """The last `n` non-blank lines of a worker's output (stdout and stderr share one log)."""
    return "\n".join([line.rstrip() for line in log.splitlines() if line.strip()][-n:])


def _quoted(tail: str) -> str:
    last = tail.rsplit("\n", 1)[-1].strip()
    return f"; its last output: \u201c{last[:QUOTED_CHARS]}\u201d" if last else "; it wrote no output"


def _died(rc: int) -> str:
    if rc >= 0:
        return f"exit code {rc}"
    try:
        name = f" ({signal.Signals(-rc).name})"
    except ValueError:
        name = ""
    return f"exit code {rc}, signal {-rc}{name}"


def _saved(path: Path) -> WorkerResult | str | None:
    """The result the worker wrote; why it cannot be read when it is not a `WorkerResult` (the kernel runs in
    the worker's process and can write anything there); None when there is none."""
    if not path.is_file():
        return None
    try:
        return WorkerResult.from_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        return f"its result file is not a worker result ({str(exc)[:QUOTED_CHARS]})"


def read_result(mode: str, job_dir: Path, rc: int | None, timeout_s: float) -> WorkerResult:
    """The worker's result; for a worker that wrote none (killed, crashed), a verdict that quotes its last output."""
    log_path = job_dir / f"{mode}.log"
    tail = log_path.read_text(encoding="utf-8", errors="replace")[-6000:] if log_path.is_file() else ""
    saved = _saved(job_dir / f"{mode}.json")
    # A result saved before an optional step stands even when that step killed the worker or ran out of time.
    if isinstance(saved, WorkerResult) and (rc is not None or saved.pending):
        return replace(saved, log=(saved.log + "\n" + tail).strip()[-6000:])
    lines = last_lines(tail)
    if rc is None:
        return WorkerResult(Verdict.TIMEOUT, f"{mode} did not finish within {timeout_s:g} s (killed)" + _quoted(lines),
                            log=tail, output_tail=lines or None)
    why = f"the worker ended ({_died(rc)}), but {saved}" if isinstance(saved, str) else \
        f"the worker died ({_died(rc)}) before writing a result"
    return WorkerResult(Verdict.CRASHED, why + _quoted(lines), log=tail, output_tail=lines or None)


def run_forked(server: ForkServer, mode: str, job: WorkerJob, job_dir: Path, timeout_s: float,
               env: dict[str, str | None], on_start: Callable[[int], None] | None = None) -> tuple[WorkerResult, float]:
    """One worker child forked from `server`: its result and its CPU seconds."""
    _write_job(job, job_dir, mode)
    rc, cpu_s = server.run(mode, job_dir, env, timeout_s, on_start)
    return read_result(mode, job_dir, rc, timeout_s), cpu_s


def run_fresh(mode: str, job: WorkerJob, job_dir: Path, timeout_s: float, env: dict[str, str | None],
              prefix: list[str] | None = None) -> WorkerResult:
    """One worker in a fresh interpreter, e.g. under a profiler that must start the process itself; in a folder of its
    own, as a forked one (`forkserver.own_folder`)."""
    job_dir = job_dir.absolute()
    _write_job(job, job_dir, mode)
    cmd = (prefix or []) + interpreter.module("reporter.validate.worker", mode, str(job_dir))
    folder, where = own_folder(job_dir, mode)
    with open(job_dir / f"{mode}.log", "wb") as log:
        try:
            proc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=package_env({**env, **where}), timeout=timeout_s,
                                  start_new_session=True, cwd=folder)
            rc: int | None = proc.returncode
        except subprocess.TimeoutExpired:
            rc = None
    return read_result(mode, job_dir, rc, timeout_s)
