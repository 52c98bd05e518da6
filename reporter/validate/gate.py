"""Keep other work out of timing windows, across processes on one machine.

Two kinds of quiet, because the timing bases differ in what disturbs them:

- every timed loop needs the GPU to itself: a second kernel on the same GPU would shift even device time,
  so every other check stops for the length of a window;
- the wall-clock and CUDA-graph bases also measure the host, so compiles stop too while they run
  (``quiet_host``). Device time is the GPU's own durations of the call's kernels: it is immune to CPU load
  (benchmarks/h200-timing-repeatability.txt: device-time spread at most 1.6% beside 14 busy-looping
  processes, where wall time spread 67%), so compiles run through it.

The gate is a folder (``REPORTER_GATE_DIR``, one per machine or per run), with one lane per GPU (the
``CUDA_VISIBLE_DEVICES`` value a check runs under): a window holds its own GPU, so the GPUs of one
machine time side by side.

- a timing window takes ``window-<lane>.lock`` (one window at a time per GPU), writes
  ``timing-<lane>.<pid>`` (and ``host.<pid>`` while the host must be quiet), waits until every registered
  process group it stops has written ``paused.<pgid>`` (or died), times, then removes its files;
- each process that starts compiles or checks runs a `CompileGuard`, which registers their process groups
  (``compile.<pgid>``, ``check-<lane>.<pgid>``) and stops them (SIGSTOP) as the open windows require: a
  lane's checks for any window of that lane but their own, compiles while a ``host.*`` exists; afterwards
  it continues them.

Standard library only: the timing side runs inside the isolated worker.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from pathlib import Path

from ..core.schema import EXCLUSIVE, GATE_WAIT, HOST_QUIET

POLL_S = 0.005
# A window never waits longer than this for others to stop (a guard that died must not hang timing).
MAX_WAIT_S = 5.0
KINDS = ("compile", "check")


def lane_of(visible: str | None) -> str:
    """A GPU's lane name from its CUDA_VISIBLE_DEVICES value ("default" when unset), safe in a file name."""
    return "".join(c if c.isalnum() or c == "-" else "_" for c in (visible or "default")) or "default"


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


def _wait_paused(gate: Path, prefixes: tuple[str, ...]) -> None:
    """Until every live group of these prefixes, other than this process's, has said it is paused (or MAX_WAIT_S)."""
    own = {os.getpid(), os.getpgid(0)}
    deadline = time.monotonic() + MAX_WAIT_S
    while time.monotonic() < deadline:
        running = {g for k in prefixes for g in _ids(gate, k) if g not in own and _alive(g)}
        if not running - _ids(gate, "paused"):
            return
        time.sleep(POLL_S)


@contextmanager
def timing_window(folder: str | None = None, quiet_host: bool = True, spent: MutableMapping[str, float] | None = None,
                  lane: str | None = None) -> Iterator[None]:
    """Hold this GPU (`lane`; default: this process's CUDA_VISIBLE_DEVICES) and, with `quiet_host`, the host still
    for the duration; `spent` adds up the seconds waited for the window (GATE_WAIT) and held (EXCLUSIVE; and
    HOST_QUIET with `quiet_host`).
    Without a gate folder nothing waits."""
    folder = folder or os.environ.get("REPORTER_GATE_DIR")
    spent = spent if spent is not None else {}
    t0 = held = time.perf_counter()
    files: list[Path] = []
    lock = None
    try:
        if folder:
            gate, me = Path(folder), os.getpid()
            lane = lane or lane_of(os.environ.get("CUDA_VISIBLE_DEVICES"))
            gate.mkdir(parents=True, exist_ok=True)
            files = [gate / f"timing-{lane}.{me}"] + ([gate / f"host.{me}"] if quiet_host else [])
            lock = open(gate / f"window-{lane}.lock", "w", encoding="utf-8")  # noqa: SIM115 - held across the yield
            fcntl.flock(lock, fcntl.LOCK_EX)
            for f in reversed(files):  # host.* first: a guard never sees this window without it
                f.touch()
            _wait_paused(gate, (f"check-{lane}", "compile") if quiet_host else (f"check-{lane}",))
            held = time.perf_counter()
        spent[GATE_WAIT] = spent.get(GATE_WAIT, 0.0) + held - t0
        yield
    finally:
        for total in (EXCLUSIVE, HOST_QUIET) if quiet_host else (EXCLUSIVE,):
            spent[total] = spent.get(total, 0.0) + time.perf_counter() - held
        for f in files:
            f.unlink(missing_ok=True)
        if lock is not None:
            fcntl.flock(lock, fcntl.LOCK_UN)
            lock.close()


