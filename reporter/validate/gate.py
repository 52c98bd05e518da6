"""Keep CPU-heavy compiles out of timing windows, across processes on one machine.

Wall-clock timing measures the host too, so a kernel timed beside fifteen running compilers measures
them as well. The gate is a folder (``REPORTER_GATE_DIR``, one per machine or per run):

- a timing window writes ``timing.<pid>``, waits until every registered compile has written
  ``paused.<pgid>`` (or died), times, then removes its file;
- the process that started the compiles runs a `CompileGuard`: while any live ``timing.*`` exists it
  stops every compile's process group (SIGSTOP) and marks it paused; afterwards it continues them.

Standard library only: the timing side runs inside the isolated worker.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

POLL_S = 0.005
# A window never waits longer than this for compiles to stop (a guard that died must not hang timing).
MAX_WAIT_S = 5.0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _ids(folder: Path, prefix: str) -> set[int]:
    out = set()
    for p in folder.glob(prefix + ".*"):
        try:
            out.add(int(p.suffix[1:]))
        except ValueError:
            continue
    return out


@contextmanager
def timing_window(folder: str | None = None) -> Iterator[None]:
    """Hold compiles still for the duration; a no-op when no gate folder is configured."""
    folder = folder or os.environ.get("REPORTER_GATE_DIR")
    if not folder:
        yield
        return
    gate = Path(folder)
    gate.mkdir(parents=True, exist_ok=True)
    mine = gate / f"timing.{os.getpid()}"
    mine.touch()
    try:
        deadline = time.monotonic() + MAX_WAIT_S
        while time.monotonic() < deadline:
            running = {g for g in _ids(gate, "compile") if _alive(g)} - _ids(gate, "paused")
            if not running:
                break
            time.sleep(POLL_S)
        yield
    finally:
        mine.unlink(missing_ok=True)


class CompileGuard:
    """Registers compile process groups and stops them while any timing window is open."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.lock = threading.Lock()
        self.groups: set[int] = set()
        self.paused = False
        self.paused_s = 0.0
        self.windows = 0
        self._since = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def register(self, pgid: int) -> None:
        with self.lock:
            self.groups.add(pgid)
            (self.folder / f"compile.{pgid}").touch()
            if self.paused:
                self._signal(pgid, signal.SIGSTOP)
                (self.folder / f"paused.{pgid}").touch()

    def unregister(self, pgid: int) -> None:
        with self.lock:
            self.groups.discard(pgid)
            (self.folder / f"compile.{pgid}").unlink(missing_ok=True)
            (self.folder / f"paused.{pgid}").unlink(missing_ok=True)

    @staticmethod
    def _signal(pgid: int, sig: int) -> None:
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            pass

    def _timing_open(self) -> bool:
        return any(_alive(pid) for pid in _ids(self.folder, "timing"))

    def _watch(self) -> None:
        while not self._stop.wait(POLL_S):
            want = self._timing_open()
            with self.lock:
                if want and not self.paused:
                    self.paused, self._since = True, time.monotonic()
                    self.windows += 1
                    for g in self.groups:
                        self._signal(g, signal.SIGSTOP)
                        (self.folder / f"paused.{g}").touch()
                elif not want and self.paused:
                    self._resume()

    def _resume(self) -> None:
        self.paused = False
        self.paused_s += time.monotonic() - self._since
        for g in self.groups:
            (self.folder / f"paused.{g}").unlink(missing_ok=True)
            self._signal(g, signal.SIGCONT)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        with self.lock:
            if self.paused:
                self._resume()
