"""What a KernelBench run folder says less clearly than its files suggest, made visible at import.

- An entry of `eval_results.json` whose kernel file is not in the folder is still an attempt: KernelBench counts
  it (failed) in fast_p's denominator. It is imported as a run without a kernel (an attempted failure, never
  correct: there is nothing to show or re-validate), with one message for the folder.
- A recorded runtime about 1,000x its reference time is likely in the neighbouring unit (µs written where
  KernelBench keeps ms): a message names the unit to read it in (`checks.unit_hint`). It stays as recorded.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..core.checks import unit_hint
from ..core.errors import CollectError
from ..core.records import Trace
from ..core.units import UNIT_LABEL
from ..core.vocab import RunVerdict

Key = tuple[int, int, int]  # (level, problem, sample)


def runtime_hint(timing: Mapping[str, Any]) -> str | None:
    """A message when the recorded runtime is ~1,000x its reference, naming the unit it is likely in."""
    runtime, ref, unit = timing.get("runtime"), timing.get("ref_runtime"), timing.get("unit", "ms")
    if not isinstance(runtime, float | int) or not isinstance(ref, float | int):
        return None
    likely = unit_hint(float(runtime), float(ref), unit)
    if likely is None:
        return None
    return (f"runtime {runtime:g} {UNIT_LABEL[unit]} is ~1,000x its reference's {ref:g} {UNIT_LABEL[unit]}: it is likely "
            f"in {UNIT_LABEL[likely]}, not {UNIT_LABEL[unit]} (imported as written; its page flags what does not add up)")


def without_kernel(results: Mapping[Key, Any], kernels: set[Key]) -> dict[Key, Key]:
    """Eval entries with no kernel file, each with its key at the folder's level: `read_eval_results` files an entry
    whose problem has no kernel under level 0, and a KernelBench run folder holds one level (else it stays unknown)."""
    levels = {lv for lv, _, _ in kernels}
    level = min(levels) if len(levels) == 1 else 0
    out: dict[Key, Key] = {}
    for key in results:
        at = (level, key[1], key[2]) if key[0] == 0 else key
        if at[0] and key not in kernels and at not in kernels:
            out[key] = at
    return out


def attempted_failure(trace: dict[str, Any], recorded: str) -> dict[str, Any]:
    """`trace` (as `kernelbench._trace` made it) for an eval entry with no kernel file: no kernel, no timing, and a
    verdict that is the entry's failure, or "no submission" where the entry claims more than we can show."""
    failed = recorded in (RunVerdict.COMPILE_ERROR, RunVerdict.RUNTIME_ERROR, RunVerdict.INCORRECT)
    run = {**trace["run"], "recorded_verdict": recorded if failed else RunVerdict.NO_SUBMISSION}
    run["source_note"] += (" The run folder has no kernel file for this eval_results.json entry: an attempted failure "
                           f"(the entry recorded {recorded.replace('_', ' ')}); nothing to show or re-validate.")
    return {**trace, "run": run, "final_kernel": None, "metrics": {}}


def write_failures(run_dir: Path, missing: Mapping[Key, Key], make: Callable[[Key, Key], dict[str, Any]],
                   write: Callable[[tuple[str, ...], str], Path]) -> tuple[list[Path], list[str]]:
    """Write an attempted-failure trace per entry without a kernel (`make(entry key, key at its level)`), and one
    message naming them; a trace that cannot be written is a message of its own."""
    written: list[Path] = []
    messages: list[str] = []
    for key, at in sorted(missing.items()):
        try:
            trace = make(key, at)
            Trace.model_validate(trace)
            written.append(write((f"kernelbench-{run_dir.name}", f"l{at[0]}-p{at[1]}-s{at[2]}", "trace.json"),
                                 json.dumps(trace, indent=1, ensure_ascii=False) + "\n"))
        except (CollectError, ValueError) as exc:
            messages.append(f"not imported: {run_dir}/eval_results.json level {at[0]} problem {at[1]} sample {at[2]}: {exc}")
    if written:
        shown = ", ".join(f"L{lv} P{pid} S{s}" for lv, pid, s in sorted(missing.values())[:6]) + (", ..." if len(missing) > 6 else "")
        messages.append(f"{run_dir}: eval_results.json has {len(written)} entr{'y' if len(written) == 1 else 'ies'} with no "
                        f"kernel file ({shown}): imported as attempted failures, counted in the leaderboards' n")
    return written, messages
