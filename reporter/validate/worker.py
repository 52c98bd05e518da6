"""The isolated worker: builds, checks, times and profiles ONE kernel, in its own process.

Run as ``python -m reporter.validate.worker MODE JOB_DIR``; reads ``JOB_DIR/job.json`` and writes
``JOB_DIR/<mode>.json``. It imports only the standard library and torch (the GPU machine has neither
pydantic nor plotly), and it is the only place where trace content is executed. A kernel can corrupt
its CUDA context for good, so the parent never runs two kernels in one worker.

Only correctness checks decide the verdict, and all of them run before anything optional: nominal
trials, timing on the eager bases, the re-check after the timed loop, jittered trials, the named
dynamic checks; then the verdict is saved, and only then is the call captured as a CUDA graph.
"""

from __future__ import annotations

import random
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

# torch's CPU wheel does not need NumPy; without it torch warns on import, into every validator log.
warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
import torch  # noqa: E402

from ..core import schema  # noqa: E402
from ..core.atomic import replace_file  # noqa: E402
from ..core.rules import AT_BOUND_BAND, EXTRA_TRIALS_NEAR_BOUND, NEAR_BOUND  # noqa: E402
from ..core.schema import NO_JITTER_HOOK, NOT_MEASURED, NOT_RUN, CheckSettings, DynamicCheck, DynamicResult, TimingFigures, TrialResult, Verdict, WorkerJob, WorkerResult  # noqa: E402
from . import aftertiming, dynamic, integrity, l2, lightbuild, reftiming, replay, strength  # noqa: E402
from .allclose import compare, judge, worst_ratio  # noqa: E402, F401 - `compare` is part of this module's interface
from .attribution import extension_kernels_in, source_kernels  # noqa: E402
from .inputs import PopcornJitter, build_models, clone, load, make_inputs, poison_allocator, problem_names_used, shape_of, stateful, tensors  # noqa: E402, F401
from .profilecall import profile_call  # noqa: E402
from .timing import peak_memory, sync, time_all, time_graphs  # noqa: E402
from .workerstart import started  # noqa: E402

MODES = ("compile", "check", "profile", "strength", "reference", "replay")
UNTRUSTED = f"{NOT_RUN}: a jittered trial raised, so the CUDA context can no longer be trusted"


@dataclass(frozen=True)
class Settings:
    """What every step of a check reads: the job's settings and the precision it is checked at. Typed, so
    a renamed setting fails the type check here, not the GPU run; it never leaves the worker's process."""

    check: CheckSettings
    precision: str
    stored: schema.ReferenceTiming | None = None  # a stored timing of the reference the check may use (`reftiming`)

    @property
    def atol(self) -> float:
        return self.check.atol[self.precision]

    @property
    def rtol(self) -> float:
        return self.check.rtol[self.precision]


def _trial(ns: dict[str, Any], ref: Any, new: Any, jitter: PopcornJitter, i: int, seed: int, jittered: bool,
           device: str, atol: float, rtol: float, strengthen: str | None = None) -> tuple[TrialResult, bool]:
    """One correctness trial and whether the kernel raised; raises only when it fails at the nominal shapes.
    `strengthen`: a transform of the nominal inputs under which the problem's wrong answers fail (`strength`)."""
    inputs = make_inputs(ns, jitter, seed, jittered, device)
    row = TrialResult(index=i, seed=seed, jittered=jittered, passed=None, input_shapes=tuple(shape_of(x) for x in inputs),
                      inputs=f"strengthened: {strengthen}" if strengthen else None)
    if strengthen:
        nominal_out = ref(*clone(inputs))
        inputs = strength.transformed(inputs, strengthen, seed, device)
    pristine = clone(inputs)
    try:
        ref_out = ref(*clone(inputs))
        sync(device)
    except Exception as exc:
        if not jittered:
            raise RuntimeError(f"the reference Model itself fails: {exc}") from exc
        # The problem does not support these shapes; that says nothing about the kernel.
        return replace(row, problem=f"skipped: the reference raised {type(exc).__name__}"), False
    if strengthen:
        if not strength.usable(ref_out, nominal_out):
            return replace(row, problem="skipped: the reference's own output is not finite or is constant on these inputs"), False
        atol = strength.scaled_atol(atol, ref_out, nominal_out)
    poison_allocator(tensors(ref_out), device)
    k_inputs = clone(inputs)
    try:
        # Settled: the device synchronised and threads the call started joined, so the comparison sees the
        # final output; whether it was final at the return is `dynamic.output_after_return`'s question.
        new_out = dynamic.call_settled(new, k_inputs, device)
    except Exception as exc:
        if not jittered:
            raise  # fails at the nominal shapes: a runtime error, not a shape-robustness problem
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return replace(row, passed=False, problem=f"raised {type(exc).__name__}: {msg[:200]}"), True
    ok, mabs, mrel, problem, witness = judge(ref_out, new_out, atol, rtol)
    mutated = [j for j, (a, b) in enumerate(zip(tensors(pristine), tensors(k_inputs))) if not torch.equal(a, b)]
    if mutated and ok:
        ok, problem = False, f"the kernel modified its input(s) {mutated}"
    margin = worst_ratio(ref_out, new_out, atol, rtol) if ok else None  # how close a pass came to the tolerance's edge
    return replace(row, max_abs_error=mabs, max_rel_error=mrel, passed=ok, problem=problem, mismatch=witness, worst_ratio=margin), False


