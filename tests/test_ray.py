"""The Ray executor on CPU: a local Ray instance that claims two (fake) GPUs gives the local verdicts."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from conftest import DATA, KERNELS, SIGMOID_NO_JITTER, kernel_run
from reporter.collect import collect
from reporter.core.records import ValidationSettings
from reporter.validate import validate_runs

pytest.importorskip("torch")
# Looked for, not imported: importing ray costs each xdist worker ~1 s at collection, and the README's
# command (-m "not slow") runs none of this module's tests.
if importlib.util.find_spec("ray") is None:
    pytest.skip("ray is not installed", allow_module_level=True)

# Never beside test_ray_cluster.py's nodes: each takes both cores, and a local Ray must not find the cluster.
pytestmark = pytest.mark.xdist_group("ray")
SETTINGS = ValidationSettings(nominal_trials=2, jitter_trials=2, perf_trials=3, warmup=1, timeout_s=60, time_cap_s=0.05)
FIXTURES = ("correct", "wrong", "segfaults", "accel_fails")


@pytest.fixture(scope="module")
def local_ray():  # type: ignore[no-untyped-def]
    from reporter.validate.executors.ray import connect
    connect(None, num_cpus=2, num_gpus=2)
    yield
    import ray
    ray.shutdown()


def _data(folder: Path) -> Path:
    shutil.copytree(DATA, folder, ignore=shutil.ignore_patterns("validation"))
    for name in FIXTURES:
        kernel_run(folder, name, (KERNELS / f"{name}.py").read_text())
    # correct.py's kernel again, against a reference it is wrong for: one build key, two checks
    kernel_run(folder, "correct_other_reference", (KERNELS / "correct.py").read_text(), reference=SIGMOID_NO_JITTER)
    return folder


@pytest.mark.slow  # a Ray cluster on two busy cores: minutes of wall time
def test_ray_executor_gives_the_local_verdicts(tmp_path: Path, local_ray: None) -> None:
    local_data, ray_data = _data(tmp_path / "local"), _data(tmp_path / "ray")
    local = validate_runs(local_data, collect(local_data).runs, SETTINGS, device="cpu")
    remote = validate_runs(ray_data, collect(ray_data).runs, SETTINGS, device="cpu", executor="ray")
    assert sorted(remote) == sorted(local)
    assert set(FIXTURES) < set(remote)  # ...and the sample data's kernels beside them
    for run_id, (res, cached) in local.items():
        got, got_cached = remote[run_id]
        assert not cached and not got_cached
        assert (got.verdict, got.reason.split(":")[0]) == (res.verdict, res.reason.split(":")[0]), run_id
        assert [t.passed for t in got.trials] == [t.passed for t in res.trials], run_id
    assert {r.verdict for r, _ in remote.values()} >= {"correct", "incorrect", "crashed", "compile_error"}
    assert (remote["correct"][0].verdict, remote["correct_other_reference"][0].verdict) == ("correct", "incorrect")
    # The driver wrote every result: a second pass finds them all in DATA/validation.
    again = validate_runs(ray_data, collect(ray_data).runs, SETTINGS, device="cpu", executor="ray")
    assert all(cached for _, cached in again.values())
