"""The throughput model: waves of builds, GPUs that take kernels as they become ready, the steady rate."""

from __future__ import annotations

import pytest

from reporter.validate.capacity import Measured, Plan, busy_time, predict


def costs(**kw: float) -> Measured:
    base = {"build_share": 1.0, "build_cpu_s": 100.0, "build_wall_s": 100.0, "gpu_s": 5.0, "gpu_tail_s": 2.0,
            "check_wall_s": 10.0, "setup_s": 5.0}
    return Measured(**{**base, **kw})


def test_two_waves_on_one_gpu() -> None:
    # Waves ready at 100 s and 200 s; the first wave's 10 checks cost 5 s each (beside compiles): GPU free at
    # 150 s; the last wave's cost 2 s each: free at 220 s, after the last build's own check (210 s).
    p = predict(costs(), Plan(cores=16, gpus=1, jobs=10), 20)
    assert (p.jobs, p.waves, p.build_wall_s, p.bound) == (10, 2, 100.0, "GPU")
    assert p.wall_s == pytest.approx(225.0)
    assert p.kernels_per_hour == pytest.approx(320.0)
    assert p.steady_per_hour == pytest.approx(360.0)  # 10 builds per 100 s; the GPU could take 720/h
    assert p.gpu_busy == pytest.approx(70 / 225)


def test_compiles_that_ask_for_more_cores_than_there_are_take_longer() -> None:
    # 8 builds of 2 cores each on 4 cores: every build takes 4x as long; the 8 kernels that build nothing
    # are checked at once; the run ends with the last build's check.
    m = costs(build_share=0.5, build_cpu_s=200.0, gpu_s=1.0, gpu_tail_s=1.0, setup_s=0.0)
    p = predict(m, Plan(cores=4, gpus=1, jobs=8), 16)
    assert (p.waves, p.build_wall_s, p.bound) == (1, 400.0, "CPU")
    assert p.wall_s == pytest.approx(410.0)
    assert p.kernels_per_hour == pytest.approx(16 * 3600 / 410)
    assert p.steady_per_hour == pytest.approx(144.0)
    assert p.gpu_busy == pytest.approx(16 / 410)  # every kernel's second on the GPU, the unbuilt ones' too


def test_machines_add_their_cores_and_gpus() -> None:
    m = costs(gpu_s=2.0, setup_s=0.0)
    p = predict(m, Plan(cores=16, gpus=1, machines=4, jobs=16), 128)
    # 32 builds per machine in 2 waves of 16; each wave's 64 kernels cost 4 GPUs 32 s.
    assert (p.waves, p.bound) == (2, "GPU")
    assert p.wall_s == pytest.approx(232.0)
    assert p.steady_per_hour == pytest.approx(2304.0)  # 64 builds per 100 s; the 4 GPUs could take 7200/h


def test_default_pool_is_the_validators() -> None:
    # pool_size(16 cores, 100 s, 100 CPU-s, 32 builds): 17 at once would leave a wave of 15, so all 32 go at once,
    # asking for 32 cores of 16: each build takes twice as long.
    p = predict(costs(), Plan(cores=16, gpus=1), 32)
    assert (p.jobs, p.waves, p.build_wall_s) == (32, 1, 200.0)


def test_busy_time_counts_overlaps_once() -> None:
    assert busy_time([(5.0, 6.0), (0.0, 2.0), (1.0, 3.0), (5.5, 5.7)]) == pytest.approx(4.0)
    assert busy_time([]) == 0.0