def _nominal_trials(ns: dict[str, Any], ref: Any, new: Any, jitter: PopcornJitter, nominal: list[int], job: WorkerJob,
                    device: str, out: Draft) -> bool:
    """The trials at the nominal shapes, then one per strengthening transform of the problem's check (`job.strength`);
    True when one failed (the verdict is then incorrect)."""
    s = Settings(job.settings, job.precision)
    plan = [(seed, None) for seed in nominal] + [(nominal[0], name) for name in (job.strength.strengthen if job.strength else ())]
    out.result = replace(out.result, check_strength=job.strength)
    for i, (seed, name) in enumerate(plan):  # one at a time: a trial that raises keeps those before it
        row = _trial(ns, ref, new, jitter, i, seed, False, device, s.atol, s.rtol, name)[0]
        out.result = replace(out.result, trials=(*out.result.trials, row))
    margin = max((t.worst_ratio or 0.0 for t in out.result.trials), default=0.0)
    if all(t.passed for t in out.result.trials) and AT_BOUND_BAND[0] <= margin <= AT_BOUND_BAND[1]:
        gen = random.Random(nominal[-1])  # a pass near the tolerance's edge is tried again on fresh seeds before it stands
        for k in range(len(plan), len(plan) + EXTRA_TRIALS_NEAR_BOUND):
            row = _trial(ns, ref, new, jitter, k, gen.randrange(2**31), False, device, s.atol, s.rtol)[0]
            out.result = replace(out.result, trials=(*out.result.trials, replace(row, inputs=NEAR_BOUND)))
    bad = next((t for t in out.result.trials if t.passed is False), None)
    if bad is not None:
        where = f"{bad.inputs}, at the nominal shapes" if bad.inputs == NEAR_BOUND else \
            f"{bad.inputs} inputs at the nominal shapes" if bad.inputs else "nominal shapes"
        _verdict(out, Verdict.INCORRECT, f"trial {bad.index} ({where}) failed: {bad.problem}")
    return bad is not None


def run_strength(job: WorkerJob, out: Draft) -> None:
    """The problem's check strength, on the reference alone (no kernel is loaded in this process)."""
    s = Settings(job.settings, job.precision)
    t0 = time.perf_counter()
    found = strength.strength_entry(job.reference, job.device, s.check.seed, s.atol, s.rtol)
    out.result = replace(out.result, verdict=Verdict.CORRECT, reason="check strength measured", check_strength=found)
    out.timed("strength", t0)


class Draft:
    """The worker's result while the steps make it: the one mutable thing here. A step replaces `result`
    (a frozen `WorkerResult`) with `dataclasses.replace`; `main`'s `save` writes it as it stands."""

    def __init__(self) -> None:
        self.result = WorkerResult(Verdict.RUNTIME_ERROR)

    def phases(self, **seconds: float) -> None:
        self.result = replace(self.result, phase_s={**self.result.phase_s, **seconds})

    def timed(self, phase: str, since: float) -> None:
        """Phase `phase` ran from `since` (time.perf_counter) until now."""
        self.phases(**{phase: time.perf_counter() - since})


