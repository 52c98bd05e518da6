"""Run the pipeline on a Ray cluster (``reporter validate DATA --executor ray [--address auto|HOST:PORT]``).

Compile tasks take one CPU of any node, machines without GPUs included (a node started with
``--num-gpus=0``, or ``--num-cpus=0`` on a GPU machine that should only check); check tasks take one GPU
(``num_gpus=1``; Ray sets ``CUDA_VISIBLE_DEVICES``) and no CPU slot, so a check never queues behind
compiles. The GPU architecture the compiles target is asked of a checking node. A finished build
travels to the checking node as a tar archive that goes from task to task without passing through the
driver; a node whose build cache already holds the key (a shared ``REPORTER_BUILD_CACHE``) skips the
unpacking. Every node builds and loads under the same ``REPORTER_BUILD_CACHE`` path (torch rebuilds
when the path in its build file differs). Results come back to the driver, which alone writes
``DATA/validation/``. Within a task, the kernel still runs in its own forked process, as locally.
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ...core import DISTRIBUTION, interpreter
from ...core.records import Environment
from ...core.schema import Verdict, WorkerJob
from .. import buildcache, steps
from ..forkserver import ForkServer
from ..gate import CompileGuard
from ..process import package_env
from ..recorder import Item, Outcome, RunStats
from ..refstore import ReferenceStore, problem_key, shared_problems
from ..steps import StepResult

# Per Ray worker process: one warm fork server per CUDA_VISIBLE_DEVICES value, one compile guard.
_SERVERS: dict[str, ForkServer] = {}
_GUARD: list[CompileGuard] = []
_LOCK = threading.Lock()


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise RuntimeError(f"--executor ray needs Ray: pip install '{DISTRIBUTION}[ray]'") from exc
    return ray


def connect(address: str | None, **local: Any) -> Any:
    """Join the cluster at `address`, or start a local one (`local`: ray.init's num_cpus, num_gpus...)
    whose workers import this copy of reporter."""
    ray = _ray()
    if not ray.is_initialized():
        # reporter's own install first; no empty entry (the worker's working directory), which joining an unset one left
        runtime = {"env_vars": {"PYTHONPATH": interpreter.pythonpath(dict(os.environ))}}
        ray.init(address=address, runtime_env=None if address else runtime, log_to_driver=False,
                 include_dashboard=False, **local)
    return ray


def _server(visible: str | None) -> ForkServer:
    with _LOCK:
        name = visible if visible is not None else "-"
        if name not in _SERVERS:
            _SERVERS[name] = ForkServer(package_env({"CUDA_VISIBLE_DEVICES": visible}))
        return _SERVERS[name]


def _gate_dir() -> Path:
    """One gate folder per machine, shared by every Ray worker process on it (absolute: each worker runs in a folder
    of its own)."""
    return Path(os.environ.get("REPORTER_GATE_DIR") or Path(tempfile.gettempdir()) / f"reporter-gate-{os.getuid()}").absolute()


def _guard() -> CompileGuard:
    with _LOCK:
        if not _GUARD:
            _GUARD.append(CompileGuard(_gate_dir()))
        return _GUARD[0]


def _node() -> str:
    return str(_ray().get_runtime_context().get_node_id())


def compile_task(job: WorkerJob, key: str, timeout_s: float, toolchain_env: dict[str, str | None],
                 gate: bool) -> tuple[StepResult, bytes]:
    """On a CPU worker: (the build step's result, the built folder as an archive or b"")."""
    root = buildcache.default_root()
    guard = _guard() if gate else None
    with tempfile.TemporaryDirectory(prefix="reporter-compile-") as tmp:
        comp = steps.build(_server(None), job, root, key, Path(tmp), timeout_s, toolchain_env,
                           on_start=guard.register if guard else None, on_end=guard.unregister if guard else None)
    return replace(comp, node=_node()), buildcache.pack(root, key) if comp.result.verdict == Verdict.CORRECT else b""


def check_task(job: WorkerJob, key: str, build_env: Mapping[str, str | None], archive: bytes, timeout_s: float,
               gate: bool, shared: bool = False) -> StepResult:
    """On a GPU worker: unpack the build unless this node has it, then check in a forked child, with the reference
    timing this node keeps for the problem (`shared`: the driver has more kernels of the problem to check)."""
    root = buildcache.default_root()
    if buildcache.built(root, key) is None:
        buildcache.unpack(root, key, archive)
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    server = _server(visible)
    with tempfile.TemporaryDirectory(prefix="reporter-check-") as tmp:
        out = steps.check(server, job, root, key, build_env, Path(tmp), timeout_s, str(_gate_dir()) if gate else None,
                          refs=ReferenceStore(root, visible or "default"), shared=shared)
    return replace(out, node=_node())


def _environment() -> tuple[Environment, str | None]:
    from ..machine import environment
    from ..recorder import _compute_capability
    env = environment()
    return env, _compute_capability() if env.gpu != "cpu" else None


def probe_environment(address: str | None) -> tuple[Environment, str | None]:
    """The checking machines' environment (one GPU model per cluster) and the TORCH_CUDA_ARCH_LIST to
    build for, asked of a GPU worker: the driver and the compiling machines may have no GPU at all."""
    ray = connect(address)
    gpus = ray.cluster_resources().get("GPU", 0)
    probe = ray.remote(num_gpus=1 if gpus else 0, num_cpus=0 if gpus else 1, max_calls=1)(_environment)
    env, arch = ray.get(probe.remote())
    return Environment.model_validate(env), arch


def _short(node: str) -> str:
    """A node, as the progress line and the benchmark name it: the first 8 digits of its Ray node id."""
    return f"node {(node or '?')[:8]}"


@dataclass(frozen=True)
class _Compiling:
    item: Item
    archive: Any  # the compile task's second return value: a Ray object reference to the archive


@dataclass(frozen=True)
class _Checking:
    item: Item
    built: StepResult
    ready_at: float


class RayExecutor:
    def __init__(self, address: str | None, toolchain_env: dict[str, str | None], timeout_s: float,
                 gate: bool = True) -> None:
        self.address, self.toolchain_env, self.timeout_s, self.gate = address, toolchain_env, timeout_s, gate

    def run(self, items: list[Item], on_outcome: Callable[[Outcome], None]) -> RunStats:
        ray = connect(self.address)
        gpus = ray.cluster_resources().get("GPU", 0)
        compile_remote = ray.remote(num_cpus=1, num_returns=2)(compile_task)
        check_remote = ray.remote(num_gpus=1 if gpus else 0, num_cpus=0 if gpus else 1)(check_task)
        t0 = time.monotonic()
        shared = shared_problems([it.job for it in items])
        pending: dict[Any, _Compiling | _Checking] = {}  # Ray object reference -> what it will hold
        for item in items:
            meta, archive = compile_remote.remote(item.job, item.build_key, self.timeout_s, self.toolchain_env, self.gate)
            pending[meta] = _Compiling(item, archive)
        while pending:
            (ref,), _ = ray.wait(list(pending), num_returns=1)
            task = pending.pop(ref)
            got: StepResult = ray.get(ref)
            now = time.monotonic()
            if isinstance(task, _Compiling) and got.result.verdict == Verdict.CORRECT:
                check = check_remote.remote(task.item.job, task.item.build_key, got.build_env, task.archive, self.timeout_s,
                                            self.gate, problem_key(task.item.job) in shared)
                pending[check] = _Checking(task.item, got, now)
            elif isinstance(task, _Compiling):
                on_outcome(Outcome(task.item, got.result, got.wall_s, got.cpu_s, compiled_at=now - t0,
                                   finished_at=now - t0, build=got.build, worker=f"ray: built on {_short(got.node)}"))
            else:
                comp, got = task.built, steps.with_build_phases(got, task.built)
                on_outcome(Outcome(task.item, got.result, comp.wall_s, comp.cpu_s, max(0.0, now - task.ready_at - got.wall_s),
                                   got.wall_s, got.cpu_s, task.ready_at - t0, now - t0, build=comp.build,
                                   worker=f"ray: built on {_short(comp.node)}, checked on {_short(got.node)}", gpu=got.node))
        return RunStats(wall_s=time.monotonic() - t0, compile_jobs=int(ray.cluster_resources().get("CPU", 0)),
                        check_workers=int(gpus) or 1)
