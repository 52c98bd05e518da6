"""A warm parent that has imported torch (never touching CUDA) and forks one worker child per kernel.

Isolation stays one process per kernel: each child runs ``worker.main`` in its own session, so a crash,
a hang or a sticky CUDA error still kills only that child. What the fork saves is the fresh interpreter
and ``import torch`` (seconds of CPU per kernel). Standard library only at import: the server runs on
GPU machines that have neither pydantic nor plotly.

Protocol, one JSON object per line, each a record below: the client writes a `Request`; the server
answers `Started` when the child starts and `Reaped` when it has been reaped.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from ..core import interpreter
from ..core.decode import from_doc
from ..core.work import WORK_MODE


@dataclass(frozen=True)
class Request:
    """Run the worker in `mode` on `job_dir` in a new child, with `env` applied (None removes a name)."""

    id: int
    mode: str
    job_dir: str
    env: Mapping[str, str | None]
    sent_at: float = 0.0  # time.monotonic() when sent: the worker's "start" phase runs from here to its first line


@dataclass(frozen=True)
class Started:
    id: int
    pid: int


@dataclass(frozen=True)
class Reaped:
    """The child ended: `rc` negative when killed by that signal; `cpu_s` the user + system time of the
    child and everything it waited for (ninja, nvcc, g++)."""

    id: int
    rc: int
    cpu_s: float


def to_line(message: Request | Started | Reaped) -> str:
    return json.dumps(asdict(message)) + "\n"


def request_from(line: str | bytes) -> Request:
    return from_doc(Request, json.loads(line))


def reply_from(line: str) -> Started | Reaped:
    doc = json.loads(line)
    if isinstance(doc, dict) and "pid" in doc:
        return from_doc(Started, doc)
    return from_doc(Reaped, doc)


def own_folder(job_dir: Path, mode: str) -> tuple[str, dict[str, str | None]]:
    """A new empty folder in the job's, to be the working directory of the child that runs trace content, and the
    environment that says so (PWD; no OLDPWD): what a reference or kernel writes where it runs, or where $PWD says
    it was started, lands there, never in DATA or the caller's folder (issue 43, item 7)."""
    folder = tempfile.mkdtemp(prefix=f"{mode}-cwd-", dir=job_dir)
    return folder, {"PWD": folder, "OLDPWD": None}