def _time_and_count(ns: dict[str, Any], ref: Any, new: Any, jitter: PopcornJitter, nominal: list[int],
                    s: Settings, device: str, out: Draft, names: tuple[set[str], set[str]]
                    ) -> tuple[list[list[Any]], dict[tuple[str, int], Any], list[Any]]:
    """The eager timing bases at nominal shapes, with launch counts (the kernel's with its launch
    attribution) and peak memory from the profiled call set; returns the timed input sets. A stored
    reference timing that fits (`reftiming.Reuse`) stands in for timing the reference here. Phase times
    go to `out`, those of a basis that raised included. Also the kernel's kept timed outputs and its last timed inputs
    (`time_all`'s `kept` and `last_inputs`)."""
    sets = [make_inputs(ns, jitter, seed, False, device) for seed in nominal]
    fns = _timed_fns(ref, new, s)
    # (the torch.compile baseline is timed beside the reference it compiles: no stored timing stands in then)
    reuse = reftiming.Reuse(s.stored, tuple(shape_of(x) for x in sets[0]), device) if s.stored and len(fns) == 2 else None
    phases: dict[str, float] = {}
    kept: dict[tuple[str, int], Any] = {}
    last: list[Any] = []
    try:
        timed, calls, reading = time_all(fns, sets, s.check, device, [names] + [None] * (len(fns) - 1), phases, reuse,
                                         kept=kept, last_inputs=last)
    finally:  # the windows' totals after the phases, which name what ran in order
        out.phases(**{k: v for k, v in phases.items() if k not in schema.TOTALS}, **{k: v for k, v in phases.items() if k in schema.TOTALS})
    out.result = replace(out.result, kernel_timing=timed[0], compile_timing=timed[2] if len(timed) > 2 else None,
                         reference_timing=timed[1] if reuse is None or timed[1] else reuse.figures(), gpu_reading=reading,
                         reference_from=reuse.used if reuse else None, reference_not_reused=reuse.why_not if reuse else None)
    if calls is not None:
        out.result = replace(out.result, kernel_launches=calls.launches[0], reference_launches=calls.launches[1],
                             kernel_peak_bytes=calls.peak_bytes[0], reference_peak_bytes=calls.peak_bytes[1])
    elif device == "cuda":  # the profiler failed (its note says so): peak memory needs no profiler
        out.result = replace(out.result, kernel_peak_bytes=peak_memory(new, sets[0], device),
                             reference_peak_bytes=peak_memory(ref, sets[0], device))
    return sets, kept, last or sets[-1]


def _timed_fns(ref: Any, new: Any, s: Settings) -> list[Any]:
    return [new, ref] + ([torch.compile(ref)] if s.check.torch_compile_baseline else [])


def _jittered_trials(ns: dict[str, Any], ref: Any, new: Any, jitter: PopcornJitter, seeds: list[int], start: int,
                     s: Settings, device: str, out: Draft) -> bool:
    """The jittered trials; True when the kernel raised in one (the CUDA context may be poisoned since)."""
    if jitter.calls == 0:
        # The problem never asked for a jittered size: these trials would repeat the nominal shapes.
        out.result = replace(out.result, jitter_note=NO_JITTER_HOOK)
        return False
    for i, seed in enumerate(seeds, start=start):
        row, raised = _trial(ns, ref, new, jitter, i, seed, True, device, s.atol, s.rtol)
        out.result = replace(out.result, trials=(*out.result.trials, row))
        if raised:
            return True  # a CUDA fault may have poisoned the context: nothing after it can be trusted
    return False


def _dynamic_checks(ns: dict[str, Any], ref: Any, new: Any, jitter: PopcornJitter, nominal: list[int],
                    s: Settings, device: str, out: Draft) -> None:
    """The named dynamic checks; one that fails to run (out of memory beside the extra copies, a fault) is
    "not run" with the reason: they flag, and must never become the verdict."""
    done: list[DynamicResult] = []
    try:
        first = make_inputs(ns, jitter, nominal[0], False, device)
        second = make_inputs(ns, jitter, nominal[-1] if len(nominal) > 1 else nominal[0] + 1, False, device)
        done += [integrity.harness_result(), integrity.determinism(ref, new, first, device, s.atol, s.rtol)]
        done.append(dynamic.output_after_return(new, first, device))
        done += dynamic.aliasing(ref, new, first, second, device)
        rows, found = dynamic.statistics_trials(ref, new, first, nominal[0], device, s.atol, s.rtol)
        out.result = replace(out.result, statistics_trials=tuple(rows))
        done.append(found)
    except Exception as exc:  # noqa: BLE001 - a check that cannot run says so; the verdict is the trials'
        why = f"{NOT_RUN}: {type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0][:200]}"
        ran = {d.check for d in done} | {DynamicCheck.L2_PERSISTENCE}
        done += [DynamicResult(c, None, why) for c in DynamicCheck if c not in ran]
    # read from the timed loop's guard, which ran whatever the checks above did
    out.result = replace(out.result, dynamic_checks=(*done, l2.guard().result()))


