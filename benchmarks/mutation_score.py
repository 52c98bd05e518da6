"""Mutation score of the modules a change touched (issue 11, item 6; issue 47, item 8).

Runs mutmut (3.x, configured in pyproject.toml's [tool.mutmut]: the modules and the fast tests that exercise
them) over `SELECTION`, then prints killed / total per module and every surviving mutant as a diff line, with
the reason it is allowed to survive where one is known. Point `SELECTION` and [tool.mutmut] at the modules
the next change touches; the committed output is the last change's.

    nice -n 19 python benchmarks/mutation_score.py > benchmarks/mutation_score.txt

Takes about ten minutes on two busy cores. ``--max-children`` sets mutmut's parallelism (default 2).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 0.85

# Module -> the functions whose mutants count (mutmut's mangled names: x_fn, or xǁClassǁmethod).
# The modules a change touched (issue 47, item 8: a standing measure, run on what changed; pyproject.toml's
# [tool.mutmut] lists them and the fast tests that exercise them): this wave's run-time defences (issue 48).
SELECTION: dict[str, list[str]] = {
    "reporter/validate/fresh.py": ["*"],
    "reporter/validate/l2.py": ["*"],
    "reporter/validate/aftertiming.py": ["*"],
    "reporter/validate/allclose.py": ["x_compare", "x__compare_flat", "x__witness", "x_mismatch", "x_judge"],
}

# Survivors no test can kill, each read by hand: (function, text of the mutated line, why). Matched on the
# mutated line rather than the mutant's number, which shifts whenever the function is edited.
EQUIVALENT = "equivalent mutant: "
ONLY_OUTSIDE = EQUIVALENT + "only values outside 0–100 reach this line, so 100 itself never does"
SAME_FIELD = EQUIVALENT + ("a figure that is not usable is flagged impossible on its own field, and check_trace "
                           "drops every other flag on that field")
FAR_OFF = EQUIVALENT + "this branch only sees ratio < 0.01 or > 100, where < 1, <= 1 and < 2 agree"
CPU_PATH = ("CPU path: on a CPU there is nothing to synchronise, move or poison; this differs only on a CUDA "
            "device, which only the GPU tests (tests/test_gpu.py) exercise")
PROFILE = "CPU path: profile mode needs CUDA (an NVTX range for ncu); only the GPU tests run it"
JUSTIFIED: list[tuple[str, str, str]] = [
    ("x__impossible", "if value <= 0 else", EQUIVALENT + "only ±Infinity reaches this line; -inf <= 0 as -inf < 0"),
    ("x__impossible", "if value < 1 else", EQUIVALENT + "only ±Infinity reaches this line; +inf is not < 1 either"),
    ("x__nsight_flags", ".split(None)", EQUIVALENT + "for labels with single spaces, as ncu and the harnesses write them"),
    ("x__pct_flags", "if value >= 100:", ONLY_OUTSIDE),
    ("x_check_measured", "if value >= 100 else", ONLY_OUTSIDE),
    ("x__timing_flags", "if value is None and not usable(value):", SAME_FIELD),
    ("x__nsight_flags", "usable(n.peak_bw_gbps, n.peak_fp32_tflops, )", SAME_FIELD),
    ("x__ratio_flags", "usable(mem.kernel_peak_mb, mem.ref_peak_mb, )", SAME_FIELD),
    ("x__ratio_flags", "usable(la.kernel_launches, la.ref_launches, )", SAME_FIELD),
    ("x_check_measured", 'getattr(fig, "unit", None)', EQUIVALENT + 'a figure without a unit is not "%" either way'),
    ("x_check_measured", 'getattr(fig, "unit", "XXXX")', EQUIVALENT + 'a figure without a unit is not "%" either way'),
    ("x_compare_runtime", "ratio <= 1 else", FAR_OFF),
    ("x_compare_runtime", "ratio < 2 else", FAR_OFF),
    ("x_bottleneck_label", '"compute-bound" if sm_pct >= mem_pct else "memory-bound"',
     EQUIVALENT + "equal utilisations differ by 0 < 10 and never reach this line"),
    ("x__trial", "jittered, None)", CPU_PATH),
    ("x__trial", "_sync(None)", CPU_PATH),
    ("x_run_check", "_sync(None)", CPU_PATH),
    ("x__trial", "poison_allocator(", CPU_PATH),
    ("x_compare", "rtol=rtol, )", EQUIVALENT + "equal_nan=False is torch.allclose's default"),
    ("x_main", 'read_text(encoding=None)', EQUIVALENT + "the locale's encoding is UTF-8 wherever the worker runs"),
    ("x_main", 'read_text(encoding="UTF-8")', EQUIVALENT + "codec names are case-insensitive"),
    ("x_main", '"phase_s": {}}', EQUIVALENT + "every path through main() sets verdict and reason before writing"),
    ("x_main", "job[\"kernel\"], None)", EQUIVALENT + "compile mode never calls get_inputs(), so the jitter is unused"),
    ("x_main", 'mode == "XXprofileXX"', PROFILE),
    ("x_main", 'mode == "PROFILE"', PROFILE),
    ("x_main", "run_profile(", PROFILE),
    ("x_scan", 'backend = "XXtritonXX"', EQUIVALENT + 'the backend is only ever compared with "cuda"'),
    ("x_scan", 'backend = "TRITON"', EQUIVALENT + 'the backend is only ever compared with "cuda"'),
]


# Whole functions no CPU test can reach, by mutmut's mangled name.
DRIVER = ("CPU path: the CUDA driver calls through ctypes (libcuda); without a GPU the guard runs on a fake driver, and "
          "these lines run only on a device (benchmarks/exploit_corpus.txt's l2_persist_window and its twins)")
JUSTIFIED_FUNCTIONS: dict[str, str] = {"x_cuda_driver": DRIVER, "xǁCudaDriverǁ__init__": DRIVER,
                                       "xǁCudaDriverǁpersisting_limit": DRIVER, "xǁCudaDriverǁreset": DRIVER,
                                       "xǁCudaDriverǁreset_lines": DRIVER, "xǁCudaDriverǁset_limit": DRIVER}


def justification(mutant: str, diff: list[str]) -> str | None:
    function = mutant.rpartition(".")[2].partition("__mutmut_")[0]
    if function in JUSTIFIED_FUNCTIONS:
        return JUSTIFIED_FUNCTIONS[function]
    added = [line for line in diff if line.startswith("+")]
    return next((why for fn, text, why in JUSTIFIED if fn == function and any(text in line for line in added)), None)

KILLED = {1, 3, 36, 37, -24, 24, 152, 255}  # failed test, pytest error, timeout, type check: all detected
NAMES = {0: "survived", 5: "no tests", 33: "no tests", 34: "skipped", None: "not checked", -11: "segfault",
         -9: "killed by signal"}


@dataclass
class Score:
    module: str
    killed: int = 0
    survivors: list[tuple[str, str]] = field(default_factory=list)  # (mutant, status)
    unchecked: int = 0  # not run yet (an interrupted run): neither killed nor survived

    @property
    def total(self) -> int:
        return self.killed + len(self.survivors)


def _selected(module: str, mutant: str) -> bool:
    dotted = module.removesuffix(".py").replace("/", ".")
    function = mutant.removeprefix(dotted + ".").partition("__mutmut_")[0]
    return any(fnmatch.fnmatchcase(function, pattern) for pattern in SELECTION[module])


def run_mutmut(modules: list[str], max_children: int, keep: bool) -> None:
    if not keep:
        # A stale mutants/ keeps unmutated copies of files that changed since: start clean.
        shutil.rmtree(ROOT / "mutants", ignore_errors=True)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
    patterns = [f"{m.removesuffix('.py').replace('/', '.')}.{f}__mutmut_*" for m in modules for f in SELECTION[m]]
    cmd = [sys.executable, "-m", "mutmut", "run", "--max-children", str(max_children), *patterns]
    done = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"mutmut run failed ({done.returncode}):\n{done.stderr[-4000:]}")


def scores(modules: list[str]) -> list[Score]:
    out = []
    for module in modules:
        meta = json.loads((ROOT / "mutants" / (module + ".meta")).read_text(encoding="utf-8"))
        score = Score(module)
        for mutant, code in sorted(meta["exit_code_by_key"].items(), key=lambda kv: _order(kv[0])):
            if not _selected(module, mutant):
                continue
            if code in KILLED:
                score.killed += 1
            elif code is None:
                score.unchecked += 1
            else:
                score.survivors.append((mutant, NAMES.get(code, f"exit {code}")))
        out.append(score)
    return out


def _order(mutant: str) -> tuple[str, int]:
    name, _, number = mutant.partition("__mutmut_")
    return name, int(number or 0)


def diff_lines(module: str, mutant: str) -> list[str]:
    from mutmut.mutation.diff_apply import get_diff_for_mutant  # what `mutmut show` prints, in this process
    os.chdir(ROOT)
    return [line for line in get_diff_for_mutant(mutant, path=module).splitlines()
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def report(results: list[Score], took: float | None) -> None:
    killed, total = sum(s.killed for s in results), sum(s.total for s in results)
    ran = f" · the run took {took / 60:.1f} min" if took is not None else ""
    print(f"mutmut {_version()} · target {TARGET:.0%} of mutants killed{ran}\n")
    print(f"{'module':34} {'killed':>7} {'total':>6} {'score':>7}")
    for s in results:
        unrun = f"  ({s.unchecked} more not run)" if s.unchecked else ""
        print(f"{s.module:34} {s.killed:7d} {s.total:6d} {s.killed / max(1, s.total):7.1%}{unrun}")
    overall = killed / max(1, total)
    print(f"{'all':34} {killed:7d} {total:6d} {overall:7.1%}"
          f"  ({'meets' if overall >= TARGET else 'BELOW'} the target by {abs(overall - TARGET) * 100:.1f} points)")
    unexplained = 0
    for s in results:
        if not s.survivors:
            continue
        print(f"\n## {s.module}: {len(s.survivors)} surviving\n")
        for mutant, status in s.survivors:
            diff = diff_lines(s.module, mutant)
            why = justification(mutant, diff)
            unexplained += why is None
            print(f"{mutant} ({status})")
            for line in diff:
                print(f"    {line.strip()[:150]}")
            print(f"    why: {why or 'NOT JUSTIFIED: a test should kill it'}")
    print(f"\n{unexplained} surviving mutants without a justification.")


def _version() -> str:
    from importlib.metadata import version
    return version("mutmut")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-children", type=int, default=2)
    parser.add_argument("--report-only", action="store_true", help="print the score of the last run in mutants/")
    parser.add_argument("--keep", action="store_true",
                        help="keep mutants/ and the other modules' results (only when no source file changed)")
    parser.add_argument("--module", action="append", choices=sorted(SELECTION),
                        help="only this module (repeatable); default: all of them")
    args = parser.parse_args()
    modules = args.module or list(SELECTION)
    took = None
    if not args.report_only:
        start = time.monotonic()
        run_mutmut(modules, args.max_children, args.keep)
        took = time.monotonic() - start
    report(scores(modules), took)


if __name__ == "__main__":
    main()
