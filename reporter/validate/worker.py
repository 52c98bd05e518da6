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
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

# torch's CPU wheel does not need NumPy; without it torch warns on import, into every validator log.
warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
import torch  # noqa: E402

from . import lightbuild  # noqa: E402
from .schema import NO_JITTER_HOOK, TrialResult, Verdict, WorkerResult  # noqa: E402
from .timing import count_launches, peak_memory, sync, time_all  # noqa: E402

MODES = ("compile", "check", "profile")
# Elements compared at once in float64: bounds the comparison's extra device memory to about 0.5 GB.
COMPARE_CHUNK = 1 << 24


class PopcornJitter:
    """The `popcorn_pri` object problems call inside get_inputs() to jitter their shapes.

    Trial 0 (and every nominal trial) returns values unchanged. A jittered trial returns an integer
    within ±fraction of `value`, rounded to a multiple of `align`, at least max(minimum, align), and
    the same answer for the same arguments within one trial, so related dimensions stay consistent.
    """

    def __init__(self, fraction: float = 0.25) -> None:
        self.fraction = fraction
        self.trial_seed: int | None = None
        self.calls = 0  # how often the problem asked: zero means it defines no jitter hook

    def set_trial(self, seed: int | None) -> None:
        self.trial_seed = seed

    def jitter_int(self, value: int, align: int = 1, minimum: int = 1) -> int:
        self.calls += 1
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
    ns = {"__name__": "reporter_problem", "__builtins__": __builtins__, "popcorn_pri": jitter, "torch": torch}
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
        # Factory calls in get_inputs() make their tensors on the device: filling KernelBench-sized
        # inputs on the host took longer than everything else in a check.
        with torch.device(device):
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
        nonfinite, close, t_abs, t_rel = _compare_flat(r.detach().reshape(-1), n.detach().reshape(-1).to(r.device),
                                                        atol, rtol)
        worst_abs, worst_rel = max(worst_abs, t_abs), max(worst_rel, t_rel)
        if nonfinite and ok:
            ok, problem = False, f"{nonfinite} NaN/Inf values where the reference is finite"
        if ok and not close:
            ok, problem = False, f"values differ beyond atol={atol:g}, rtol={rtol:g}"
    return ok, worst_abs, worst_rel, problem


def _compare_flat(r: torch.Tensor, n: torch.Tensor, atol: float, rtol: float) -> tuple[int, bool, float, float]:
    """(non-finite values where the reference is finite, all close, worst abs, worst rel) of two flat tensors.

    In float64, on the tensors' own device, a chunk at a time: a float64 copy of a KernelBench-sized
    output on the host took minutes per trial.
    """
    nonfinite, close, worst_abs, worst_rel = 0, True, 0.0, 0.0
    for lo in range(0, r.numel(), COMPARE_CHUNK):
        r64, n64 = r[lo:lo + COMPARE_CHUNK].double(), n[lo:lo + COMPARE_CHUNK].double()
        nonfinite += int((~torch.isfinite(n64) & torch.isfinite(r64)).sum())
        diff = (r64 - n64).abs()
        diff = torch.where(torch.isnan(diff), torch.full_like(diff, math.inf), diff)
        worst_abs = max(worst_abs, float(diff.max()))
        worst_rel = max(worst_rel, float((diff / (r64.abs() + atol)).max()))
        close = close and bool(torch.allclose(n64, r64, atol=atol, rtol=rtol, equal_nan=False))
    return nonfinite, close, worst_abs, worst_rel


def _trial(ns: dict[str, Any], ref: Any, new: Any, jitter: PopcornJitter, i: int, seed: int, jittered: bool,
           device: str, atol: float, rtol: float) -> tuple[TrialResult, bool]:
    """One correctness trial and whether the kernel raised; raises only when it fails at the nominal shapes."""
    inputs = make_inputs(ns, jitter, seed, jittered, device)
    row = TrialResult(index=i, seed=seed, jittered=jittered, passed=None, input_shapes=tuple(_shape(x) for x in inputs))
    pristine = _clone(inputs)
    try:
        ref_out = ref(*_clone(inputs))
        sync(device)
    except Exception as exc:
        if not jittered:
            raise RuntimeError(f"the reference Model itself fails: {exc}") from exc
        # The problem does not support these shapes; that says nothing about the kernel.
        return replace(row, problem=f"skipped: the reference raised {type(exc).__name__}"), False
    poison_allocator(_tensors(ref_out), device)
    k_inputs = _clone(inputs)
    try:
        new_out = new(*k_inputs)
        sync(device)
    except Exception as exc:
        if not jittered:
            raise  # fails at the nominal shapes: a runtime error, not a shape-robustness problem
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return replace(row, passed=False, problem=f"raised {type(exc).__name__}: {msg[:200]}"), True
    ok, mabs, mrel, problem = compare(ref_out, new_out, atol, rtol)
    mutated = [j for j, (a, b) in enumerate(zip(_tensors(pristine), _tensors(k_inputs))) if not torch.equal(a, b)]
    if mutated and ok:
        ok, problem = False, f"the kernel modified its input(s) {mutated}"
    return replace(row, max_abs_error=mabs, max_rel_error=mrel, passed=ok, problem=problem), False


