"""A kernel judged again under the rules that scored its run (`core.rules`), so that "recorded correct, replayed
incorrect" means wrong under the very rules that scored it, and our stricter audit never hides that verdict.

Runs in a worker of its own (mode ``replay``), after the check. What each rule does here, as the benchmark did it:
the seed before construction and before each trial's inputs, the mode the models are left in, whether tensors are
copied between them, the casting, and the comparison: under ``allclose`` the reference's output and the kernel's
go to `torch.allclose` as they are, so a tuple, another dtype or another device is an error, as it was there.
Then the same replay with one rule changed (eval mode; weights copied), which names the cause when the verdicts
disagree (`core.judgement.judge`).

Standard library and torch only (the isolated worker imports this).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import torch

from ..core.rules import STRICT, Rules, rules_named
from ..core.schema import BenchmarkReplay, ReplayVariant, WorkerJob
from .allclose import worst_ratio
from .inputs import PopcornJitter, load, tensors
from .timing import sync

_CAST = {"fp16": torch.float16, "bf16": torch.bfloat16}


class KernelFailed(Exception):
    """The kernel failed where the benchmark calls it incorrect (its constructor raised)."""


def _cast(x: Any, dtype: torch.dtype | None) -> Any:
    if dtype is not None and isinstance(x, torch.Tensor) and x.is_floating_point():
        return x.to(dtype)
    return x


def _trial_seeds(rules: Rules) -> list[int]:
    torch.manual_seed(rules.seed)
    return [int(torch.randint(0, 2**32 - 1, (1,)).item()) for _ in range(rules.trials)]


def _models(ns: dict[str, Any], rules: Rules, dtype: torch.dtype | None) -> tuple[Any, Any]:
    """Both models as the rules build them; a failure of ModelNew's constructor is raised as `KernelFailed`."""
    torch.manual_seed(rules.seed)
    init = [_cast(x, dtype) for x in ns["get_init_inputs"]()]
    with torch.no_grad():
        torch.manual_seed(rules.seed)
        ref = ns["Model"](*init)
        torch.manual_seed(rules.seed)
        try:
            new = ns["ModelNew"](*init)
        except Exception as exc:  # the kernel's own constructor: any failure is its verdict
            raise KernelFailed(f"ModelNew could not be built: {type(exc).__name__}: {exc}"[:400]) from exc
    if rules.construction == "copied":
        ref_sd, new_sd = ref.state_dict(), new.state_dict()
        new.load_state_dict({k: v for k, v in ref_sd.items() if k in new_sd and new_sd[k].shape == v.shape}, strict=False)
    if not rules.train_mode:
        ref, new = ref.eval(), new.eval()
    if dtype is not None:
        ref, new = ref.to(dtype), new.to(dtype)
    return ref, new


def _ratio_on_output(ref_out: torch.Tensor, new_out: torch.Tensor, atol: float, rtol: float) -> float:
    """allclose's own margin, rtol scaling the kernel's output (`torch.allclose(reference, output)`)."""
    r, n = ref_out.detach().double().reshape(-1), new_out.detach().double().reshape(-1).to(ref_out.device)
    same = (r == n) | (torch.isnan(r) & torch.isnan(n))
    ratio = torch.nan_to_num((r - n).abs() / (atol + rtol * n.abs()), nan=math.inf)
    ratio = torch.where(same, torch.zeros_like(ratio), ratio)
    return float(ratio.max()) if ratio.numel() else 0.0


