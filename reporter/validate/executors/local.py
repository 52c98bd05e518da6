"""Run the pipeline on this machine: a compile pool sized to the cores, one check worker per GPU.

Compiles feed a queue; each GPU's check worker takes the next built kernel the moment it is free, so
a GPU never waits while a built kernel is queued. Compiles are forked from one warm server, checks
from one warm server per GPU (``CUDA_VISIBLE_DEVICES`` set for it); every kernel still runs in its own
process. Unless the timing basis is immune to CPU load, a `CompileGuard` stops the compiles for the
length of every timing window.
"""

from __future__ import annotations

import dataclasses
import os
import queue
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

from ...core.schema import Verdict, WorkerJob
from .. import steps
from ..forkserver import ForkServer
from ..gate import CompileGuard
from ..process import package_env
from ..profiling import profile_ncu
from ..recorder import Item, Outcome, RunStats
from ..refstore import ReferenceStore, problem_key, shared_problems
from ..slots import GpuSlots, ran_out_of_memory
from ..steps import StepResult
from ..throughput import RETRIED_PHASE


class LocalExecutor:
    def __init__(self, gpus: list[str], compile_jobs: int, root: Path, toolchain_env: dict[str, str | None],
                 timeout_s: float, gate: bool = True, ncu: bool = False, checks_per_gpu: int = 4,
                 prepare: Callable[[WorkerJob], WorkerJob] | None = None) -> None:
        self.gpus = gpus  # CUDA_VISIBLE_DEVICES values; empty: one worker on this machine's default device
        self.compile_jobs, self.root, self.toolchain_env = compile_jobs, root, toolchain_env
        self.timeout_s, self.gate, self.ncu = timeout_s, gate, ncu
        # Several checks share a GPU: most of a check is host work (loading, comparing on the CPU,
        # profiler start-up), and the gate stops everything else during a timing window. One kernel is
        # still one process.
        self.checks_per_gpu = max(1, checks_per_gpu)
        self.prepare = prepare  # completes a job before its check (waits for what the check needs: its problem's strength)

    def run(self, items: list[Item], on_outcome: Callable[[Outcome], None]) -> RunStats:
        return _Run(self, on_outcome).go(items)