def _time_and_count(ns: dict[str, Any], ref: Any, new: Any, jitter: PopcornJitter, nominal: list[int],
                    s: dict[str, Any], device: str, out: WorkerResult) -> tuple[bool, str | None]:
    """Launch counts and peak memory, then timing on all bases, at nominal shapes; then the re-check's outcome.

    Peak memory comes first: timing leaves a flush buffer, CUDA-graph pools and profiler state behind,
    which would count as the kernel's memory.
    """
    atol, rtol = s["atol"][s["precision"]], s["rtol"][s["precision"]]
    sets = [make_inputs(ns, jitter, seed, False, device) for seed in nominal]
    phase = time.perf_counter()
    out.kernel_peak_bytes = peak_memory(new, sets[0], device)
    out.reference_peak_bytes = peak_memory(ref, sets[0], device)
    out.kernel_launches = count_launches(new, sets[0], device)
    out.reference_launches = count_launches(ref, sets[0], device)
    out.phase_s["profile"] = time.perf_counter() - phase
    phase = time.perf_counter()
    fns = [new, ref] + ([torch.compile(ref)] if s.get("torch_compile_baseline") else [])
    timed = time_all(fns, sets, s, device)
    out.kernel_timing, out.reference_timing = timed[0], timed[1]
    out.compile_timing = timed[2] if len(timed) > 2 else None
    # Re-check after the timed loop: an output cached on input identity would now be stale.
    recheck_ok, _, _, why = compare(ref(*_clone(sets[-1])), new(*_clone(sets[-1])), atol, rtol)
    out.phase_s["timing"] = time.perf_counter() - phase
    return recheck_ok, why


def _jittered_trials(ns: dict[str, Any], ref: Any, new: Any, jitter: PopcornJitter, seeds: list[int], start: int,
                     s: dict[str, Any], device: str, out: WorkerResult) -> None:
    if jitter.calls == 0:
        # The problem never asked for a jittered size: these trials would repeat the nominal shapes.
        out.jitter_note = NO_JITTER_HOOK
        return
    atol, rtol = s["atol"][s["precision"]], s["rtol"][s["precision"]]
    for i, seed in enumerate(seeds, start=start):
        row, raised = _trial(ns, ref, new, jitter, i, seed, True, device, atol, rtol)
        out.trials.append(row)
        if raised:
            break  # a CUDA fault may have poisoned the context: nothing after it can be trusted


