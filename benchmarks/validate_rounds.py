"""After a throughput run: the device basis's repeat spread, and the Nsight round's time per kernel (issue 35).

    python benchmarks/validate_throughput.py --keep WORK ...          # first: builds and results under WORK
    python benchmarks/validate_rounds.py WORK [--repeat 5 --times 3] [--ncu 10] [--deadline-s S]
                                          [--out-repeat FILE] [--out-ncu FILE]

Works on the throughput run's DATA and build cache (WORK/data, WORK/builds), so nothing is compiled again.

- repeat spread: the first `--repeat` kernels that run found correct are validated `--times` more times
  (each a fresh `reporter validate --force` call of those kernels together, as a user would repeat it);
  for each kernel and its reference, the device-time medians and their spread, (max - min) / median, and the
  speedup's. Target: device time within 2%.
- Nsight round: the first `--ncu` correct kernels validated with `--ncu`; the seconds of each kernel's
  Nsight round from the moment it had the GPU alone, their median (target <= 15 s), how many came back
  with counters for both sides and how many took the one-invocation fast round (an export of the pages'
  metrics only) rather than the per-side section round (profiling.py logs each fallback, with its reason).

Each part stops at its share of --deadline-s and reports what finished.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))
sys.path.insert(0, str(ROOT))

from validate_throughput import Deadline

SPREAD_TARGET = 0.02
NCU_TARGET_S = 15.0
SETTINGS_ARGS = {"nominal_trials": 5, "perf_trials": 100}  # the throughput run's


def _settings(timeout_s: float) -> Any:
    from reporter.core.records import ValidationSettings
    return ValidationSettings(**SETTINGS_ARGS, timeout_s=timeout_s)


def correct_runs(data: Path, n: int) -> list[Any]:
    """The first `n` runs under DATA whose stored result is correct and timed."""
    from reporter.collect import collect
    from reporter.validate import cached_lookup
    out = []
    for run in collect(data).runs:
        hit = cached_lookup(data, run)
        if hit and hit[0].verdict == "correct" and hit[0].kernel_timing:
            out.append(run)
        if len(out) == n:
            break
    return out


def within(deadline_s: float, work: Callable[[], object]) -> str:
    """Run `work` until `deadline_s` passes; "" when it finished, else what stopped it."""
    def out_of_time(*_: object) -> None:
        raise Deadline
    signal.signal(signal.SIGALRM, out_of_time)
    signal.alarm(max(1, int(deadline_s)))
    try:
        work()
    except Deadline:
        return f"stopped at the {deadline_s:g} s deadline"
    finally:
        signal.alarm(0)
    return ""


def spread(xs: list[float]) -> float:
    return (max(xs) - min(xs)) / statistics.median(xs) if len(xs) > 1 and statistics.median(xs) > 0 else 0.0


def _device_ms(fig: Any) -> float | None:
    """The device-time median (wall time off CUDA, where there is no device time)."""
    basis = fig and (fig.device or fig.wall)
    return basis.median_ms if basis else None


def repeat(data: Path, runs: list[Any], times: int, deadline_s: float, timeout_s: float) -> list[str]:
    from reporter.validate import validate_runs
    seen: dict[str, list[Any]] = {r.run_id: [] for r in runs}
    t0 = time.perf_counter()

    def again() -> None:
        for _ in range(times):
            for run_id, (res, _) in validate_runs(data, runs, _settings(timeout_s), force=True).items():
                seen[run_id].append(res)
    stopped = within(deadline_s, again)
    lines = [f"repeat spread: {len(runs)} kernels validated {times} times ({time.perf_counter() - t0:.0f} s) {stopped}".rstrip(),
             f"{'run':<44} {'side':<10} {'device medians (ms)':<34} {'spread':>7}  reference timing"]
    worst = 0.0
    for run_id, results in seen.items():
        if len(results) < 2:
            lines.append(f"{run_id[:44]:<44} fewer than 2 validations finished")
            continue
        rows = {"kernel": [m for r in results if (m := _device_ms(r.kernel_timing)) is not None],
                "reference": [m for r in results if (m := _device_ms(r.reference_timing)) is not None]}
        rows["speedup"] = [a / b for a, b in zip(rows["reference"], rows["kernel"], strict=False) if b > 0]
        how = ", ".join("reused" if r.reference_from else "beside the kernel" for r in results)
        for side, xs in rows.items():
            s = spread(xs)
            worst = max(worst, s) if side == "kernel" else worst
            lines.append(f"{run_id[:44]:<44} {side:<10} {' '.join(f'{x:.5f}' for x in xs):<34} {s:>6.1%}  {how if side == 'reference' else ''}")
    lines.append(f"kernel device-time spread at most {worst:.1%} (target <= {SPREAD_TARGET:.0%}: "
                 f"{'met' if worst <= SPREAD_TARGET else 'MISSED'})")
    return lines


class _Fallbacks(logging.Handler):
    """Counts the fast rounds that fell back to one round per side: profiling.py logs each, with its reason."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += record.getMessage().startswith("ncu fast round")