class _Run:
    """One run of a LocalExecutor: its servers, queue and threads."""

    def __init__(self, ex: LocalExecutor, on_outcome: Callable[[Outcome], None]) -> None:
        self.ex, self.on_outcome = ex, on_outcome
        self.work = Path(tempfile.mkdtemp(prefix="reporter-validate-"))
        self.gate_dir = str(self.work / "gate") if ex.gate else None
        self.guard = CompileGuard(self.work / "gate") if ex.gate else None
        self.compiler = ForkServer(package_env())
        self.checkers = [(g, ForkServer(package_env({"CUDA_VISIBLE_DEVICES": g}))) for g in ex.gpus] or \
            [("default", ForkServer(package_env()))]
        self.slots = {name: GpuSlots() for name, _ in self.checkers}
        self.refs = {name: ReferenceStore(ex.root, name) for name, _ in self.checkers}
        self.shared: set[str] = set()  # problems with several kernels in this run: their reference is timed once
        self.retried_alone: list[str] = []  # run ids whose check ran out of GPU memory beside others
        self.ready: queue.Queue[tuple[Item, StepResult, float] | None] = queue.Queue()  # (item, its build, built at)
        self.cpu_threads = max(1, len(os.sched_getaffinity(0)) // (len(self.checkers) * ex.checks_per_gpu))
        self.errors: list[BaseException] = []
        self.emit_lock = threading.Lock()
        self.t0 = time.monotonic()

    def _hooks(self, gpu: str | None = None) -> tuple[Callable[[int], None] | None, Callable[[int], None] | None]:
        """(on_start, on_end) for a step's worker child: the compile guard registers it for the timing gate, as a
        compile or (with `gpu`, its checker's name) as a check on that GPU."""
        g = self.guard
        if g is None:
            return None, None
        return g.checks_on(gpu) if gpu is not None else (g.register, g.unregister)

    def emit(self, outcome: Outcome) -> None:
        outcome = dataclasses.replace(outcome, finished_at=time.monotonic() - self.t0)
        with self.emit_lock:
            if self.errors:
                return  # the run is stopping: write nothing more
            try:
                self.on_outcome(outcome)
            except BaseException as exc:
                self.errors.append(exc)
                raise

    def job_dir(self, step: str, item: Item) -> Path:
        """A new folder for one step of one item: never shared, even by runs of one kernel (one build key)."""
        return Path(tempfile.mkdtemp(prefix=f"{step}-{item.key[:12]}-", dir=self.work))

    def compile_one(self, item: Item) -> None:
        ex = self.ex
        on_start, on_end = self._hooks()
        comp = steps.build(self.compiler, item.job, ex.root, item.build_key, self.job_dir("build", item),
                           ex.timeout_s, ex.toolchain_env, on_start=on_start, on_end=on_end)
        if comp.result.verdict == Verdict.CORRECT:
            self.ready.put((item, comp, time.monotonic()))
        else:
            self.emit(Outcome(item, comp.result, comp.wall_s, comp.cpu_s, compiled_at=time.monotonic() - self.t0,
                              build=comp.build))

    def check_loop(self, name: str, server: ForkServer) -> None:
        ex = self.ex
        while (got := self.ready.get()) is not None:
            item, comp, ready_at = got
            started = time.monotonic()
            out = self.check_one(name, server, item, comp)
            files: dict[str, Path] = {}
            ncu_at = time.monotonic()
            if ex.ncu and out.result.kernel_timing:
                env = {**comp.build_env, "CUDA_VISIBLE_DEVICES": None if name == "default" else name}
                with self.slots[name].alone():  # ncu serialises the GPU anyway; nothing else should share it
                    # the round's own time: waiting for the other slots' checks to finish is theirs, not the profile's
                    ncu_at = time.monotonic()
                    files = profile_ncu(item.job, ex.root, item.build_key, env, self.job_dir("ncu", item), ex.timeout_s)
            self.emit(Outcome(item, out.result, comp.wall_s, comp.cpu_s, started - ready_at, out.wall_s, out.cpu_s,
                              ready_at - self.t0, build=comp.build, worker=f"gpu {name}", ncu_files=files, gpu=name,
                              ncu_s=time.monotonic() - ncu_at if ex.ncu and out.result.kernel_timing else 0.0))

    def check_one(self, name: str, server: ForkServer, item: Item, comp: StepResult) -> StepResult:
        """The check, with the build's phase times; run again alone on the GPU when it ran out of memory beside others."""
        ex, slots = self.ex, self.slots[name]
        on_start, on_end = self._hooks(gpu=name)

        job = ex.prepare(item.job) if ex.prepare else item.job

        def attempt() -> StepResult:
            return steps.check(server, job, ex.root, item.build_key, comp.build_env,
                               self.job_dir(f"check-{name}", item), ex.timeout_s, self.gate_dir,
                               threads=self.cpu_threads, on_start=on_start, on_end=on_end, refs=self.refs[name],
                               shared=problem_key(item.job) in self.shared)
        with slots.shared():
            out = attempt()
        if ex.checks_per_gpu > 1 and ran_out_of_memory(out.result):
            self.retried_alone.append(item.run_id)
            with slots.alone():
                again = attempt()
            # Both checks' wall time count towards the throughput; the first one's verdict does not count.
            phases = {**again.result.phase_s, RETRIED_PHASE: out.wall_s}
            out = dataclasses.replace(again, result=dataclasses.replace(again.result, phase_s=phases),
                                      wall_s=again.wall_s + out.wall_s)
        return steps.with_build_phases(out, comp)

    def guarded(self, name: str, server: ForkServer) -> None:
        try:
            self.check_loop(name, server)
        except BaseException as exc:  # noqa: BLE001 - re-raised by the main thread
            if exc not in self.errors:
                self.errors.append(exc)

    def _drain(self, items: list[Item], threads: list[threading.Thread], pool: ThreadPoolExecutor) -> None:
        pending = {pool.submit(self.compile_one, it) for it in items}
        while pending:
            done, pending = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
            for f in done:
                f.result()
            if self.errors:
                raise self.errors[0]
        for _ in threads:
            self.ready.put(None)
        for t in threads:
            while t.is_alive() and not self.errors:
                t.join(0.1)
        if self.errors:
            raise self.errors[0]

    def go(self, items: list[Item]) -> RunStats:
        self.shared = shared_problems([it.job for it in items])
        servers = [self.compiler] + [s for _, s in self.checkers]
        threads = [threading.Thread(target=self.guarded, args=c, daemon=True) for c in self.checkers
                   for _ in range(self.ex.checks_per_gpu)]
        for t in threads:
            t.start()
        pool = ThreadPoolExecutor(max_workers=self.ex.compile_jobs)
        try:
            self._drain(items, threads, pool)
        except BaseException as exc:
            # Interrupted: stop everything we started; results already stored stay, so a rerun resumes. The
            # interruption is noted first, under the emit lock: a worker killed now would otherwise be stored as
            # "crashed", a verdict about a kernel that says only that we stopped it.
            with self.emit_lock:
                if exc not in self.errors:
                    self.errors.append(exc)
            for server in servers:
                server.kill()
            raise
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
            if self.guard is not None:
                self.guard.close()
            stats = RunStats(wall_s=time.monotonic() - self.t0, compile_jobs=self.ex.compile_jobs,
                             check_workers=len(threads), paused_s=self.guard.paused_s if self.guard else 0.0,
                             timing_windows=self.guard.windows if self.guard else 0,
                             exclusive_s=self.guard.exclusive_s if self.guard else 0.0,
                             retried_alone=tuple(sorted(self.retried_alone)))
            for server in servers:
                server.close()
            shutil.rmtree(self.work, ignore_errors=True)
        return stats
