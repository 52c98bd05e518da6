"""The rule sets a verdict is judged under: one frozen record per benchmark version, named in one registry.

A run was scored by some benchmark at some version; KernelBench's tolerance, model mode, construction,
casting and comparison changed over its history. A run's *benchmark verdict* replays the rules that scored it
(`validate.replay`); our *audit* is `strict`, the full re-validation (`worker.run_check`). Where the two
disagree, `core.judgement.judge` names the cause from what the replay measured.

KernelBench facts (its `src/eval.py`, `run_and_check_correctness`, at the leaderboard era and at HEAD 423217d):
both models are built in training mode (never `eval()`) under `no_grad` after `set_seed(42)`, nothing copied
between them; five trials, each drawing its inputs on the CPU generator seeded by a seed drawn from
`manual_seed(42)`, then moved to the GPU; the reference's output and the kernel's are compared by
`output.shape != output_new.shape` and `torch.allclose(output, output_new, atol, rtol)`, so rtol scales the
kernel's output and a dtype, device or structure mismatch raises (an error, so incorrect). fp32 atol = rtol =
1e-2 until 2025-11-04 (the whole public leaderboard), 1e-4 since; fp16 and bf16 cast inputs, init inputs and
both models, at 1e-2.

Standard library only: the isolated worker imports this.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from .schema import CheckSettings

Construction = Literal["seeded", "copied"]
Comparison = Literal["allclose", "float64"]

# The day KernelBench's fp32 tolerance went from 1e-2 to 1e-4.
KERNELBENCH_TOLERANCE_CHANGE = "2025-11-04"
# A verdict whose worst margin (|a − b| over the allowed bound, the worst value of every trial) lies within this
# band of 1 is "at the tolerance": another seed could flip it.
AT_BOUND_BAND = (0.5, 2.0)
# Our audit's answer to a margin in that band: this many more trials on fresh seeds, so a verdict that passed by
# luck of the draw is tested again before it stands (`validate.worker`; its rows say "near the bound").
EXTRA_TRIALS_NEAR_BOUND = 10
# An output of all zeros fails where the reference's largest |value| reaches this share of atol (SOL-ExecBench rejects
# an all-zero output beside a non-zero reference): allclose alone passes zeros wherever the reference sits within atol
# of zero, and below half of atol a reference is rounding noise around a true zero, which an honest kernel may hit.
ALL_ZERO_REFERENCE_SHARE = 0.5
NEAR_BOUND = "near the bound: one more seed"  # such a trial's `inputs` label


@dataclass(frozen=True)
class Rules:
    """One benchmark's correctness rules, as data (each field is something that can flip a verdict)."""

    name: str
    title: str
    source: str  # where these values come from
    atol: Mapping[str, float]
    rtol: Mapping[str, float]
    train_mode: bool  # models left in training mode (BatchNorm uses batch statistics; `self.training` branches)
    construction: Construction  # seeded: both built after the seed, nothing copied; copied: same-name tensors copied
    cast: bool  # fp16/bf16: inputs, init inputs and both models cast to the precision
    comparison: Comparison  # allclose: torch.allclose(reference, output) as is; float64: both cast, tuples flattened
    rtol_scales: Literal["output", "reference"]
    trials: int
    seed: int
    inputs_on_cpu: bool  # inputs drawn on the CPU generator, then moved
    timing: str
    in_force: str = ""
    aliases: tuple[str, ...] = field(default=())
    # The problem-file snapshot runs under these rules were scored on (`collect.refversion`): "" where the files
    # changed within the era, so no one snapshot is theirs.
    problems: str = ""

    def tolerance(self, precision: str) -> tuple[float, float]:
        return self.atol.get(precision, self.atol["fp32"]), self.rtol.get(precision, self.rtol["fp32"])

    def facts(self) -> tuple[tuple[str, str], ...]:
        """(what, value) rows a page shows beside a verdict judged under these rules."""
        tol = ", ".join(f"{p} {self.atol[p]:g}" + ("" if self.atol[p] == self.rtol[p] else f"/{self.rtol[p]:g}")
                        for p in sorted(self.atol))
        return (("tolerance (atol = rtol)", tol),
                ("model mode", "training mode under no_grad" if self.train_mode else "eval() under no_grad"),
                ("construction", "both built after the seed, nothing copied" if self.construction == "seeded"
                 else "same-name tensors copied from Model into ModelNew"),
                ("fp16 / bf16", "inputs, init inputs and both models cast" if self.cast else "precision picks the tolerance only"),
                ("comparison", "torch.allclose(reference, output): dtype, device or structure mismatch is an error; rtol "
                 "scales the output" if self.comparison == "allclose" else
                 "both cast to float64 on the reference's device, tuples flattened; rtol scales the reference"),
                ("trials", f"{self.trials}, inputs from seed {self.seed}" + (" on the CPU generator" if self.inputs_on_cpu else "")),
                ("timing", self.timing))


