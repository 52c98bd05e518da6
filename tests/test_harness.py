"""The validator's verdicts, on CPU, with pure-PyTorch ModelNew fixtures (no GPU needed)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

# Before anything that imports torch (the worker does, at the top): without torch this module is skipped,
# not an import error.
pytest.importorskip("torch")

from conftest import KERNELS, kernel_run
from reporter.collect import collect
from reporter.core import cache
from reporter.core.records import ValidationSettings
from reporter.core.schema import NO_JITTER_HOOK, Basis
from reporter.validate import validate_runs
from reporter.validate.worker import PopcornJitter

# One xdist worker runs the module, so `validated` (every fixture kernel, in child processes) runs once.
pytestmark = pytest.mark.xdist_group("harness")
SETTINGS = ValidationSettings(nominal_trials=2, jitter_trials=4, perf_trials=3, warmup=1, timeout_s=30, time_cap_s=0.05)
EXPECTED = {
    "correct": ("correct", ""),
    "wrong": ("incorrect", "values differ"),
    "nan": ("incorrect", "NaN/Inf"),
    "mutates": ("incorrect", "modified its input"),
    "caches": ("incorrect", "trial 1 (nominal shapes)"),
    "nominal_only": ("incorrect", "correct at the nominal shapes, but"),
    "raises": ("runtime_error", "illegal memory access"),
    "hangs": ("timeout", "did not finish"),
    "segfaults": ("crashed", "signal 11"),
    # the verdict quotes the dead worker's last line, here the C library's message before abort()
    "aborts": ("crashed", "signal 6 (SIGABRT)) before writing a result; its last output: \u201cFatal glibc error: tpp.c:83"),
}


@pytest.fixture(scope="module")
def validated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    data = tmp_path_factory.mktemp("data")
    for name in EXPECTED:
        kernel_run(data, name, (KERNELS / f"{name}.py").read_text())
    kernel_run(data, "uses_problem_names", (KERNELS / "uses_problem_names.py").read_text())
    no_hook = (KERNELS / "reference.py").read_text().replace("p.jitter_int(batch)", "batch").replace(
        "p.jitter_int(seq, align=4)", "seq")
    kernel_run(data, "no_jitter_hook", (KERNELS / "correct.py").read_text(), reference=no_hook)
    return data, validate_all(data, collect(data).runs)


def validate_all(data: Path, runs: list) -> dict:  # type: ignore[type-arg]
    """Each kernel checked in a child process. 30 s: long enough for a check on a busy 2-core machine. The
    hanging kernel can only ever time out, so it is given 2 s, in a call of its own (it waited out the
    30 s, most of this module's time)."""
    results = validate_runs(data, [r for r in runs if r.run_id != "hangs"], SETTINGS, device="cpu", jobs=2)
    hang = SETTINGS.model_copy(update={"timeout_s": 2})
    return results | validate_runs(data, [r for r in runs if r.run_id == "hangs"], hang, device="cpu", jobs=1)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_verdicts(validated: tuple[Path, dict], name: str) -> None:
    # Each misbehaving kernel gets its own verdict and reason; the ones after it still validate.
    _, results = validated
    result, cached = results[name]
    verdict, reason = EXPECTED[name]
    assert not cached
    assert result.verdict == verdict, result.reason
    assert reason in result.reason


def test_a_dead_worker_keeps_its_last_lines_as_evidence(validated: tuple[Path, dict]) -> None:
    result, _ = validated[1]["aborts"]
    assert result.output_tail.splitlines()[-2:] == [
        "noise before the fatal line", "Fatal glibc error: tpp.c:83 (__pthread_tpp_change_priority): assertion failed"]
    assert validated[1]["correct"][0].output_tail is None  # a worker that wrote its result did not die


def test_correct_kernel_records_trials_and_timing(validated: tuple[Path, dict]) -> None:
    result, _ = validated[1]["correct"]
    # The fixture traces record no precision: the check ran at the default and the result says it was assumed.
    assert result.precision == "fp32" and result.precision_assumed
    assert len(result.trials) == 6
    assert [t.jittered for t in result.trials] == [False, False, True, True, True, True]
    assert [t.index for t in result.trials] == list(range(6))
    assert all(t.passed for t in result.trials)
    k, r = result.kernel_timing, result.reference_timing
    assert k is not None and k.wall is not None and k.wall.n >= 3 and k.wall.iqr_ms is not None
    assert k.wall.min_ms <= k.wall.median_ms <= k.wall.max_ms
    # no CUDA here: wall time only, and each missing figure says why
    assert k.device is None and k.graph is None and k.graph_note == "no CUDA device"
    assert r is not None and result.speedup_on(Basis.WALL) is not None and result.speedup is None
    assert result.weights_note and "copied" in result.weights_note
    assert result.deterministic is True


def test_nominal_only_kernel_passes_nominal_but_fails_jittered(validated: tuple[Path, dict]) -> None:
    result, _ = validated[1]["nominal_only"]
    nominal = [t for t in result.trials if not t.jittered]
    jittered = [t for t in result.trials if t.jittered and t.passed is not None]
    assert all(t.passed for t in nominal)
    assert jittered and not all(t.passed for t in jittered)
    # timing happened at the nominal shapes before the jittered trials could poison anything
    assert result.kernel_timing is not None


def test_problem_namespace_dependency_is_reported(validated: tuple[Path, dict]) -> None:
    result, _ = validated[1]["uses_problem_names"]
    assert result.verdict == "correct"
    assert result.problem_names == ("batch",)


def test_problem_without_jitter_hook_runs_no_jittered_trials(validated: tuple[Path, dict]) -> None:
    result, _ = validated[1]["no_jitter_hook"]
    assert result.verdict == "correct"
    assert result.jitter_note == NO_JITTER_HOOK
    assert [t.jittered for t in result.trials] == [False, False]


def test_results_are_cached_by_content(validated: tuple[Path, dict]) -> None:
    # A second validation with unchanged kernels does no work: every result comes from the cache.
    data, first = validated
    runs = collect(data).runs
    again = validate_all(data, runs)
    assert set(again) == set(first)
    assert all(cached for _, cached in again.values())
    assert all(again[k][0].model_dump() == first[k][0].model_dump() for k in first)
    # ...and a machine that only reads the cache finds the newest result for the same content.
    run = next(r for r in runs if r.run_id == "correct")
    key = cache.content_key(run.trace.final_kernel.source, run.trace.reference_source)  # type: ignore[union-attr]
    hit = cache.lookup(data, key)
    assert hit is not None and hit[0].verdict == "correct"


def test_jitter_int_rules() -> None:
    j = PopcornJitter(0.25)
    assert j.jitter_int(100) == 100  # nominal trial: unchanged
    rng = random.Random(0)
    for _ in range(300):
        j.set_trial(rng.randrange(10**6))
        value, align, minimum = rng.randrange(1, 5000), rng.choice([1, 2, 4, 16]), rng.choice([1, 2, 8])
        got = j.jitter_int(value, align=align, minimum=minimum)
        assert got == j.jitter_int(value, align=align, minimum=minimum)  # same answer within a trial
        assert got % align == 0
        assert got >= max(minimum, align)
        if value * 0.75 >= max(minimum, align) + align:
            assert value * 0.75 - align <= got <= value * 1.25 + align
