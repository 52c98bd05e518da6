"""Run the pipeline on this machine: a compile pool sized to the cores, one check worker per GPU.

Compiles feed a queue; each GPU's check worker takes the next built kernel the moment it is free, so
a GPU never waits while a built kernel is queued. Compiles are forked from one warm server, checks
from one warm server per GPU (``CUDA_VISIBLE_DEVICES`` set for it); every kernel still runs in its own
process. Unless the timing basis is immune to CPU load, a `CompileGuard` stops the compiles for the
length of every timing window.
"""

from __future__ import annotations

import os
import queue
import shutil
import tempfile
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Callable

from .. import steps
from ..forkserver import ForkServer
from ..gate import CompileGuard
from ..pipeline import Item, Outcome, RunStats
from ..process import package_env
from ..profiling import profile_ncu


class LocalExecutor:
    def __init__(self, gpus: list[str], compile_jobs: int, root: Path, toolchain_env: dict[str, str | None],
                 timeout_s: float, gate: bool = True, ncu: bool = False, checks_per_gpu: int = 4) -> None:
        self.gpus = gpus  # CUDA_VISIBLE_DEVICES values; empty: one worker on this machine's default device
        self.compile_jobs, self.root, self.toolchain_env = compile_jobs, root, toolchain_env
        self.timeout_s, self.gate, self.ncu = timeout_s, gate, ncu
        # Several checks share a GPU: most of a check is host work (loading, comparing on the CPU,
        # profiler start-up), and the gate stops everything else during a timing window. One kernel is
        # still one process.
        self.checks_per_gpu = max(1, checks_per_gpu)

    def run(self, items: list[Item], on_outcome: Callable[[Outcome], None]) -> RunStats:
        work = Path(tempfile.mkdtemp(prefix="reporter-validate-"))
        gate_dir = work / "gate"
        guard = CompileGuard(gate_dir) if self.gate else None
        compiler = ForkServer(package_env())
        checkers = [(g, ForkServer(package_env({"CUDA_VISIBLE_DEVICES": g}))) for g in self.gpus] or \
            [("default", ForkServer(package_env()))]
        ready: queue.Queue[tuple[Item, dict, float] | None] = queue.Queue()
        cpu_threads = max(1, len(os.sched_getaffinity(0)) // (len(checkers) * self.checks_per_gpu))
        errors: list[BaseException] = []
        emit_lock = threading.Lock()
        t0 = time.monotonic()

        def emit(outcome: Outcome) -> None:
            outcome.finished_at = time.monotonic() - t0
            with emit_lock:
                if errors:
                    return  # the run is stopping: write nothing more
                try:
                    on_outcome(outcome)
                except BaseException as exc:
                    errors.append(exc)
                    raise

        def compile_one(item: Item) -> None:
            comp = steps.build(compiler, item.job, self.root, item.build_key, work / item.build_key / "build",
                               self.timeout_s, self.toolchain_env, on_start=guard.register if guard else None,
                               on_end=guard.unregister if guard else None)
            if comp["verdict"] == "correct":
                ready.put((item, comp, time.monotonic()))
            else:
                emit(Outcome(item, comp, comp["wall_s"], comp["cpu_s"], compiled_at=time.monotonic() - t0,
                             build=comp["build"]))

        def check_loop(name: str, server: ForkServer) -> None:
            while (got := ready.get()) is not None:
                item, comp, ready_at = got
                started = time.monotonic()
                out = steps.check(server, item.job, self.root, item.build_key, comp["build_env"],
                                  work / item.build_key / f"check-{name}", self.timeout_s,
                                  str(gate_dir) if guard else None, on_start=guard.register if guard else None,
                                  on_end=guard.unregister if guard else None, threads=cpu_threads)
                out["phase_s"] = {**comp.get("phase_s", {}), **out.get("phase_s", {})}
                files = {}
                if self.ncu and out.get("kernel_timing"):
                    env = {**comp["build_env"], "CUDA_VISIBLE_DEVICES": None if name == "default" else name}
                    files = profile_ncu(item.job, self.root, item.build_key, env, work / item.build_key, self.timeout_s)
                emit(Outcome(item, out, comp["wall_s"], comp["cpu_s"], started - ready_at, out["wall_s"],
                             ready_at - t0, build=comp["build"], worker=f"gpu {name}", ncu_files=files))

        def guarded(name: str, server: ForkServer) -> None:
            try:
                check_loop(name, server)
            except BaseException as exc:  # noqa: BLE001 - re-raised by the main thread
                if exc not in errors:
                    errors.append(exc)

        threads = [threading.Thread(target=guarded, args=c, daemon=True) for c in checkers
                   for _ in range(self.checks_per_gpu)]
        for t in threads:
            t.start()
        pool = ThreadPoolExecutor(max_workers=self.compile_jobs)
        try:
            pending = {pool.submit(compile_one, it) for it in items}
            while pending:
                done, pending = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
                for f in done:
                    f.result()
                if errors:
                    raise errors[0]
            for _ in threads:
                ready.put(None)
            for t in threads:
                while t.is_alive() and not errors:
                    t.join(0.1)
            if errors:
                raise errors[0]
        except BaseException:
            # Interrupted: stop everything we started; results already stored stay, so a rerun resumes.
            for server in [compiler] + [s for _, s in checkers]:
                server.kill()
            raise
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
            stats = RunStats(wall_s=time.monotonic() - t0, compile_jobs=self.compile_jobs, check_workers=len(threads))
            if guard is not None:
                guard.close()
                stats.paused_s, stats.timing_windows = guard.paused_s, guard.windows
            for server in [compiler] + [s for _, s in checkers]:
                server.close()
            shutil.rmtree(work, ignore_errors=True)
        return stats