_KB_SOURCE = "KernelBench src/eval.py run_and_check_correctness"
_KB_COMMON: dict[str, object] = {"train_mode": True, "construction": "seeded", "cast": True, "comparison": "allclose",
                                 "rtol_scales": "output", "trials": 5, "seed": 42, "inputs_on_cpu": True,
                                 "timing": "CUDA events, 100 trials, mean (ms)"}

KERNELBENCH_2025 = Rules(
    name="kernelbench-2025", title="KernelBench, leaderboard era", source=_KB_SOURCE + " (early 2025)",
    atol={"fp32": 1e-2, "fp16": 1e-2, "bf16": 1e-2}, rtol={"fp32": 1e-2, "fp16": 1e-2, "bf16": 1e-2},
    in_force=f"until {KERNELBENCH_TOLERANCE_CHANGE}", aliases=("kernelbench-leaderboard",), problems="leaderboard-2025",
    **_KB_COMMON)  # type: ignore[arg-type]
KERNELBENCH_2025_11 = Rules(
    name="kernelbench-2025-11", title="KernelBench since the November 2025 tolerance change",
    source=_KB_SOURCE + " (HEAD 423217d)",
    atol={"fp32": 1e-4, "fp16": 1e-2, "bf16": 1e-2}, rtol={"fp32": 1e-4, "fp16": 1e-2, "bf16": 1e-2},
    in_force=f"since {KERNELBENCH_TOLERANCE_CHANGE}", aliases=("kernelbench",), **_KB_COMMON)  # type: ignore[arg-type]
_OURS = CheckSettings()
STRICT = Rules(
    name="strict", title="reporter's audit", source="reporter validate (docs/validation.md)",
    atol=_OURS.atol, rtol=_OURS.rtol, train_mode=False, construction="copied", cast=False, comparison="float64",
    rtol_scales="reference", trials=_OURS.nominal_trials, seed=_OURS.seed, inputs_on_cpu=False,
    timing="device time, wall time and CUDA graphs, median with its CI", in_force="this reporter")

RULES: Mapping[str, Rules] = {r.name: r for r in (KERNELBENCH_2025, KERNELBENCH_2025_11, STRICT)}
# Runs whose harness is unknown are judged under this unless `[tool.reporter] rules` names another.
DEFAULT_RULES = STRICT.name


def rules_named(name: str) -> Rules:
    """The rule set called `name` (or one of its aliases); KeyError with the known names otherwise."""
    for r in RULES.values():
        if name == r.name or name in r.aliases:
            return r
    raise KeyError(f"no rule set named {name!r}; known: {', '.join(RULES)}")


def kernelbench_rules_on(date: str) -> Rules:
    """The KernelBench rules in force on an ISO date (YYYY-MM-DD...)."""
    return KERNELBENCH_2025 if date[:10] < KERNELBENCH_TOLERANCE_CHANGE else KERNELBENCH_2025_11