def _child(req: Request) -> int:
    """In the forked child: own session, own log, own working directory, own environment, then the worker's entry point."""
    os.setsid()
    job_dir = Path(req.job_dir)
    log = os.open(job_dir / f"{req.mode}.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    folder, where = own_folder(job_dir, req.mode)
    os.chdir(folder)
    for k, v in {**req.env, **where}.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    # Compiles run niced, so the short checks beside them get the CPU first and the GPU is not kept
    # waiting; checks use a share of the cores, not all of them each.
    os.nice(int(os.environ.get("REPORTER_NICE", "0")))
    if os.environ.get("REPORTER_THREADS"):
        import torch
        torch.set_num_threads(int(os.environ["REPORTER_THREADS"]))
    if req.mode == WORK_MODE:  # a reference's work count: no kernel, no GPU, no timing window
        from . import workcount
        return workcount.main(job_dir)
    os.environ["REPORTER_SENT_AT"] = repr(req.sent_at)
    from . import worker  # the timing code opens its own timing windows (gate.timing_window)
    return worker.main([req.mode, str(job_dir)])


def _reap(pids: dict[int, int], out: IO[str]) -> None:
    """Report every child that has ended (`pids`: child pid -> request id)."""
    while pids:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        rid = pids.pop(pid, None)
        if rid is None:
            continue
        rc = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        out.write(to_line(Reaped(rid, rc, usage.ru_utime + usage.ru_stime)))
        out.flush()


def serve() -> None:
    import torch  # noqa: F401 - the whole point: children start with torch already imported

    from . import worker  # noqa: F401
    if os.environ.get("REPORTER_FORK_WARM") == WORK_MODE:
        from . import workcount
        workcount.warm()  # the counter's lazy imports (FlopCounterMode pulls in torch._dynamo: seconds), once for all children
    out = sys.stdout
    pids: dict[int, int] = {}
    stdin = sys.stdin.fileno()
    buf = b""
    while True:
        ready, _, _ = select.select([stdin], [], [], 0.02)
        _reap(pids, out)
        if not ready:
            continue
        chunk = os.read(stdin, 65536)
        if not chunk:
            break
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            req = request_from(line)
            pid = os.fork()
            if pid == 0:
                try:
                    code = _child(req)
                except BaseException:  # noqa: BLE001 - the child must never return into the server loop
                    import traceback
                    traceback.print_exc()
                    code = 70
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
            pids[pid] = req.id
            out.write(to_line(Started(req.id, pid)))
            out.flush()
    while pids:  # the client went away: wait for the children still running, then leave
        time.sleep(0.05)
        _reap(pids, out)


class _Pending:
    def __init__(self) -> None:
        self.started = threading.Event()
        self.done = threading.Event()
        self.pid = 0
        self.rc = 0
        self.cpu_s = 0.0


class ForkServer:
    """Client side: start the server, run children on it from any number of threads."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(interpreter.module("reporter.validate.forkserver"), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env, text=True, bufsize=1, start_new_session=True)
        self.lock = threading.Lock()
        self.pending: dict[int, _Pending] = {}
        self.next_id = 0
        self.active: set[int] = set()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            msg = reply_from(line)
            with self.lock:
                p = self.pending.get(msg.id)
            if p is None:
                continue
            if isinstance(msg, Started):
                p.pid = msg.pid
                p.started.set()
            else:
                p.rc, p.cpu_s = msg.rc, msg.cpu_s
                p.started.set()
                p.done.set()
        with self.lock:  # the server died: nothing pending will ever finish
            for p in self.pending.values():
                p.rc = p.rc or -9
                p.started.set()
                p.done.set()

    def run(self, mode: str, job_dir: Path, env: dict[str, str | None], timeout_s: float,
            on_start: Any = None) -> tuple[int | None, float]:
        """(exit code or None on timeout, CPU seconds); the child is killed, its session and all, on timeout."""
        p = _Pending()
        with self.lock:
            rid = self.next_id
            self.next_id += 1
            self.pending[rid] = p
            assert self.proc.stdin is not None
            # absolute: the child runs in a folder of its own (`own_folder`)
            self.proc.stdin.write(to_line(Request(rid, mode, str(job_dir.absolute()), env, time.monotonic())))
            self.proc.stdin.flush()
        try:
            p.started.wait()
            with self.lock:
                self.active.add(p.pid)
            if on_start is not None and p.pid:
                on_start(p.pid)
            if not p.done.wait(timeout_s):
                kill_group(p.pid)
                p.done.wait(30)
                return None, p.cpu_s
            return p.rc, p.cpu_s
        finally:
            with self.lock:
                self.pending.pop(rid, None)
                self.active.discard(p.pid)

    def kill(self) -> None:
        """Interrupted: kill every running child (each in its own session), then the server."""
        with self.lock:
            pids = sorted(self.active)
        for pid in pids:
            kill_group(pid)
        kill_group(self.proc.pid)

    def close(self) -> None:
        if self.proc.stdin is not None:
            # After kill() the server is gone and closing flushes into a dead pipe: that error would replace
            # the interruption the caller is handling (a deadline's report was lost to it on the H200).
            with contextlib.suppress(BrokenPipeError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            kill_group(self.proc.pid)
            self.proc.wait()


def kill_group(pid: int) -> None:
    """Kill a child started in its own session (its process group id is its pid), and all it started."""
    if pid <= 0:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


if __name__ == "__main__":
    serve()
