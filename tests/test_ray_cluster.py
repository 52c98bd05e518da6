"""The Ray executor on a two-node cluster started with `ray start` on this machine: a machine without GPUs
that only compiles, and a (fake) GPU machine that only checks.

The nodes get separate build caches, as machines that share no filesystem would, so every build reaches
its check through Ray's object store. The verdicts must be the local executor's, every compile must run
on the GPU-less node and every check on the GPU node, and no kernel may be compiled twice. Robust on a busy
2-core machine: generous start-up waits, a skip when Ray cannot start here, and the nodes this test started
(their process groups) stopped whatever happens.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import DATA, KERNELS, kernel_run
from reporter.collect import collect
from reporter.core.records import ValidationSettings
from reporter.validate import validate_runs
from reporter.validate.recorder import RunStats

pytest.importorskip("torch")
# Looked for, not imported: importing ray costs each xdist worker ~1 s at collection, and the README's
# command (-m "not slow") runs none of this module's tests.
if importlib.util.find_spec("ray") is None:
    pytest.skip("ray is not installed", allow_module_level=True)

# Never beside test_ray.py's local Ray (one xdist worker runs both, one after the other).
pytestmark = pytest.mark.xdist_group("ray")
SETTINGS = ValidationSettings(nominal_trials=2, jitter_trials=2, perf_trials=3, warmup=1, timeout_s=120, time_cap_s=0.05)
FIXTURES = ("correct", "wrong", "segfaults", "accel_fails", "counts_builds")
START_S = 240.0  # a node coming up on a loaded 2-core machine


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for(log: Path, text: str, proc: subprocess.Popen[bytes]) -> str:
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        got = log.read_text(errors="replace") if log.is_file() else ""
        if text in got:
            return got
        if proc.poll() is not None:
            break
        time.sleep(1)
    pytest.skip(f"ray start did not come up here: {(log.read_text(errors='replace') if log.is_file() else '')[-800:]}")


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    """Each `ray start --block` leads its own session: its group holds every process the node started."""
    for sig, wait_s in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, sig)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and any(p.poll() is None for p in procs):
            time.sleep(0.2)


@pytest.fixture
def two_nodes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Path | str]]:
    """A head with 2 CPUs and no GPU, and a worker with 2 fake GPUs and no CPU slot; yields their settings."""
    if shutil.which("ray") is None and not (Path(sys.executable).parent / "ray").exists():
        pytest.skip("no ray command")
    ray_cmd = shutil.which("ray") or str(Path(sys.executable).parent / "ray")
    temp = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))  # short: Ray's socket paths must fit in 107 bytes
    log = tmp_path / "builds.log"
    base = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0", "COUNT_BUILDS_LOG": str(log),
            "PYTHONPATH": str(Path(__file__).resolve().parents[1]) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    monkeypatch.setenv("COUNT_BUILDS_LOG", str(log))
    common = ["--block", "--disable-usage-stats", f"--temp-dir={temp}", "--object-store-memory=100000000"]
    procs: list[subprocess.Popen[bytes]] = []

    def start(name: str, args: list[str], cache: Path) -> tuple[Path, subprocess.Popen[bytes]]:
        out = tmp_path / f"{name}.log"
        proc = subprocess.Popen([ray_cmd, "start", *args, *common], env={**base, "REPORTER_BUILD_CACHE": str(cache)},
                                stdout=out.open("wb"), stderr=subprocess.STDOUT, start_new_session=True)
        procs.append(proc)
        return out, proc
    try:
        head_log, head = start("head", ["--head", f"--port={_free_port()}", "--num-cpus=2", "--num-gpus=0",
                                        "--include-dashboard=false"], tmp_path / "cache-compile")
        found = re.search(r"ray start --address='([^']+)'", _wait_for(head_log, "Ray runtime started", head))
        assert found is not None
        worker_log, worker = start("worker", [f"--address={found.group(1)}", "--num-cpus=0", "--num-gpus=2"],
                                   tmp_path / "cache-check")
        _wait_for(worker_log, "Ray runtime started", worker)
        yield {"address": found.group(1), "log": log, "compile_cache": tmp_path / "cache-compile",
               "check_cache": tmp_path / "cache-check"}
    finally:
        import ray
        if ray.is_initialized():
            ray.shutdown()
        _stop(procs)
        shutil.rmtree(temp, ignore_errors=True)


def _data(folder: Path) -> Path:
    shutil.copytree(DATA, folder, ignore=shutil.ignore_patterns("validation"))
    for name in FIXTURES:
        kernel_run(folder, name, (KERNELS / f"{name}.py").read_text())
    return folder


def _node_ids(address: str) -> tuple[str, str]:
    """(the GPU-less node, the GPU node), once both have joined."""
    import ray

    from reporter.validate.executors.ray import connect
    connect(address)
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        nodes = [n for n in ray.nodes() if n["Alive"]]
        if len(nodes) == 2:
            cpu = next(n["NodeID"] for n in nodes if not n["Resources"].get("GPU"))
            gpu = next(n["NodeID"] for n in nodes if n["Resources"].get("GPU"))
            return cpu, gpu
        time.sleep(1)
    pytest.skip("the worker node never joined the head")


@pytest.mark.slow  # a Ray cluster on two busy cores: minutes of wall time
def test_compiles_on_the_gpu_less_node_checks_on_the_gpu_node_same_verdicts(tmp_path: Path,
                                                                          two_nodes: dict[str, Path | str]) -> None:
    local_data, ray_data = _data(tmp_path / "local"), _data(tmp_path / "ray")
    local = validate_runs(local_data, collect(local_data).runs, SETTINGS, device="cpu")
    cpu_node, gpu_node = _node_ids(str(two_nodes["address"]))
    stats: list[RunStats] = []
    remote = validate_runs(ray_data, collect(ray_data).runs, SETTINGS, device="cpu", executor="ray",
                           address=str(two_nodes["address"]), stats=stats)
    assert sorted(remote) == sorted(local) and set(FIXTURES) < set(remote)
    for run_id, (res, _) in local.items():
        got = remote[run_id][0]
        assert (got.verdict, got.reason.split(":")[0]) == (res.verdict, res.reason.split(":")[0]), run_id
        assert [t.passed for t in got.trials] == [t.passed for t in res.trials], run_id
    assert {r.verdict for r, _ in remote.values()} >= {"correct", "incorrect", "crashed", "compile_error"}
    checked = [o for o in stats[0].outcomes if o.check_s > 0]
    assert len(checked) >= 4
    for o in stats[0].outcomes:
        assert f"built on node {cpu_node[:8]}" in o.worker, (o.item.run_id, o.worker)
    for o in checked:
        assert o.worker.endswith(f"checked on node {gpu_node[:8]}"), (o.item.run_id, o.worker)
    # One compile per kernel and executor: the local one, and the Ray one on the compiling node; the
    # checking node, which shares no build cache with it, loaded the build it was sent.
    builds = Path(two_nodes["log"]).read_text().splitlines()
    assert len(builds) == 2, builds
    assert sum(line.startswith(str(two_nodes["compile_cache"])) for line in builds) == 1
    assert not any(line.startswith(str(two_nodes["check_cache"])) for line in builds)
