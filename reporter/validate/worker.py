"""The isolated worker: builds, checks, times and profiles ONE kernel, in its own process.

Run as ``python -m reporter.validate.worker MODE JOB_DIR``; reads ``JOB_DIR/job.json`` and writes
``JOB_DIR/<mode>.json``. It imports only the standard library and torch (the GPU machine has neither
pydantic nor plotly), and it is the only place where trace content is executed. A kernel can corrupt
its CUDA context for good, so the parent never runs two kernels in one worker.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

# torch's CPU wheel does not need NumPy; without it torch warns on import, into every validator log.
warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
import torch  # noqa: E402

MODES = ("compile", "check", "profile")


class PopcornJitter:
    """The `popcorn_pri` object problems call inside get_inputs() to jitter their shapes.

    Trial 0 (and every nominal trial) returns values unchanged. A jittered trial returns an integer
    within ±fraction of `value`, rounded to a multiple of `align`, at least max(minimum, align), and
    the same answer for the same arguments within one trial, so related dimensions stay consistent.
    """

    def __init__(self, fraction: float = 0.25) -> None:
        self.fraction = fraction
        self.trial_seed: int | None = None

    def set_trial(self, seed: int | None) -> None:
        self.trial_seed = seed

    def jitter_int(self, value: int, align: int = 1, minimum: int = 1) -> int:
        if self.trial_seed is None:
            return value
        key = f"{self.trial_seed}:{value}:{align}:{minimum}".encode()
        rng = random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "little"))
        lo, hi = math.ceil(value * (1 - self.fraction)), math.floor(value * (1 + self.fraction))
        pick = rng.randint(min(lo, hi), max(lo, hi))
        pick = max(align, round(pick / align) * align)
        pick = max(pick, minimum, align)
        # rounding to `align` may leave the ±fraction band: step back inside it when possible
        while pick > value * (1 + self.fraction) and pick - align >= max(minimum, align):
            pick -= align
        return int(pick)


def _namespace(jitter: PopcornJitter) -> dict[str, Any]:
    return {"__name__": "reporter_problem", "__builtins__": __builtins__, "popcorn_pri": jitter, "torch": torch}


def problem_names_used(reference: str, kernel: str) -> list[str]:
    """Names the kernel reads but never defines, that only the problem file defines (e.g. `batch_size`)."""
    import ast
    import builtins

    def defined(tree: ast.Module) -> set[str]:
        names: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
        return names

    try:
        ktree, rtree = ast.parse(kernel), ast.parse(reference)
    except SyntaxError:
        return []
    loads = {n.id for n in ast.walk(ktree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    free = loads - defined(ktree) - set(dir(builtins)) - {"popcorn_pri", "torch"}
    return sorted(free & defined(rtree))


def load(reference: str, kernel: str, jitter: PopcornJitter) -> tuple[dict[str, Any], list[str]]:
    """KernelBench semantics: reference then kernel exec'd into ONE namespace.

    Also returns the problem-file names the kernel depends on: KernelBench accepts such kernels,
    a fresh namespace would not, and the page says so.
    """
    ns = _namespace(jitter)
    exec(compile(reference, "reference.py", "exec"), ns)  # noqa: S102 - isolated worker, by design
    default_new = ns.pop("ModelNew", None)
    exec(compile(kernel, "kernel.py", "exec"), ns)  # noqa: S102
    if ns.get("ModelNew") is None or ns.get("ModelNew") is default_new:
        raise RuntimeError("the kernel defines no ModelNew class")
    return ns, problem_names_used(reference, kernel)


def build_models(ns: dict[str, Any], device: str, seed: int) -> tuple[Any, Any, str]:
    init = ns["get_init_inputs"]()
    torch.manual_seed(seed)
    ref = ns["Model"](*init)
    torch.manual_seed(seed)
    new = ns["ModelNew"](*init)
    ref_sd, new_sd = ref.state_dict(), new.state_dict()
    same = [k for k in new_sd if k in ref_sd and ref_sd[k].shape == new_sd[k].shape]
    if same:
        new.load_state_dict({k: ref_sd[k] for k in same}, strict=False)
    missing = sorted(set(new_sd) - set(same))
    if not new_sd and not ref_sd:
        note = "neither model has parameters"
    elif not missing and len(same) == len(ref_sd):
        note = f"all {len(same)} tensors copied from Model by name"
    else:
        note = (f"{len(same)} of {len(new_sd)} ModelNew tensors copied from Model by name; not matched: "
                f"{', '.join(missing[:8]) or 'none'}; both built from seed {seed}")
    return ref.to(device).eval(), new.to(device).eval(), note


def _to(x: Any, device: str) -> Any:
    if isinstance(x, torch.Tensor):
        return x.to(device)
    if isinstance(x, (list, tuple)):
        return type(x)(_to(v, device) for v in x)
    return x


def _clone(x: Any) -> Any:
    if isinstance(x, torch.Tensor):
        return x.clone()
    if isinstance(x, (list, tuple)):
        return type(x)(_clone(v) for v in x)
    return x


def _tensors(x: Any) -> list[torch.Tensor]:
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _tensors(v)]
    return []


def _shape(x: Any) -> str:
    if isinstance(x, torch.Tensor):
        return "x".join(str(d) for d in x.shape) or "scalar"
    return type(x).__name__


def make_inputs(ns: dict[str, Any], jitter: PopcornJitter, seed: int, jittered: bool, device: str) -> list[Any]:
    jitter.set_trial(seed if jittered else None)
    torch.manual_seed(seed)
    try:
        return [_to(v, device) for v in ns["get_inputs"]()]
    finally:
        jitter.set_trial(None)


def poison_allocator(like: list[torch.Tensor], device: str) -> None:
    """Fill freed blocks of the caching allocator with NaN so outputs the kernel never writes show up."""
    if device != "cuda":
        return
    blocks = []
    for t in like:
        for _ in range(2):
            b = torch.empty(t.numel() * t.element_size() // 4 + 1, dtype=torch.float32, device=device)
            b.fill_(float("nan"))
            blocks.append(b)
    del blocks


def compare(ref_out: Any, new_out: Any, atol: float, rtol: float) -> tuple[bool, float | None, float | None, str | None]:
    refs, news = _tensors(ref_out), _tensors(new_out)
    if len(refs) != len(news):
        return False, None, None, f"output count mismatch: expected {len(refs)} tensors, got {len(news)}"
    worst_abs, worst_rel, ok, problem = 0.0, 0.0, True, None
    for r, n in zip(refs, news):
        if r.shape != n.shape:
            return False, None, None, f"output shape mismatch: expected {tuple(r.shape)}, got {tuple(n.shape)}"
        r64, n64 = r.detach().double().cpu(), n.detach().double().cpu()
        bad = ~torch.isfinite(n64) & torch.isfinite(r64)
        if bool(bad.any()):
            ok, problem = False, f"{int(bad.sum())} NaN/Inf values where the reference is finite"
        diff = (r64 - n64).abs()
        diff = torch.where(torch.isnan(diff), torch.full_like(diff, math.inf), diff)
        if diff.numel():
            worst_abs = max(worst_abs, float(diff.max()))
            worst_rel = max(worst_rel, float((diff / (r64.abs() + atol)).max()))
        if ok and not torch.allclose(n64, r64, atol=atol, rtol=rtol, equal_nan=False):
            ok, problem = False, f"values differ beyond atol={atol:g}, rtol={rtol:g}"
    return ok, worst_abs, worst_rel, problem


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def _stats(times: list[float]) -> dict[str, float]:
    times = sorted(times)
    n = len(times)
    mean = sum(times) / n
    median = times[n // 2] if n % 2 else (times[n // 2 - 1] + times[n // 2]) / 2
    std = math.sqrt(sum((t - mean) ** 2 for t in times) / (n - 1)) if n > 1 else 0.0
    return {"median_ms": median, "mean_ms": mean, "std_ms": std, "min_ms": times[0], "max_ms": times[-1], "trials": n}


def time_calls(fns: list[Callable[..., Any]], input_sets: list[list[Any]], warmup: int, trials: int, device: str,
               flush_mb: int, min_warmup_s: float = 0.25) -> list[dict[str, float]]:
    """Stats in ms for each fn: CUDA events per call, L2 flushed before each, inputs rotated.

    The functions are timed interleaved (their order alternating each round), so a clock ramp or a
    neighbour's load shifts all of them alike instead of biasing the speedup.
    """
    t0, done = time.perf_counter(), 0
    while done < warmup or time.perf_counter() - t0 < min_warmup_s:
        for fn in fns:
            fn(*input_sets[done % len(input_sets)])
        _sync(device)
        done += 1
    flush = torch.empty(flush_mb * 1024 * 1024 // 4, dtype=torch.float32, device=device) if device == "cuda" else None
    times: list[list[float]] = [[] for _ in fns]
    for i in range(trials):
        inputs = input_sets[i % len(input_sets)]
        order = range(len(fns)) if i % 2 == 0 else reversed(range(len(fns)))
        for j in order:
            if flush is not None:
                flush.zero_()
            _sync(device)
            if device == "cuda":
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fns[j](*inputs)
                end.record()
                torch.cuda.synchronize()
                times[j].append(start.elapsed_time(end))
            else:
                t1 = time.perf_counter()
                fns[j](*inputs)
                times[j].append((time.perf_counter() - t1) * 1e3)
    return [_stats(t) for t in times]


def count_launches(fn: Callable[..., Any], inputs: list[Any], device: str) -> dict[str, Any] | None:
    if device != "cuda":
        return None
    from torch.profiler import DeviceType, ProfilerActivity, profile
    fn(*inputs)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn(*inputs)
        torch.cuda.synchronize()
    dev = [e for e in prof.events() if e.device_type == DeviceType.CUDA]
    kernels = [e for e in dev if not e.name.startswith(("Memcpy", "Memset"))]
    return {"launches": len(kernels), "cuda_time_us": float(sum(getattr(e, "device_time_total", 0.0) for e in kernels)),
            "memcpy": sum(1 for e in dev if e.name.startswith("Memcpy")),
            "memset": sum(1 for e in dev if e.name.startswith("Memset")),
            "kernel_names": sorted({e.name[:120] for e in kernels})}


def peak_memory(fn: Callable[..., Any], inputs: list[Any], device: str) -> int | None:
    if device != "cuda":
        return None
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    fn(*inputs)
    torch.cuda.synchronize()
    return int(torch.cuda.max_memory_allocated())


def _trial(ns: dict[str, Any], ref: Any, new: Any, jitter: PopcornJitter, i: int, seed: int, jittered: bool,
           device: str, atol: float, rtol: float) -> dict[str, Any]:
    """One correctness trial; raises only when the kernel fails at the nominal shapes."""
    inputs = make_inputs(ns, jitter, seed, jittered, device)
    row: dict[str, Any] = {"index": i, "seed": seed, "jittered": jittered, "input_shapes": [_shape(x) for x in inputs],
                           "max_abs_error": None, "max_rel_error": None}
    pristine = _clone(inputs)
    try:
        ref_out = ref(*_clone(inputs))
        _sync(device)
    except Exception as exc:
        if not jittered:
            raise RuntimeError(f"the reference Model itself fails: {exc}") from exc
        # The problem does not support these shapes; that says nothing about the kernel.
        return {**row, "passed": None, "problem": f"skipped: the reference raised {type(exc).__name__}"}
    poison_allocator(_tensors(ref_out), device)
    k_inputs = _clone(inputs)
    try:
        new_out = new(*k_inputs)
        _sync(device)
    except Exception as exc:
        if not jittered:
            raise  # fails at the nominal shapes: a runtime error, not a shape-robustness problem
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return {**row, "passed": False, "problem": f"raised {type(exc).__name__}: {msg[:200]}", "raised": True}
    ok, mabs, mrel, problem = compare(ref_out, new_out, atol, rtol)
    mutated = [j for j, (a, b) in enumerate(zip(_tensors(pristine), _tensors(k_inputs))) if not torch.equal(a, b)]
    if mutated and ok:
        ok, problem = False, f"the kernel modified its input(s) {mutated}"
    return {**row, "max_abs_error": mabs, "max_rel_error": mrel, "passed": ok, "problem": problem}


def run_check(job: dict[str, Any], out: dict[str, Any]) -> None:
    """Nominal trials, then timing and counts at nominal shapes, then jittered trials last.

    Jittered shapes come last because a kernel that hard-codes its sizes may fault there, and a CUDA
    fault poisons the context for everything after it in this process.
    """
    s = job["settings"]
    device = job["device"]
    precision = job.get("precision", "fp32")
    atol, rtol = s["atol"][precision], s["rtol"][precision]
    jitter = PopcornJitter(s["jitter_fraction"])
    phase = time.perf_counter()
    ns, out["problem_names"] = load(job["reference"], job["kernel"], jitter)
    ref, new, out["weights_note"] = build_models(ns, device, s["seed"])
    out["phase_s"]["load"] = time.perf_counter() - phase
    gen = random.Random(s["seed"])
    seeds = [gen.randrange(2**31) for _ in range(s["nominal_trials"] + s["jitter_trials"])]
    nominal, jittered = seeds[: s["nominal_trials"]], seeds[s["nominal_trials"]:]
    out["trials"] = trials = []
    phase = time.perf_counter()
    with torch.no_grad():
        for i, seed in enumerate(nominal):
            trials.append(_trial(ns, ref, new, jitter, i, seed, False, device, atol, rtol))
        out["phase_s"]["correctness"] = time.perf_counter() - phase
        bad = next((t for t in trials if t["passed"] is False), None)
        if bad is not None:
            out["verdict"], out["reason"] = "incorrect", f"trial {bad['index']} (nominal shapes) failed: {bad['problem']}"
            return
        first = make_inputs(ns, jitter, nominal[0], False, device)
        a, b = new(*_clone(first)), new(*_clone(first))
        _sync(device)
        out["deterministic"] = all(torch.equal(x, y) for x, y in zip(_tensors(a), _tensors(b)))

        phase = time.perf_counter()
        sets = [make_inputs(ns, jitter, seed, False, device) for seed in nominal]
        fns = [new, ref] + ([torch.compile(ref)] if s.get("torch_compile_baseline") else [])
        timed = time_calls(fns, sets, s["warmup"], s["perf_trials"], device, s["flush_l2_mb"])
        out["kernel_timing"], out["reference_timing"] = timed[0], timed[1]
        if len(timed) > 2:
            out["compile_timing"] = timed[2]
        # Re-check after the timed loop: an output cached on input identity would now be stale.
        recheck_ok, _, _, why = compare(ref(*_clone(sets[-1])), new(*_clone(sets[-1])), atol, rtol)
        out["phase_s"]["timing"] = time.perf_counter() - phase
        phase = time.perf_counter()
        out["kernel_launches"] = count_launches(new, sets[0], device)
        out["reference_launches"] = count_launches(ref, sets[0], device)
        out["kernel_peak_bytes"] = peak_memory(new, sets[0], device)
        out["reference_peak_bytes"] = peak_memory(ref, sets[0], device)
        out["phase_s"]["profile"] = time.perf_counter() - phase
        if not recheck_ok:
            out["verdict"], out["reason"] = "incorrect", f"correct before the timed loop but not after it: {why}"
            return

        phase = time.perf_counter()
        for i, seed in enumerate(jittered, start=len(nominal)):
            row = _trial(ns, ref, new, jitter, i, seed, True, device, atol, rtol)
            trials.append({k: v for k, v in row.items() if k != "raised"})
            if row.get("raised"):
                break  # a CUDA fault may have poisoned the context: nothing after it can be trusted
        out["phase_s"]["correctness"] += time.perf_counter() - phase
    bad = next((t for t in trials if t["passed"] is False), None)
    if bad is not None:
        out["verdict"] = "incorrect"
        out["reason"] = (f"correct at the nominal shapes, but trial {bad['index']} (jittered shapes "
                         f"{' '.join(bad['input_shapes'])}) failed: {bad['problem']}")
        return
    out["verdict"], out["reason"] = "correct", f"all {sum(1 for t in trials if t['passed'])} trials passed"
    sp = out["reference_timing"]["median_ms"] / out["kernel_timing"]["median_ms"]
    if sp > s["excessive_speedup"]:
        out["reason"] += f"; speedup {sp:.1f}x is above {s['excessive_speedup']:g}x: review by hand"


def run_profile(job: dict[str, Any], out: dict[str, Any]) -> None:
    """One warm call of one side inside an NVTX range named `measured`, for ncu to pick up."""
    s = job["settings"]
    jitter = PopcornJitter(s["jitter_fraction"])
    ns, _ = load(job["reference"], job["kernel"], jitter)
    ref, new, _ = build_models(ns, job["device"], s["seed"])
    fn = new if job["role"] == "kernel" else ref
    inputs = make_inputs(ns, jitter, s["seed"], False, job["device"])
    with torch.no_grad():
        for _ in range(3):
            fn(*inputs)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push("measured")
        fn(*inputs)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
    out["verdict"] = "correct"


def main(argv: list[str]) -> int:
    mode, job_dir = argv[0], Path(argv[1])
    job = json.loads((job_dir / "job.json").read_text(encoding="utf-8"))
    out: dict[str, Any] = {"verdict": "runtime_error", "reason": "", "phase_s": {}}
    result_path = job_dir / f"{mode}.json"
    try:
        if mode == "compile":
            t0 = time.perf_counter()
            _ns, names = load(job["reference"], job["kernel"], PopcornJitter())
            out.update(verdict="correct", reason="compiled", problem_names=names)
            out["phase_s"]["compile"] = time.perf_counter() - t0
        elif mode == "check":
            run_check(job, out)
        elif mode == "profile":
            run_profile(job, out)
        else:
            raise SystemExit(f"unknown mode {mode!r}; expected one of {MODES}")
    except Exception as exc:  # noqa: BLE001 - every failure becomes a verdict with its reason
        out["verdict"] = "compile_error" if mode == "compile" else "runtime_error"
        out["reason"] = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"[:500]
        out["traceback"] = traceback.format_exc()[-8000:]
    result_path.write_text(json.dumps(out, indent=1), encoding="utf-8")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
