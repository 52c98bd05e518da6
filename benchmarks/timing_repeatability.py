"""Does re-validation repeat? Times the sample kernels in fresh processes, quiet and under CPU load.

    python benchmarks/timing_repeatability.py [--runs 3] [--load 14] [--revalidate OUT] DATA [DATA ...]

1. Validates every kernel under every DATA once, with --ncu, in a copy (with --revalidate OUT, each
   DATA's new `validation/` entries are copied to OUT/<n>/: the results to commit), and prints, for
   each kernel and reference, device time against Nsight Compute's summed `gpu__time_duration.sum`
   for the same call (fidelity; target within ±5%). This counts as the first quiet pass.
2. Validates the kernels of the FIRST DATA `--runs` times quiet and `--runs` times while `--load`
   busy-looping processes share the CPU (alternating; each a fresh worker process), and prints each
   figure's spread, (max − min) / median, per condition. Targets on the H200: device time ≤ 2%,
   CUDA-graph time ≤ 3%; wall time is reported as measured.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reporter.collect import collect
from reporter.collect.ncu import parse_ncu_raw
from reporter.collect.traces import RunRecord
from reporter.core.cache import content_key
from reporter.core.records import ValidationResult, ValidationSettings
from reporter.core.schema import Basis
from reporter.validate import buildcache, cached_lookup, gpu_available, validate_runs
from reporter.validate.profiling import profile_durations
from reporter.validate.recorder import make_items, toolchain
from reporter.validate.runner import environment

SIDES = (("kernel", "kernel_timing"), ("reference", "reference_timing"))


def copy_data(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("validation"))
    return dest


def validate(data: Path, ncu: bool = False) -> dict[str, ValidationResult]:
    runs = [r for r in collect(data).runs if r.source.final_kernel is not None]
    done = validate_runs(data, runs, ValidationSettings(), ncu=ncu, force=True, jobs=8)
    return {run_id: res for run_id, (res, _) in sorted(done.items())}


def _ncu_sum_us(csv: Path | None) -> float | None:
    if csv is None:
        return None
    total = sum(k.base("gpu__time_duration.sum") or 0.0 for k in parse_ncu_raw(csv))
    return total * 1e6 if total else None


def ncu_durations(data: Path, runs: list[RunRecord], work: Path) -> dict[tuple[str, str, str], float | None]:
    """(run id, side, cache control) -> Σ gpu__time_duration.sum in µs, from a duration-only ncu pass."""
    env = environment()
    root = buildcache.default_root()
    todo = [(r, content_key(r.source.final_kernel.source, r.source.reference_source or ""))
            for r in runs if r.source.final_kernel is not None]
    out: dict[tuple[str, str, str], float | None] = {}
    for item in make_items(todo, ValidationSettings(), "cuda", toolchain(env), root):
        marker = buildcache.built(root, item.build_key)
        if marker is None:
            continue
        for cc in ("all", "none"):
            files = profile_durations(item.job, root, item.build_key, marker.env, work / item.key, 120, cc)
            for side, _ in SIDES:
                out[(item.run_id, side, cc)] = _ncu_sum_us(files.get(side))
    return out


def fidelity(data: Path, results: dict[str, ValidationResult], work: Path) -> None:
    """Device time against three ncu readings of the same call: the site's full profile (caches flushed
    before every kernel, several replay passes), a duration-only pass with caches flushed before every
    kernel, and one that leaves the caches as the previous kernel left them (as in the eager call)."""
    runs = [r for r in collect(data).runs if r.run_id in results]
    warm = ncu_durations(data, runs, work / "ncu-durations")
    print(f"\nfidelity: device time vs ncu's Σ gpu__time_duration.sum for the same call ({data.name})")
    print("  profile = the site's ncu profile (--cache-control all, all sections); cold = duration only,")
    print("  --cache-control all; warm = duration only, --cache-control none (L2 flushed once before the call)")
    print(f"{'run':<30} {'side':<10} {'device µs':>10} {'profile':>9} {'ratio':>6} {'cold':>9} {'ratio':>6} "
          f"{'warm':>9} {'ratio':>6}")
    for run in runs:
        found = cached_lookup(data, run)
        if found is None:
            continue
        res, path = found
        for side, attr in SIDES:
            figs = getattr(res, attr)
            dev = figs.device.median_ms * 1e3 if figs and figs.device else None
            cols = [_ncu_sum_us(path.parent / res.ncu_files[side] if side in res.ncu_files else None),
                    warm.get((run.run_id, side, "all")), warm.get((run.run_id, side, "none"))]
            if dev is None:
                print(f"{run.run_id:<30} {side:<10} {'—':>10}  ({res.verdict}; no device time)")
                continue
            shown = " ".join(f"{c:>9.2f} {dev / c:>6.3f}" if c else f"{'—':>9} {'—':>6}" for c in cols)
            print(f"{run.run_id:<30} {side:<10} {dev:>10.2f} {shown}")


def spread(values: list[float]) -> str:
    return f"{(max(values) - min(values)) / statistics.median(values) * 100:6.1f}%" if values else "     —"


def report(label: str, passes: list[dict[str, ValidationResult]]) -> None:
    print(f"\n{label}: {len(passes)} fresh-process validations; spread = (max − min) / median of the medians")
    print(f"{'run':<24} {'side':<10} {'basis':<7} {'medians (ms)':<36} {'spread':>7} {'stop / n':<22}")
    for run_id in passes[0]:
        for side, attr in SIDES:
            for basis in Basis:
                stats = [getattr(p[run_id], attr).on(basis) for p in passes if getattr(p[run_id], attr) is not None]
                got = [s for s in stats if s is not None]
                if not got:
                    note = next((getattr(getattr(p[run_id], attr), f"{basis.value}_note", None) for p in passes
                                 if getattr(p[run_id], attr) is not None), None)
                    print(f"{run_id:<24} {side:<10} {basis.value:<7} {'—':<36} {'—':>7} {note or ''}")
                    continue
                meds = [s.median_ms for s in got]
                stops = " ".join(f"{s.stop or '?'}/{s.n}" for s in got)
                print(f"{run_id:<24} {side:<10} {basis.value:<7} {' '.join(f'{m:.5f}' for m in meds):<36} "
                      f"{spread(meds):>7} {stops}")
        for basis in Basis:
            sps = [sp for p in passes if (sp := p[run_id].speedup_on(basis)) is not None]
            print(f"{run_id:<24} {'speedup':<10} {basis.value:<7} {' '.join(f'{s:.3f}x' for s in sps):<36} {spread(sps):>7}")
    machine = passes[-1][next(iter(passes[-1]))].machine
    print(f"machine state (last pass): {machine.model_dump() if machine else '—'}")


def busy_loops(n: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def revalidate(datas: list[Path], work: Path, out: Path | None) -> dict[str, ValidationResult]:
    """All DATA folders validated in one go (their builds compile side by side), with ncu; first DATA's results."""
    combined = work / "all"
    for i, data in enumerate(datas):
        copy_data(data, combined / str(i))
    results = validate(combined, ncu=True)
    fidelity(combined, results, work)
    for run in collect(combined).runs:
        fk, ref = run.source.final_kernel, run.source.reference_source  # the cache keys the unredacted trace
        if out is not None and fk is not None and ref is not None and run.run_id in results:
            key = content_key(fk.source, ref)
            shutil.copytree(combined / "validation" / key, out / run.run_id.split("/")[0] / key, dirs_exist_ok=True)
    return {rid.split("/", 1)[1]: res for rid, res in results.items() if rid.startswith("0/")}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data", type=Path, nargs="+")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--load", type=int, default=14)
    ap.add_argument("--revalidate", type=Path, default=None, help="write each DATA's new validation/ under OUT/<n>/")
    ap.add_argument("--cpu", action="store_true", help="dry run of this script on a machine without a GPU")
    ap.add_argument("--deadline-s", type=float, default=1e9, help="start no pass after this many seconds")
    args = ap.parse_args()
    if not gpu_available() and not args.cpu:
        sys.exit("no CUDA device: this benchmark measures GPU timing")
    t0 = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="reporter-repeat-"))
    os.environ.setdefault("REPORTER_BUILD_CACHE", str(work / "ext"))
    # The first quiet pass is the re-validation itself (its timing runs after every build has finished).
    quiet = [revalidate(args.data, work, args.revalidate)]
    print(f"(re-validated in {time.monotonic() - t0:.0f} s)", flush=True)
    loaded: list[dict[str, ValidationResult]] = []
    # Alternate loaded and quiet passes, so a deadline cuts both conditions alike.
    for n in range(2 * args.runs - 1):
        into, load = (loaded, args.load) if n % 2 == 0 else (quiet, 0)
        if time.monotonic() - t0 > args.deadline_s:
            print(f"deadline: skipped a {'loaded' if load else 'quiet'} pass", flush=True)
            continue
        procs = busy_loops(load)
        try:
            into.append(validate(copy_data(args.data[0], work / f"pass{n}")))
        finally:
            for p in procs:
                p.kill()
    report("quiet", quiet)
    if loaded:
        report(f"under CPU load ({args.load} busy-looping processes)", loaded)
    print(f"(elapsed {time.monotonic() - t0:.0f} s)", flush=True)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