def _compare(ref_out: Any, new_out: Any, rules: Rules, atol: float, rtol: float) -> tuple[bool, str | None, float, float]:
    """(passed, why not, worst ratio under the rules, max |a − b|) of one trial's outputs. Raises where the benchmark's
    comparison raises (a tuple has no shape; allclose refuses another dtype or device)."""
    if rules.comparison == "allclose":
        if ref_out.shape != new_out.shape:
            return False, f"output shape mismatch: expected {tuple(ref_out.shape)}, got {tuple(new_out.shape)}", math.inf, math.inf
        ok = bool(torch.allclose(ref_out, new_out, atol=atol, rtol=rtol))
        ratio = _ratio_on_output(ref_out, new_out, atol, rtol)
        err = float((ref_out.double() - new_out.double()).abs().max()) if ref_out.numel() else 0.0
        return ok, None if ok else f"values differ beyond atol={atol:g}, rtol={rtol:g}", ratio, err
    refs, news = tensors(ref_out), tensors(new_out)
    ratio = worst_ratio(ref_out, new_out, atol, rtol)
    if len(refs) != len(news) or any(r.shape != n.shape for r, n in zip(refs, news)):
        return False, "output count or shape mismatch", math.inf, math.inf
    err = max((float((r.double() - n.double().to(r.device)).abs().max()) for r, n in zip(refs, news) if r.numel()), default=0.0)
    return ratio <= 1, None if ratio <= 1 else f"values differ beyond atol={atol:g}, rtol={rtol:g}", ratio, err


def replay(ns: dict[str, Any], rules: Rules, precision: str, device: str) -> BenchmarkReplay:
    """The kernel's verdict under `rules`: every trial, stopping at the first failure as the benchmark does."""
    dtype = _CAST.get(precision) if rules.cast else None
    atol, rtol = rules.tolerance(precision)
    s_atol, s_rtol = STRICT.tolerance(precision)
    out = BenchmarkReplay(rules=rules.name, passed=None, trials_passed=0, trials=rules.trials)
    try:
        ref, new = _models(ns, rules, dtype)
    except KernelFailed as exc:
        return replace(out, passed=False, problem=str(exc))
    except Exception as exc:  # noqa: BLE001 - the reference itself: no verdict on the kernel
        return replace(out, problem=f"the reference Model cannot be built under these rules: {type(exc).__name__}: {exc}"[:400])
    worst = strict = err = 0.0
    with torch.no_grad():
        for seed in _trial_seeds(rules):
            torch.manual_seed(seed)
            inputs = [_cast(x, dtype) for x in ns["get_inputs"]()]
            inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs]
            ref, new = ref.to(device), new.to(device)
            try:
                ref_out = ref(*inputs)
                sync(device)
            except Exception as exc:  # noqa: BLE001 - the reference itself: no verdict on the kernel
                return replace(out, problem=f"the reference Model fails under these rules: {type(exc).__name__}: {exc}"[:400])
            try:
                new_out = new(*inputs)
                sync(device)
                ok, why, ratio, e = _compare(ref_out, new_out, rules, atol, rtol)
                strict = max(strict, worst_ratio(ref_out, new_out, s_atol, s_rtol))
            except Exception as exc:  # noqa: BLE001 - the benchmark catches these and calls the kernel incorrect
                return replace(out, passed=False, problem=f"runtime error: {type(exc).__name__}: {exc}"[:400],
                               worst_ratio=worst or None, strict_ratio=strict or None)
            worst, err = max(worst, ratio), max(err, e)
            if not ok:
                return replace(out, passed=False, problem=why, worst_ratio=worst, max_abs_error=err, strict_ratio=strict)
            out = replace(out, trials_passed=out.trials_passed + 1)
    return replace(out, passed=True, worst_ratio=worst, max_abs_error=err, strict_ratio=strict)


def variants_of(rules: Rules) -> tuple[tuple[str, Rules], ...]:
    """The replays with one rule changed toward ours, each a possible cause of a disagreement."""
    out = []
    if rules.train_mode:
        out.append(("eval mode", replace(rules, train_mode=False)))
    if rules.construction == "seeded":
        out.append(("weights copied", replace(rules, construction="copied")))
    return tuple(out)


def replay_with_variants(ns: dict[str, Any], rules: Rules, precision: str, device: str) -> BenchmarkReplay:
    main = replay(ns, rules, precision, device)
    found = []
    for change, changed in variants_of(rules):
        got = replay(ns, changed, precision, device)
        found.append(ReplayVariant(change, got.passed, got.problem))
    return replace(main, variants=tuple(found))


def run(job: WorkerJob) -> BenchmarkReplay:
    """The worker's ``replay`` mode: the job's kernel under the rules its run was scored by."""
    ns, _ = load(job.reference, job.kernel, PopcornJitter())
    return replay_with_variants(ns, rules_named(job.rules or ""), job.precision, job.device)
