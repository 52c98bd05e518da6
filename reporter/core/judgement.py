"""Two verdicts, each named: the benchmark's (the run's own rules, replayed) and our audit's (`strict`), and when
they disagree, why, from what the replay measured (its variants and its margin under our tolerance).

Pure: a page, the CSV and `reporter.load` read the same `Judgement`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .records import DEFAULT_PRECISION, RunInfo, ValidationResult
from .rules import AT_BOUND_BAND, DEFAULT_RULES, STRICT, Rules, rules_named
from .schema import BenchmarkReplay, Verdict

# Cause classes, spelled once: what a disagreement comes from.
TOLERANCE, MODE, CONSTRUCTION, COMPARISON, INPUTS, EXTRA_CHECKS = (
    "tolerance", "model mode", "construction", "comparison", "inputs", "our extra checks")
UNKNOWN_HARNESS = "the trace names no rule set, so the project default judges it"
# The same, where the project named its default (`[tool.reporter] rules`, applied by `collect`).
PROJECT_DEFAULT = "the trace names no rule set, so the project default ([tool.reporter] rules) judges it"


@dataclass(frozen=True)
class Judgement:
    """What a run was judged under, and what each rule set concluded."""

    rules: Rules  # the run's own rules (recorded, inferred or the project default)
    rules_from: str  # what says the run was scored under them
    benchmark: str  # the replayed verdict under `rules`: correct, incorrect, or why there is none
    benchmark_why: str  # its evidence (the first failure, or the trials passed)
    audit: str | None  # our verdict (strict); None: not re-validated
    cause_class: str | None = None  # why the two disagree (one of the classes above)
    cause: str | None = None
    at_bound: str | None = None  # the benchmark verdict sits at its tolerance: another seed could flip it

    @property
    def disagree(self) -> bool:
        return self.cause is not None

    @property
    def harness_rules_known(self) -> bool:
        """Whether the run says which rules scored it (else the harness's own rules are unknown)."""
        return self.rules_from not in (UNKNOWN_HARNESS, PROJECT_DEFAULT)

    @property
    def replayed(self) -> bool:
        """Whether the run's rules are another benchmark's (ours are the audit itself: nothing to replay)."""
        return self.rules.name != STRICT.name

    @property
    def counted(self) -> bool | None:
        """Correct as the boards and listings count it: under the run's own rules where a replay under them says so (a
        board read beside the benchmark's own must mean what it meant), else by our audit; None: not re-validated (the
        harness's recorded verdict stands). The boards' re-validated view counts our audit alone."""
        if self.replayed and self.benchmark in (Verdict.CORRECT, Verdict.INCORRECT):
            return self.benchmark == Verdict.CORRECT
        return None if self.audit is None else self.audit == Verdict.CORRECT


def run_rules(named: str | None, named_from: str | None, default: str = DEFAULT_RULES) -> tuple[Rules, str]:
    """The rule set a run is judged under, and what says so."""
    if named is not None:
        return rules_named(named), named_from or "recorded in the trace"
    return rules_named(default), UNKNOWN_HARNESS


def _benchmark(rep: BenchmarkReplay | None, rules: Rules, audit: str | None) -> tuple[str, str]:
    if rules.name == STRICT.name:
        return (audit or "not re-validated"), "the run's own rules are ours: its verdict is our audit's"
    if rep is None:
        return "not replayed", "no replay under these rules is stored for this kernel: reporter validate replays it on a GPU"
    if rep.rules != rules.name:
        return "not replayed", f"the stored replay is under {rep.rules}, not this run's {rules.name}"
    if rep.passed is None:
        return "no verdict", rep.problem or "the replay gave none"
    if rep.passed:
        return Verdict.CORRECT.value, f"all {rep.trials} trials passed"
    return Verdict.INCORRECT.value, f"trial {rep.trials_passed + 1} of {rep.trials}: {rep.problem}"


def _cause(rep: BenchmarkReplay, rules: Rules, precision: str, ours_correct: bool, ours_reason: str) -> tuple[str, str]:
    """(class, sentence) of a disagreement between the replay and our audit (which are known to differ)."""
    var = {v.change: v for v in rep.variants}
    atol, _ = rules.tolerance(precision)
    strict_atol, _ = STRICT.tolerance(precision)
    if rep.passed and not ours_correct:
        if (ev := var.get("eval mode")) is not None and ev.passed is False:
            return MODE, (f"correct in training mode only: with both models in eval() it fails even under {rules.name}'s "
                          f"own tolerance ({ev.problem})")
        if rep.strict_ratio is not None and rep.strict_ratio > 1:
            err = f"{rep.max_abs_error:.2g}" if rep.max_abs_error is not None else "unknown"
            return TOLERANCE, (f"passes at {atol:g}, fails at {strict_atol:g}: largest error {err}, "
                               f"{rep.strict_ratio:.1f}x our bound")
        if (wc := var.get("weights copied")) is not None and wc.passed is False:
            return CONSTRUCTION, f"fails once weights are copied by name, as ours copies them ({wc.problem})"
        return EXTRA_CHECKS, f"passes {rules.name}'s {rep.trials} trials; fails a check only ours runs: {ours_reason}"
    problem = rep.problem or ""
    if problem.startswith("runtime error") and any(w in problem for w in ("did not match", "shape", "device", "tuple")):
        return COMPARISON, (f"{rules.name}'s comparison refuses the output ({problem}); ours casts both to float64 on the "
                            "reference's device and flattens tuples")
    if (wc := var.get("weights copied")) is not None and wc.passed:
        return CONSTRUCTION, "correct only with weights copied by name: built after the seed with nothing copied, " + problem
    if (ev := var.get("eval mode")) is not None and ev.passed:
        return MODE, "correct in eval mode only: in training mode, as the benchmark runs it, " + problem
    return INPUTS, (f"fails on {rules.name}'s inputs (seed {rules.seed}" + (", CPU generator" if rules.inputs_on_cpu else "")
                    + f") and passes ours: {problem}")


def judge(rules: Rules, rules_from: str, rep: BenchmarkReplay | None, audit: str | None, audit_reason: str,
          precision: str) -> Judgement:
    bench, why = _benchmark(rep, rules, audit)
    out = Judgement(rules, rules_from, bench, why, audit)
    if rep is None or rep.rules != rules.name or rep.passed is None or audit not in (Verdict.CORRECT, Verdict.INCORRECT):
        return out
    lo, hi = AT_BOUND_BAND
    at = (f"its worst value is {rep.worst_ratio:.2f}x the bound {rules.name} allows, so another "
          f"seed could flip it" if rep.worst_ratio is not None and lo <= rep.worst_ratio <= hi else None)
    out = Judgement(rules, rules_from, bench, why, audit, at_bound=at)
    if rep.passed == (audit == Verdict.CORRECT):
        return out
    cls, sentence = _cause(rep, rules, precision, audit == Verdict.CORRECT, audit_reason)
    return Judgement(rules, rules_from, bench, why, audit, cls, sentence, at)


def replay_for(res: ValidationResult, rules: str) -> BenchmarkReplay | None:
    """The stored replay under `rules` (one result keeps a replay per rule set its runs were scored by: two runs of one
    kernel under different rules share it); else the latest replay, whose rules `judge` then names as another's."""
    return next((b for b in (res.benchmark, *res.other_benchmarks) if b is not None and b.rules == rules), res.benchmark)


def judge_run(run: RunInfo, res: ValidationResult | None) -> Judgement:
    """A run's two verdicts from its trace's rules and its cached result: what every page and the runs table show."""
    rules, why = run_rules(run.rules, run.rules_from)
    return judge(rules, why, replay_for(res, rules.name) if res else None, res.verdict if res else None, res.reason if res else "",
                 (res.precision if res else None) or run.precision or DEFAULT_PRECISION)


def rules_rows(rules: Rules) -> tuple[tuple[str, str, str], ...]:
    """(what, under the run's rules, under ours) for each rule: the page's side-by-side of the two rule sets."""
    return tuple((what, theirs, ours) for (what, theirs), (_, ours) in zip(rules.facts(), STRICT.facts(), strict=True))


def verdict_rules(source_revalidated: bool, judgement: Judgement) -> str:
    """The rule set a run's headline verdict was judged under: our audit's once re-validated, else the run's own."""
    return STRICT.name if source_revalidated else judgement.rules.name