class CompileGuard:
    """Registers process groups (compiles, and checks by GPU lane) and stops them while a timing window needs it.

    `windows` counts the windows seen, `exclusive_s` the seconds with one open on any GPU, `paused_s` the
    seconds compiles were stopped (a window that also needed the host quiet).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.lock = threading.Lock()
        self.names: dict[int, str] = {}  # pgid -> its file's prefix: "compile" or "check-<lane>"
        self.stopped: set[int] = set()
        self.paused_s = self.exclusive_s = 0.0
        self.windows = 0
        self._timing: dict[int, str] = {}  # window pid -> its lane
        self._host = False
        self._last = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    @property
    def groups(self) -> set[int]:
        return set(self.names)

    def register(self, pgid: int, kind: str = "compile", lane: str | None = None) -> None:
        """Register a compile's or (with its GPU's `lane`) a check's process group; stop it if a window needs that."""
        if kind not in KINDS:
            raise ValueError(f"a registered group is one of {KINDS}, not {kind!r}")
        with self.lock:
            self.names[pgid] = "compile" if kind == "compile" else f"check-{lane_of(lane)}"
            (self.folder / f"{self.names[pgid]}.{pgid}").touch()
            if self._stops(pgid):
                self._apply(self.stopped | {pgid})

    def checks_on(self, lane: str | None) -> tuple[Callable[[int], None], Callable[[int], None]]:
        """(on_start, on_end) hooks that register a check child on the GPU `lane` (a CUDA_VISIBLE_DEVICES value)."""
        return (lambda pgid: self.register(pgid, "check", lane)), self.unregister

    def unregister(self, pgid: int) -> None:
        with self.lock:
            name = self.names.pop(pgid, None)
            self.stopped.discard(pgid)
            if name is not None:
                (self.folder / f"{name}.{pgid}").unlink(missing_ok=True)
            (self.folder / f"paused.{pgid}").unlink(missing_ok=True)

    def _stops(self, pgid: int) -> bool:
        """Whether group `pgid` must stop for the windows open now (under the lock)."""
        name = self.names.get(pgid)
        if name == "compile":
            return self._host
        return any(f"check-{lane}" == name for pid, lane in self._timing.items() if pid != pgid)

    @staticmethod
    def _signal(pgid: int, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, sig)

    def _apply(self, want: set[int]) -> None:
        """Stop the groups in `want` that run, continue the stopped ones not in it (under the lock)."""
        stop, resume = want - self.stopped, self.stopped - want
        for g in resume:
            (self.folder / f"paused.{g}").unlink(missing_ok=True)
            self._signal(g, signal.SIGCONT)
        for g in stop:
            self._signal(g, signal.SIGSTOP)
        for g in stop:
            _wait_stopped(g)
            (self.folder / f"paused.{g}").touch()
        self.stopped = set(want)

    def _open_windows(self) -> tuple[dict[int, str], bool]:
        """The live windows (pid -> lane), and whether one needs the host quiet."""
        timing: dict[int, str] = {}
        for p in self.folder.glob("timing-*.*"):
            lane, _, pid = p.name[len("timing-"):].rpartition(".")
            if pid.isdigit() and _alive(int(pid)):
                timing[int(pid)] = lane
        return timing, any(_alive(pid) and pid in timing for pid in _ids(self.folder, "host"))

    def _watch(self) -> None:
        while not self._stop.wait(POLL_S):
            timing, host = self._open_windows()
            with self.lock:
                now = time.monotonic()
                if self._timing:
                    self.exclusive_s += now - self._last
                if any(self.names.get(g) == "compile" for g in self.stopped):
                    self.paused_s += now - self._last
                self._last = now
                self.windows += len(timing.keys() - self._timing.keys())
                self._timing, self._host = timing, host
                self._apply({g for g in self.names if self._stops(g)})

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        with self.lock:
            self._apply(set())
