"""On the H200: reporter's analytic work against what Nsight Compute measures for the reference (issue 33).

For each of PROBLEMS (KernelBench problems that are memory-bound, compute-bound and mixed on the H200), one
forward pass of the reference `Model` runs under ncu (`--clock-control none`, caches flushed before each
kernel, the default): the DRAM bytes it reads and writes against the analytic compulsory bytes (measured ≥
compulsory is expected: the reference writes and reads back intermediates the count leaves out), and the
FP32 instruction FLOPs (fadd + fmul + 2·ffma, FP64 likewise) against the analytic FLOPs. TF32 is switched off
(cuBLAS and cuDNN), so a matmul's FLOPs are FP32 instructions that ncu counts.

It imports only the standard library, torch, and reporter's stdlib-only core and counter (the GPU machine
has no pydantic, plotly or nh3), and finishes within DEADLINE_S whatever happens: problems are profiled one
at a time, each within PROBLEM_TIMEOUT_S, and the output is rewritten after each.

    python benchmarks/sol_vs_ncu.py --kernelbench DIR [--out FILE]   # DIR holds level1/, level2/
    python benchmarks/sol_vs_ncu.py --child FILE                      # (ncu runs this: one profiled forward pass)
"""

from __future__ import annotations

import argparse
import csv
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEADLINE_S = 420.0  # the whole script, so that one command ends well inside the device's 10 minutes
PROBLEM_TIMEOUT_S = 120.0
RANGE = "measured"  # the NVTX push/pop range around the profiled call
# (file under --kernelbench, the class the analytic model gives it on the H200), cheapest first
PROBLEMS = (
    ("level1/47_Sum_reduction_over_a_dimension.py", "memory"),
    ("level1/36_RMSNorm_.py", "memory"),
    ("level1/40_LayerNorm.py", "memory"),
    ("level1/94_MSELoss.py", "memory"),
    ("level1/4_Matrix_vector_multiplication_.py", "memory"),
    ("level1/19_ReLU.py", "memory"),
    ("level1/23_Softmax.py", "memory"),
    ("level1/1_Square_matrix_multiplication_.py", "compute"),
    ("level1/2_Standard_matrix_multiplication_.py", "compute"),
    ("level1/3_Batched_matrix_multiplication.py", "compute"),
    ("level2/76_Gemm_Add_ReLU.py", "mixed"),
    ("level2/9_Matmul_Subtract_Multiply_ReLU.py", "mixed"),
    ("level2/99_Matmul_GELU_Softmax.py", "mixed"),
    ("level1/63_conv_standard_2D__square_input__square_kernel.py", "compute"),
)
FP32_OPS = ("fadd", "fmul", "ffma")
FP64_OPS = ("dadd", "dmul", "dfma")
METRICS = ["dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum"] + [
    f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum" for op in FP32_OPS + FP64_OPS]
# ncu prints units in several spellings (with or without --print-units base): factor to bytes, seconds, hertz
UNITS = {"byte": 1.0, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6,
         "ms": 1e-3, "msecond": 1e-3, "s": 1.0, "second": 1.0, "byte/s": 1.0, "byte/second": 1.0, "kbyte/s": 1e3,
         "mbyte/s": 1e6, "gbyte/s": 1e9, "tbyte/s": 1e12, "hz": 1.0, "khz": 1e3, "mhz": 1e6, "ghz": 1e9}


def value(text: str, unit: str) -> float | None:
    """One cell of ncu's raw page in base units; None for "n/a" or an empty cell."""
    text = text.strip().replace(",", "")
    if not text or text.lower() == "n/a":
        return None
    try:
        number = float(text)
    except ValueError:
        return None
    return number * UNITS.get(unit.strip().lower(), 1.0)


def parse_raw(text: str) -> list[dict[str, float | None]]:
    """ncu's `--page raw --csv` output, one dict per profiled kernel, metric name -> value in base units. Lines
    before the header (==PROF==, the program's own output) are skipped; the second row is the units row."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID","Process ID"')), None)
    if start is None:
        return []
    rows = list(csv.reader(lines[start:]))
    header, units = rows[0], rows[1] if len(rows) > 1 else []
    kernels = []
    for r in rows[2:]:
        if not r or not r[0].strip().isdigit():
            continue  # a line of the program's output after the table
        kernels.append({name: value(cell, units[i] if i < len(units) else "") for i, (name, cell) in enumerate(zip(header, r))})
    return kernels


def _seconds(k: dict[str, float | None]) -> float:
    return k.get("gpu__time_duration.sum") or 0.0


def kernel_bytes(k: dict[str, float | None]) -> float | None:
    """DRAM bytes of one kernel: read + write counts, else the total, else its rate times its duration."""
    if k.get("dram__bytes_read.sum") is not None and k.get("dram__bytes_write.sum") is not None:
        return (k["dram__bytes_read.sum"] or 0.0) + (k["dram__bytes_write.sum"] or 0.0)
    if k.get("dram__bytes.sum") is not None:
        return k["dram__bytes.sum"]
    rate = k.get("dram__bytes.sum.per_second")
    return rate * _seconds(k) if rate is not None else None


def _ops(k: dict[str, float | None], ops: tuple[str, ...]) -> float | None:
    """FLOPs of one kernel from one precision's add, mul and fma counts (fma = 2), or from their rates per cycle."""
    names = [f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum" for op in ops]
    if all(k.get(n) is not None for n in names):
        counts = [k[n] or 0.0 for n in names]
    else:
        rates = [k.get(f"{n}.per_cycle_elapsed") for n in names]
        clock = k.get("smsp__cycles_elapsed.avg.per_second")
        if any(r is None for r in rates) or clock is None:
            return None
        counts = [(r or 0.0) * clock * _seconds(k) for r in rates]
    return counts[0] + counts[1] + 2 * counts[2]


def kernel_flops(k: dict[str, float | None]) -> float | None:
    fp32, fp64 = _ops(k, FP32_OPS), _ops(k, FP64_OPS)
    return None if fp32 is None else fp32 + (fp64 or 0.0)


def totals(kernels: list[dict[str, float | None]]) -> tuple[float | None, float | None, float]:
    """(DRAM bytes, FP32+FP64 FLOPs, seconds) summed over the kernels of one call; None where a kernel lacks it."""
    b, f = [kernel_bytes(k) for k in kernels], [kernel_flops(k) for k in kernels]
    return (None if None in b else sum(x or 0.0 for x in b), None if None in f else sum(x or 0.0 for x in f),
            sum(_seconds(k) for k in kernels))


def child(path: Path) -> None:
    """Under ncu: build the reference on the GPU, warm it up, then one call inside the NVTX range."""
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False  # matmul FLOPs become FP32 instructions, which ncu counts
    torch.backends.cudnn.allow_tf32 = False
    from reporter.validate.inputs import PopcornJitter, exec_reference
    ns = exec_reference(path.read_text(encoding="utf-8"), PopcornJitter())
    torch.manual_seed(0)
    with torch.device("cuda"):  # made on the GPU: drawing GBs of inputs on the CPU would take most of the deadline
        model = ns["Model"](*ns["get_init_inputs"]()).cuda().eval()
        inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in ns["get_inputs"]()]
    with torch.no_grad():
        model(*inputs)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push(RANGE)
        model(*inputs)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()


def find_ncu() -> str | None:
    return os.environ.get("NCU") or shutil.which("ncu") or next(iter(sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"))[::-1]), None)


def profile(ncu: str, path: Path, timeout: float) -> tuple[list[dict[str, float | None]], str]:
    """The kernels of one call of the reference, as ncu measured them, or why there are none."""
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "ncu.csv"
        cmd = [ncu, "--target-processes", "all", "--clock-control", "none", "--nvtx", "--nvtx-include", f"{RANGE}/",
               "--metrics", ",".join(METRICS), "--csv", "--page", "raw", "--print-units", "base", "--log-file", str(log),
               sys.executable, str(Path(__file__).resolve()), "--child", str(path)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})
        except subprocess.TimeoutExpired:
            return [], f"ncu did not finish within {timeout:.0f} s"
        text = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""
        kernels = parse_raw(text)
        if not kernels:
            tail = (proc.stderr or proc.stdout or text).strip().splitlines()[-3:]
            return [], f"no kernels profiled (exit {proc.returncode}): {' | '.join(tail)[:300]}"
        return kernels, ""


def why_bytes(ratio: float, kernels: int) -> str:
    if ratio < 0.95:
        return "DRAM below the compulsory bytes: part of an input is never read, or the L2 served it despite the flush"
    if ratio > 1.05:
        return f"intermediates written to and read back from DRAM between the reference's {kernels} kernels" if kernels > 1 \
            else "more DRAM traffic than compulsory in one kernel (re-reads, partial sectors)"
    return ""


def why_flops(ratio: float) -> str:
    if ratio < 0.9:
        return ("FLOPs the rules count run as other instructions (exp, max, compares: MUFU/ALU, not FADD/FMUL/FFMA), or a "
                "library algorithm with fewer FLOPs (Winograd, FFT)")
    if ratio > 1.1:
        return "more FP32 instructions than the rule counts (polynomial expansions of GELU/exp, index arithmetic in FP32)"
    return ""


def analytic(path: Path) -> object:
    import hashlib

    from reporter.core.work import WorkJob
    from reporter.validate.workcount import count
    src = path.read_text(encoding="utf-8")
    return count(WorkJob(src, hashlib.sha256(src.encode()).hexdigest()))


def row(name: str, cls: str, w: object, kernels: list[dict[str, float | None]], why: str) -> str:
    from reporter.core.peaks import TABLE
    from reporter.core.sol import sol_bound
    from reporter.core.work import WorkCount
    assert isinstance(w, WorkCount)
    if not w.counted:
        return f"{name:<52} {cls:<7} analytic count failed: {w.why}"
    b = sol_bound(w, TABLE["H200 SXM"], None, tf32=False)
    head = f"{name:<52} {cls:<7} {b.limiter:<7} {w.intensity or 0:>8.2f} {w.bytes / 1e6:>10.1f} {w.flops / 1e9:>9.2f} {b.seconds * 1e6:>9.1f}"
    if not kernels:
        return f"{head}  not profiled: {why}"
    dram, flops, secs = totals(kernels)
    br = dram / w.bytes if dram is not None and w.bytes else float("nan")
    fr = flops / w.flops if flops is not None and w.flops else float("nan")
    notes = "; ".join(x for x in (why_bytes(br, len(kernels)), why_flops(fr)) if x)
    return (f"{head} {len(kernels):>4} {(dram or 0) / 1e6:>10.1f} {br:>6.2f} {(flops or 0) / 1e9:>9.2f} {fr:>6.2f} "
            f"{secs * 1e6:>9.1f} {b.seconds / secs if secs else float('nan'):>6.2f}  {notes}")


HEADER = (f"{'problem':<52} {'class':<7} {'bound':<7} {'FLOP/B':>8} {'an. MB':>10} {'an.GFLOP':>9} {'T_SOL us':>9} "
          f"{'krn':>4} {'DRAM MB':>10} {'ratio':>6} {'ncuGFLOP':>9} {'ratio':>6} {'ncu us':>9} {'ofSOL':>6}  why the two differ")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernelbench", type=Path, default=ROOT.parent / "shared" / "kernelbench" / "KernelBench")
    ap.add_argument("--out", type=Path, default=Path(__file__).with_suffix(".txt"))
    ap.add_argument("--child", type=Path, default=None)
    args = ap.parse_args()
    if args.child is not None:
        child(args.child)
        return
    started = time.monotonic()
    import torch
    ncu = find_ncu()
    version = subprocess.run([ncu, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1:] if ncu else []
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no CUDA device"
    lines = [f"analytic work (reporter's counter, torch {torch.__version__}) against ncu on {gpu}, "
             f"{version[0] if version else 'ncu not found'}; --clock-control none, caches flushed before each kernel, TF32 off",
             "an. = analytic: compulsory bytes and counted FLOPs; DRAM = dram__bytes_read.sum + dram__bytes_write.sum over the "
             "call's kernels; ncu FLOPs = fadd + fmul + 2*ffma (FP32 and FP64); ofSOL = T_SOL / ncu time (the reference's fraction)",
             "", HEADER]
    for rel, cls in PROBLEMS:
        left = DEADLINE_S - (time.monotonic() - started)
        path = args.kernelbench / rel
        if not path.is_file():
            lines.append(f"{rel:<52} {cls:<7} problem file not found under {args.kernelbench}")
            continue
        w = analytic(path)
        if ncu is None or left < 20:
            lines.append(row(rel, cls, w, [], "ncu not found (set NCU=...)" if ncu is None else "skipped: DEADLINE_S reached"))
        else:
            kernels, why = profile(ncu, path, min(PROBLEM_TIMEOUT_S, left - 10))
            lines.append(row(rel, cls, w, kernels, why))
        args.out.write_text("\n".join([*lines, "", f"{time.monotonic() - started:.0f} s so far"]) + "\n", encoding="utf-8")
        print(lines[-1], flush=True)
    args.out.write_text("\n".join([*lines, "", f"finished in {time.monotonic() - started:.0f} s"]) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
