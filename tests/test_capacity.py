"""The throughput model: a GPU's rate from its windows and shared check time, compiles stopped by host-quiet
windows, waves of builds, GPUs that take kernels as they become ready, the steady rate for 1 to 8 GPUs."""

from __future__ import annotations

from dataclasses import replace

import pytest

from reporter.validate.capacity import Measured, Plan, busy_time, predict, steady_rates


def costs(**kw: float) -> Measured:
    base = {"build_share": 1.0, "build_cpu_s": 100.0, "build_wall_s": 100.0, "exclusive_s": 3.0, "shared_s": 8.0,
            "host_quiet_s": 0.0, "check_cpu_s": 0.0, "check_wall_s": 10.0, "setup_s": 5.0}
    return Measured(**{**base, **kw})


def test_a_gpu_takes_a_kernel_every_window_plus_a_share_of_the_slots_time() -> None:
    assert costs().gpu_s == pytest.approx(3.0 + 8.0 / 4)
    assert costs(slots=1).gpu_s == pytest.approx(11.0)


def test_host_quiet_windows_cost_every_core_of_the_machine() -> None:
    # 48 CPU-s a build, 8 a check, 1 s a kernel with 16 cores stopped: 16 / 72 kernels a second on 16 cores.
    m = costs(build_cpu_s=48.0, check_cpu_s=8.0, host_quiet_s=1.0, exclusive_s=2.0, shared_s=8.0)
    for (cores, gpus), (cpu_h, gpu_h) in {(16, 1): (800.0, 900.0), (32, 2): (32 / 88 * 3600, 1800.0),
                                          (64, 4): (64 / 120 * 3600, 3600.0), (128, 8): (128 / 184 * 3600, 7200.0)}.items():
        cpu, gpu = steady_rates(m, Plan(cores=cores, gpus=gpus))
        assert (cpu * 3600, gpu * 3600) == (pytest.approx(cpu_h), pytest.approx(gpu_h)), (cores, gpus)
    p = predict(m, Plan(cores=128, gpus=8), 1000)
    assert p.bound == "CPU" and p.steady_per_hour == pytest.approx(128 / 184 * 3600)


def test_two_waves_on_one_gpu() -> None:
    # Waves ready at 100 s and 200 s; each wave's 10 checks cost the GPU 5 s each: free at 150 s, then at 250 s,
    # after the last build's own check (210 s).
    p = predict(costs(), Plan(cores=16, gpus=1, jobs=10), 20)
    assert (p.jobs, p.waves, p.build_wall_s, p.bound) == (10, 2, 100.0, "CPU")
    assert p.wall_s == pytest.approx(255.0)
    assert p.kernels_per_hour == pytest.approx(20 * 3600 / 255)
    assert p.steady_per_hour == pytest.approx(576.0)  # 16 cores / 100 CPU-s a build; the GPU could take 720/h
    assert p.gpu_busy == pytest.approx(100 / 255)


def test_stopped_compiles_take_longer() -> None:
    # 0.1212 kernels a second (16 / (100 + 16 x 2)) keep compiles stopped 2 s each: 24% of the time.
    p = predict(costs(host_quiet_s=2.0), Plan(cores=16, gpus=1, jobs=10), 20)
    assert p.build_wall_s == pytest.approx(100.0 / (1 - 16 / 132 * 2))


def test_compiles_that_ask_for_more_cores_than_there_are_take_longer() -> None:
    # 8 builds of 2 cores each on 4 cores: every build takes 4x as long; the 8 kernels that build nothing
    # are checked at once; the run ends with the last build's check.
    m = costs(build_share=0.5, build_cpu_s=200.0, exclusive_s=1.0, shared_s=0.0, setup_s=0.0)
    p = predict(m, Plan(cores=4, gpus=1, jobs=8), 16)
    assert (p.waves, p.build_wall_s, p.bound) == (1, 400.0, "CPU")
    assert p.wall_s == pytest.approx(410.0)
    assert p.steady_per_hour == pytest.approx(144.0)
    assert p.gpu_busy == pytest.approx(16 / 410)  # every kernel's second on the GPU, the unbuilt ones' too


def test_machines_add_their_cores_and_gpus() -> None:
    m = costs(exclusive_s=2.0, shared_s=0.0, setup_s=0.0)
    p = predict(m, Plan(cores=16, gpus=1, machines=4, jobs=16), 128)
    # 32 builds per machine in 2 waves of 16; each wave's 64 kernels cost 4 GPUs 32 s.
    assert (p.waves, p.bound) == (2, "CPU")
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


def test_a_run_like_the_measured_one_keeps_its_measured_builds() -> None:
    # The measured builds took 60 s with 13 compiles of 1 core each on 16 cores (uncontended) and their compiles
    # stopped 25% of the call's wall: 45 s of work each. Predicted with the same stops, a build takes the 60 s it
    # took, not 60 / (1 - 0.25) = 80 s (the stops counted twice).
    m = costs(build_cpu_s=60.0, build_wall_s=60.0, exclusive_s=1.0, shared_s=0.0, host_quiet_s=0.0, quiet_share=0.25,
              jobs=13, cores=16)
    assert m.build_base_wall_s == pytest.approx(45.0)
    # 1.25 s quiet a kernel: 16 / (60 + 16 x 1.25) = 0.2 kernels a second keep compiles stopped 25% of the time.
    p = predict(replace(m, host_quiet_s=1.25), Plan(cores=16, gpus=1, jobs=13), 26)
    assert p.build_wall_s == pytest.approx(60.0)


def test_contention_the_measured_builds_had_is_not_applied_twice() -> None:
    # 8 builds of 2 cores each (200 CPU-s over 100 s) measured on 8 cores: twice as slow as alone (50 s). On 16
    # cores the same 8 compiles fit: 50 s each. With 4 compiles on 8 cores: 50 s too; with 16 on 8 cores: 200 s.
    m = costs(build_cpu_s=200.0, build_wall_s=100.0, jobs=8, cores=8)
    assert m.build_base_wall_s == pytest.approx(50.0)
    assert [predict(m, Plan(cores=c, gpus=1, jobs=j), 16).build_wall_s for c, j in ((16, 8), (8, 4), (8, 8), (8, 16))] \
        == [pytest.approx(x) for x in (50.0, 50.0, 100.0, 200.0)]


def test_a_last_wave_of_fewer_builds_is_still_a_wave() -> None:
    # 25 builds, 10 at once: waves ready at 100, 200 and 300 s (10, 10, 5 kernels at 5 GPU-s each). The GPU is free
    # at 150, 250, then 325 s; the last build's check ends at 310; setup 5 s.
    p = predict(costs(), Plan(cores=16, gpus=1, jobs=10), 25)
    assert p.waves == 3
    assert p.wall_s == pytest.approx(330.0)
