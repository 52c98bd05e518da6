"""Keep CPU-heavy compiles, and other kernels' checks, out of timing windows, across processes on one machine.

Wall-clock timing measures the host too, so a kernel timed beside fifteen running compilers measures
them as well; a second kernel running on the same GPU would shift even device time. The gate is a
folder (``REPORTER_GATE_DIR``, one per machine or per run):

- a timing window takes ``window.lock`` (one window at a time), writes ``timing.<pid>``, waits until
  every other registered process group has written ``paused.<pgid>`` (or died), times, then removes
  its file;
- each process that starts compiles or checks runs a `CompileGuard` and registers their process groups
  (``member.<pgid>``): while any live ``timing.*`` exists it stops every registered group but the one
  timing (SIGSTOP) and marks it paused; afterwards it continues them.

Standard library only: the timing side runs inside the isolated worker.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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


def _wait_stopped(pid: int, limit_s: float = 0.1) -> None:
    """SIGSTOP is asynchronous: wait (briefly) until the group leader is really stopped."""
    stat = Path(f"/proc/{pid}/stat")
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        try:
            if stat.read_text().rsplit(")", 1)[1].split()[0] in "Tt":
                return
        except (OSError, IndexError):
            return  # gone, or no /proc: nothing more to wait for
        time.sleep(0.001)


@contextmanager
def timing_window(folder: str | None = None) -> Iterator[None]:
    """Hold compiles still for the duration; a no-op when no gate folder is configured."""
    folder = folder or os.environ.get("REPORTER_GATE_DIR")
    if not folder:
        yield
        return
    gate = Path(folder)
    gate.mkdir(parents=True, exist_ok=True)
    me = os.getpid()
    mine = gate / f"timing.{me}"
    with open(gate / "window.lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        mine.touch()
        try:
            deadline = time.monotonic() + MAX_WAIT_S
            while time.monotonic() < deadline:
                running = {g for g in _ids(gate, "member") if g not in (me, os.getpgid(0)) and _alive(g)}
                if not running - _ids(gate, "paused"):
                    break
                time.sleep(POLL_S)
            yield
        finally:
            mine.unlink(missing_ok=True)
            fcntl.flock(lock, fcntl.LOCK_UN)


class CompileGuard:
    """Registers process groups (compiles, checks) and stops them while another's timing window is open."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.lock = threading.Lock()
        self.groups: set[int] = set()
        self.paused = False
        self.paused_s = 0.0
        self.windows = 0
        self._since = 0.0
        self._timing: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def register(self, pgid: int) -> None:
        with self.lock:
            self.groups.add(pgid)
            (self.folder / f"member.{pgid}").touch()
            if self.paused and pgid not in self._timing:
                self._signal(pgid, signal.SIGSTOP)
                _wait_stopped(pgid)
                (self.folder / f"paused.{pgid}").touch()

    def unregister(self, pgid: int) -> None:
        with self.lock:
            self.groups.discard(pgid)
            (self.folder / f"member.{pgid}").unlink(missing_ok=True)
            (self.folder / f"paused.{pgid}").unlink(missing_ok=True)

    @staticmethod
    def _signal(pgid: int, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, sig)

    def _open_windows(self) -> set[int]:
        return {pid for pid in _ids(self.folder, "timing") if _alive(pid)}

    def _watch(self) -> None:
        while not self._stop.wait(POLL_S):
            timing = self._open_windows()
            with self.lock:
                if timing and not self.paused:
                    self.paused, self._since, self._timing = True, time.monotonic(), timing
                    self.windows += 1
                    stop = self.groups - timing
                    for g in stop:
                        self._signal(g, signal.SIGSTOP)
                    for g in stop:
                        _wait_stopped(g)
                        (self.folder / f"paused.{g}").touch()
                elif not timing and self.paused:
                    self._resume()
                elif timing and timing != self._timing:
                    self._resume()  # the next window belongs to another process: stop its predecessor too

    def _resume(self) -> None:
        self.paused = False
        self.paused_s += time.monotonic() - self._since
        for g in self.groups - self._timing:
            (self.folder / f"paused.{g}").unlink(missing_ok=True)
            self._signal(g, signal.SIGCONT)
        self._timing = set()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        with self.lock:
            if self.paused:
                self._resume()