def _on_sides(result: WorkerResult, change: Callable[[int, TimingFigures], TimingFigures]) -> WorkerResult:
    """`result` with `change(side, figures)` applied to each side timed in this check (0 kernel, 1 reference,
    2 compile): a stored reference timing it used is left as stored."""
    stored = {reftiming.REFERENCE} if result.reference_from is not None else set()
    figs = [f if f is None or i in stored else change(i, f)
            for i, f in enumerate((result.kernel_timing, result.reference_timing, result.compile_timing))]
    return replace(result, kernel_timing=figs[0], reference_timing=figs[1], compile_timing=figs[2])


def _graph_timing(ref: Any, new: Any, sets: list[list[Any]], s: Settings, device: str, out: Draft,
                  save: Callable[[], None]) -> None:
    """The optional CUDA-graph basis, after the verdict is saved: if capture kills the worker, the saved
    result stands and says the graph was not measured; a failed capture only becomes that basis's note."""
    died = f"{NOT_MEASURED}: the worker died or ran out of time while capturing or replaying the CUDA graph"
    out.result = replace(_on_sides(out.result, lambda _, f: replace(f, graph_note=died)), pending="CUDA-graph timing")
    save()
    phase = time.perf_counter()
    fns = _timed_fns(ref, new, s)
    if out.result.reference_from is not None:  # the stored timing's graph figure stands: a placeholder keeps the places
        fns[reftiming.REFERENCE] = None
    spent = {k: out.result.phase_s.get(k, 0.0) for k in schema.TOTALS}
    try:
        got = iter(time_graphs([f for f in fns if f is not None], sets, s.check, device, spent))
        figures = [next(got) if f is not None else (None, None) for f in fns]
    except Exception as exc:  # noqa: BLE001 - an optional basis failing is its note, never the verdict
        figures = [(None, f"{NOT_MEASURED}: CUDA-graph timing failed: {type(exc).__name__}: {str(exc)[:200]}")] * 3
    out.phases(**spent)
    out.result = replace(_on_sides(out.result, lambda i, f: replace(f, graph=figures[i][0], graph_note=figures[i][1])),
                         pending=None)
    out.timed("graph", phase)


def _untrusted(out: Draft) -> None:
    note = f"{NOT_MEASURED}: a jittered trial raised, so the CUDA context can no longer be trusted"
    out.result = replace(_on_sides(out.result, lambda _, f: f if f.graph is not None else replace(f, graph_note=note)),
                         dynamic_checks=tuple(DynamicResult(c, None, UNTRUSTED) for c in DynamicCheck))


def _verdict(out: Draft, verdict: Verdict, reason: str) -> None:
    out.result = replace(out.result, verdict=verdict, reason=reason)


def run_check(job: WorkerJob, out: Draft, save: Callable[[], None] = lambda: None) -> None:
    """Every correctness check, then the verdict (saved), then the optional CUDA-graph basis.

    Jittered shapes come after the eager timing because a kernel that hard-codes its sizes may fault
    there, and a CUDA fault poisons the context for everything after it in this process.
    """
    s = Settings(job.settings, job.precision, job.stored_reference)
    device = job.device
    atol, rtol = s.atol, s.rtol
    jitter = PopcornJitter(s.check.jitter_fraction)
    phase = time.perf_counter()
    integrity.remember()  # the timers and the harness's functions, before any trace content runs
    l2.start(l2.cuda_driver() if device == "cuda" else None)
    ns, problem_names = load(job.reference, job.kernel, jitter)
    integrity.look("after the kernel's module loaded")
    ref, new, weights_note = build_models(ns, device, s.check.seed)
    out.result = replace(out.result, problem_names=tuple(problem_names), weights_note=weights_note)
    names = (source_kernels(job.kernel), extension_kernels_in(job.extensions_dir))
    out.timed("load", phase)
    gen = random.Random(s.check.seed)
    seeds = [gen.randrange(2**31) for _ in range(s.check.nominal_trials + s.check.jitter_trials)]
    nominal, jittered = seeds[: s.check.nominal_trials], seeds[s.check.nominal_trials:]
    phase = time.perf_counter()
    with torch.no_grad():
        # A reference that keeps state across calls is compared from one state: `cmp_ref` and `cmp_new` start each call
        # from the state they were built with (the timed loops call the models as they are: timing does not compare).
        held, cmp_ref, cmp_new = stateful(ref, new, make_inputs(ns, jitter, nominal[0], False, device))
        out.result = replace(out.result, stateful_reference=tuple(held))
        failed = _nominal_trials(ns, cmp_ref, cmp_new, jitter, nominal, job, device, out)
        out.timed("correctness", phase)
        if failed:
            return
        out.result = replace(out.result, deterministic=integrity.same_bits(cmp_new, make_inputs(ns, jitter, nominal[0], False, device), device))
        sets, kept, last = _time_and_count(ns, ref, new, jitter, nominal, s, device, out, names)
        phase = time.perf_counter()
        # a stateful kernel was timed from drifting states: its timed outputs have no one reference to meet
        in_loop = None if held else aftertiming.timed_outputs(cmp_ref, sets, kept, atol, rtol)
        recheck = aftertiming.recheck(cmp_ref, cmp_new, last, make_inputs(ns, jitter, seeds[-1] + 1, False, device), device, atol, rtol)
        out.result = replace(out.result, recheck=recheck if in_loop is None or not recheck.passed else in_loop)
        out.timed("recheck", phase)
        if not recheck.passed:
            _verdict(out, Verdict.INCORRECT, f"correct before the timed loop but not after it: {recheck.problem}")
            return
        if in_loop is not None:
            _verdict(out, Verdict.INCORRECT, f"correct outside the timed loop but not in it: {in_loop.inputs} failed: {in_loop.problem}")
            return
        phase = time.perf_counter()
        raised = _jittered_trials(ns, cmp_ref, cmp_new, jitter, jittered, len(nominal), s, device, out)
        out.timed("jitter", phase)
        if not raised:
            phase = time.perf_counter()
            _dynamic_checks(ns, cmp_ref, cmp_new, jitter, nominal, s, device, out)
            out.timed("dynamic", phase)
        _conclude(out, s)
        if raised:
            _untrusted(out)
        else:
            _graph_timing(ref, new, sets, s, device, out, save)