def nsight(data: Path, runs: list[Any], deadline_s: float, timeout_s: float) -> list[str]:
    from reporter.core import cache
    from reporter.validate import validate_runs
    live: list[Any] = []
    t0 = time.perf_counter()
    # Which round ran is told by the fallback's warning, not by the export: ncu adds device attributes and launch
    # identity columns to every export, so counting columns called every fast round a sections round (2026-12-02).
    fallbacks = _Fallbacks()
    logging.getLogger("reporter.validate.profiling").addHandler(fallbacks)
    stopped = within(deadline_s, lambda: validate_runs(data, runs, _settings(timeout_s), ncu=True, force=True, progress=True,
                                                       outcomes=live))
    lines = [f"Nsight round: {len(live)} of {len(runs)} kernels ({time.perf_counter() - t0:.0f} s) {stopped}".rstrip(),
             f"{'run':<44} {'ncu s':>7} {'sides':>6}"]
    both = 0
    for o in live:
        hit = cache.lookup(data, o.item.key)
        files = hit[0].ncu_files if hit else {}
        both += len(files) == 2
        lines.append(f"{o.item.run_id[:44]:<44} {o.ncu_s:>7.1f} {len(files):>6}")
    fast = sum(o.ncu_s > 0 for o in live) - fallbacks.count
    times = [o.ncu_s for o in live if o.ncu_s > 0]
    med = statistics.median(times) if times else float("nan")
    lines.append(f"median {med:.1f} s per kernel (target <= {NCU_TARGET_S:g} s: {'met' if med <= NCU_TARGET_S else 'MISSED'}); "
                 f"counters for both sides {both} of {len(live)}; fast round {fast}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work", type=Path, help="the throughput run's --keep folder (data/, builds/)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--times", type=int, default=3)
    ap.add_argument("--ncu", type=int, default=10)
    ap.add_argument("--deadline-s", type=float, default=240.0, help="for both parts together (a third to the spread)")
    ap.add_argument("--timeout-s", type=float, default=600.0)
    ap.add_argument("--out-repeat", type=Path, default=None)
    ap.add_argument("--out-ncu", type=Path, default=None)
    args = ap.parse_args()
    os.environ["REPORTER_BUILD_CACHE"] = str(args.work / "builds")
    data = args.work / "data"
    parts = [(args.repeat, args.out_repeat, lambda runs, d: repeat(data, runs, args.times, d, args.timeout_s), 1 / 3),
             (args.ncu, args.out_ncu, lambda runs, d: nsight(data, runs, d, args.timeout_s), 2 / 3)]
    for n, out, part, share in parts:
        if n <= 0:
            continue
        text = "\n".join(part(correct_runs(data, n), args.deadline_s * share)) + "\n"
        print(text)
        if out:
            out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