def run_check(job: dict[str, Any], out: WorkerResult) -> None:
    """Nominal trials, then timing and counts at nominal shapes, then jittered trials last.

    Jittered shapes come last because a kernel that hard-codes its sizes may fault there, and a CUDA
    fault poisons the context for everything after it in this process.
    """
    s = {**job["settings"], "precision": job.get("precision", "fp32")}
    device = job["device"]
    jitter = PopcornJitter(s["jitter_fraction"])
    phase = time.perf_counter()
    ns, out.problem_names = load(job["reference"], job["kernel"], jitter)
    ref, new, out.weights_note = build_models(ns, device, s["seed"])
    out.phase_s["load"] = time.perf_counter() - phase
    gen = random.Random(s["seed"])
    seeds = [gen.randrange(2**31) for _ in range(s["nominal_trials"] + s["jitter_trials"])]
    nominal, jittered = seeds[: s["nominal_trials"]], seeds[s["nominal_trials"]:]
    phase = time.perf_counter()
    with torch.no_grad():
        for i, seed in enumerate(nominal):
            out.trials.append(_trial(ns, ref, new, jitter, i, seed, False, device, s["atol"][s["precision"]],
                                     s["rtol"][s["precision"]])[0])
        out.phase_s["correctness"] = time.perf_counter() - phase
        bad = next((t for t in out.trials if t.passed is False), None)
        if bad is not None:
            out.verdict, out.reason = Verdict.INCORRECT, f"trial {bad.index} (nominal shapes) failed: {bad.problem}"
            return
        first = make_inputs(ns, jitter, nominal[0], False, device)
        a, b = new(*_clone(first)), new(*_clone(first))
        sync(device)
        out.deterministic = all(torch.equal(x, y) for x, y in zip(_tensors(a), _tensors(b)))
        recheck_ok, why = _time_and_count(ns, ref, new, jitter, nominal, s, device, out)
        if not recheck_ok:
            out.verdict, out.reason = Verdict.INCORRECT, f"correct before the timed loop but not after it: {why}"
            return
        phase = time.perf_counter()
        _jittered_trials(ns, ref, new, jitter, jittered, len(nominal), s, device, out)
        out.phase_s["correctness"] += time.perf_counter() - phase
    _conclude(out, s)


def _conclude(out: WorkerResult, s: dict[str, Any]) -> None:
    bad = next((t for t in out.trials if t.passed is False), None)
    if bad is not None:
        out.verdict = Verdict.INCORRECT
        out.reason = (f"correct at the nominal shapes, but trial {bad.index} (jittered shapes "
                      f"{' '.join(bad.input_shapes)}) failed: {bad.problem}")
        return
    out.verdict, out.reason = Verdict.CORRECT, f"all {sum(1 for t in out.trials if t.passed)} trials passed"
    k, r = out.kernel_timing, out.reference_timing
    kb, rb = (k.device or k.wall, r.device or r.wall) if k and r else (None, None)
    if kb and rb and kb.median_ms > 0 and rb.median_ms / kb.median_ms > s["excessive_speedup"]:
        out.reason += f"; speedup {rb.median_ms / kb.median_ms:.1f}x is above {s['excessive_speedup']:g}x: review by hand"


def run_profile(job: dict[str, Any], out: WorkerResult) -> None:
    """One warm call of one side inside an NVTX range named `measured`, for ncu to pick up."""
    s = job["settings"]
    jitter = PopcornJitter(s["jitter_fraction"])
    ns, _ = load(job["reference"], job["kernel"], jitter)
    ref, new, _ = build_models(ns, job["device"], s["seed"])
    fn = new if job["role"] == "kernel" else ref
    inputs = make_inputs(ns, jitter, s["seed"], False, job["device"])
    # Start from the cache state the device timing starts from: L2 flushed before the call.
    flush = torch.empty(s["flush_l2_mb"] * 1024 * 1024 // 4, dtype=torch.float32, device=job["device"])
    with torch.no_grad():
        for _ in range(3):
            fn(*inputs)
        flush.zero_()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push("measured")
        fn(*inputs)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
    out.verdict = Verdict.CORRECT


def main(argv: list[str]) -> int:
    mode, job_dir = argv[0], Path(argv[1])
    job = json.loads((job_dir / "job.json").read_text(encoding="utf-8"))
    out = WorkerResult()
    result_path = job_dir / f"{mode}.json"
    try:
        lightbuild.install()  # every mode: a check must hand torch the build's own arguments, or torch rebuilds
        if mode == "compile":
            t0 = time.perf_counter()
            _, out.problem_names = load(job["reference"], job["kernel"], PopcornJitter())
            out.verdict, out.reason = Verdict.CORRECT, "compiled"
            out.phase_s["compile"] = time.perf_counter() - t0
        elif mode == "check":
            run_check(job, out)
        elif mode == "profile":
            run_profile(job, out)
        else:
            raise SystemExit(f"unknown mode {mode!r}; expected one of {MODES}")
    except Exception as exc:  # noqa: BLE001 - every failure becomes a verdict with its reason
        out.verdict = Verdict.COMPILE_ERROR if mode == "compile" else Verdict.RUNTIME_ERROR
        out.reason = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"[:500]
        out.log = traceback.format_exc()[-8000:]
    out.build_note = lightbuild.build_line()
    # allow_nan: an infinite error (NaN output) must reach the parent as Infinity, which pydantic reads
    result_path.write_text(json.dumps(asdict(out), indent=1), encoding="utf-8")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