def _conclude(out: Draft, s: Settings) -> None:
    res = out.result
    bad = next((t for t in res.trials if t.passed is False), None)
    if bad is not None:
        _verdict(out, Verdict.INCORRECT, f"correct at the nominal shapes, but trial {bad.index} (jittered shapes "
                                         f"{' '.join(bad.input_shapes)}) failed: {bad.problem}")
        return
    reason = f"all {sum(1 for t in res.trials if t.passed)} trials passed"
    k, r = res.kernel_timing, res.reference_timing
    kb, rb = (k.device or k.wall, r.device or r.wall) if k and r else (None, None)
    if kb and rb and kb.median_ms > 0 and rb.median_ms / kb.median_ms > s.check.excessive_speedup:
        reason += f"; speedup {rb.median_ms / kb.median_ms:.1f}x is above {s.check.excessive_speedup:g}x: review by hand"
    _verdict(out, Verdict.CORRECT, reason)


def main(argv: list[str]) -> int:
    mode, job_dir = argv[0], Path(argv[1])
    if mode not in MODES:
        raise SystemExit(f"unknown mode {mode!r}; expected one of {MODES}")
    job = WorkerJob.from_json((job_dir / "job.json").read_text(encoding="utf-8"))
    out = Draft()
    result_path = job_dir / f"{mode}.json"

    def save() -> None:
        out.result = replace(out.result, build_note=lightbuild.build_line())
        replace_file(result_path, out.result.to_json())
    try:
        lightbuild.install()  # every mode: a check must hand torch the build's own arguments, or torch rebuilds
        out.phases(**started(job, mode))
        if mode == "compile":
            t0 = time.perf_counter()
            _, problem_names = load(job.reference, job.kernel, PopcornJitter())
            out.result = replace(out.result, verdict=Verdict.CORRECT, reason="compiled", problem_names=tuple(problem_names))
            out.timed("compile", t0)
        elif mode == "check":
            run_check(job, out, save)
        elif mode == "strength":
            run_strength(job, out)
        elif mode == "replay":  # apart from the check, so neither can spoil the other
            t0 = time.perf_counter()
            out.result = replace(out.result, verdict=Verdict.CORRECT, reason="replayed", benchmark=replay.run(job))
            out.timed("replay", t0)
        elif mode == "reference":
            ran = reftiming.run_reference(job)
            out.result = replace(ran, phase_s={**out.result.phase_s, **ran.phase_s})
        else:
            profile_call(job)
            out.result = replace(out.result, verdict=Verdict.CORRECT)
    except Exception as exc:  # noqa: BLE001 - every failure becomes a verdict with its reason
        out.result = replace(out.result, verdict=Verdict.COMPILE_ERROR if mode == "compile" else Verdict.RUNTIME_ERROR,
                             reason=f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"[:500],
                             log=traceback.format_exc()[-8000:])
    save()
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
