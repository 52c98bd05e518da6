"""Stage 1: each trace (found and parsed by `read.py`) enriched into a run record: flags, the static
cheat scan, parsed attachments, redaction and reviews; `collect` does it for every trace under DATA.

A bad file never stops the others: it becomes a `CollectError` in the result, naming file and field.
The static cheat scan reads each final kernel here (source only, no GPU), so every build has its findings.
"""

from __future__ import annotations

import difflib
import typing
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from pydantic import BaseModel

from ..core.cache import read_work
from ..core.cheats import Finding, scan
from ..core.checks import Flag, check_trace
from ..core.errors import CollectError, Problem
from ..core.frozen import freeze
from ..core.judgement import PROJECT_DEFAULT
from ..core.names import hidden_characters, unique_slugs, visible
from ..core.records import Trace, sha256_text, unknown_fields
from ..core.safeio import checked_path
from ..core.vocab import RunVerdict
from ..core.work import WorkCount
from . import ncu as gm
from .floors import merged, recorded_floor_flags
from .read import REDACTED_ID, find_traces, read_document, run_ids, validate_document
from .redact import RedactionReport, Redactor, load_allow_list
from .refversion import reference_flags
from .reviews import Review, Reviews, ReviewVerdict, load_reviews
from .transcript import scan_transcript


@dataclass(frozen=True)
class ProfileSet:
    """What the attachments of one role (kernel or reference) say."""

    profiler: gm.ProfilerSummary | None = None
    ncu_kernels: tuple[gm.KernelFigures, ...] = ()
    ncu_source: str | None = None

    @property
    def ncu_summary(self) -> gm.KernelFigures | None:
        return gm.summarize(list(self.ncu_kernels))


@dataclass(frozen=True)
class RunRecord:
    """One readable run and everything derived from its files; frozen, built whole by `collect`.

    `trace` is what may be published: secrets in it are redacted (`redact.py`). `source` is the trace as
    written, for the validator only: its cache key and the kernel it executes must be the real ones.
    Sequences are stored as tuples and mappings as read-only views, so nothing downstream can edit them.
    """

    run_id: str  # the trace's folder under DATA (or its file, for `*.trace.json`), as a POSIX path
    trace_path: Path
    trace: Trace
    flags: Sequence[Flag]
    unknown: Sequence[str]
    profiles: Mapping[str, ProfileSet] = field(default_factory=dict)
    attachment_errors: Sequence[CollectError] = ()
    slug: str = ""  # unique among the collection's runs (`reporter.core.names.unique_slugs`)
    findings: Sequence[Finding] = ()  # static cheat scan of the final kernel
    review: Review | None = None  # a reviewer's verdict on exactly this kernel
    review_problem: str = ""  # why a verdict naming this run does not apply
    original: Trace | None = None  # the unredacted trace, kept only when redaction changed something
    redactions: Mapping[str, int] = field(default_factory=dict)  # secrets redacted, by kind (never the secrets)
    work: WorkCount | None = None  # the reference's FLOPs and bytes (DATA/validation/work/); None: never counted

    def __post_init__(self) -> None:
        freeze(self, ("flags", "unknown", "attachment_errors", "findings"), ("profiles", "redactions"))

    @property
    def source(self) -> Trace:
        """The trace exactly as written: validate this, publish `trace`."""
        return self.original if self.original is not None else self.trace

    @property
    def clearance(self) -> Review | None:
        """The reviewer's verdict when it clears what the checks flagged (clean, rubric leak, harness bug)."""
        return self.review if self.review is not None and self.review.clears else None

    @property
    def suspect(self) -> bool:
        """An error-level finding of collect (static scan, transcript) that no reviewer cleared for this exact kernel;
        `collect.suspicion` adds what re-validation measured."""
        return self.clearance is None and any(f.severity == "error" for f in self.findings)

    @property
    def reward_hack(self) -> bool:
        """A reviewer called this exact kernel a reward hack: left out of the rankings, its evidence kept."""
        return self.review is not None and self.review.verdict is ReviewVerdict.REWARD_HACK

    @property
    def kernel_hash(self) -> str | None:
        """The hash of the kernel as written (what the validator runs and a reviewer clears)."""
        fk = self.source.final_kernel
        return sha256_text(fk.source) if fk else None


@dataclass(frozen=True)
class Collection:
    runs: Sequence[RunRecord]
    errors: Sequence[CollectError]
    reviews: Reviews | None = None  # DATA/reviews.toml; its errors are kept apart from the traces'
    redactor: Redactor | None = None  # None: built with --no-redact, nothing was redacted
    config_errors: Sequence[CollectError] = ()  # e.g. a bad line in redact-allow.txt

    def __post_init__(self) -> None:
        freeze(self, ("runs", "errors", "config_errors"))

    @property
    def redaction(self) -> RedactionReport | None:
        """What was redacted, by run and kind, for the build summary; None when redaction was off."""
        if self.redactor is None:
            return None
        return RedactionReport({r.run_id: dict(r.redactions) for r in self.runs})


def _load_profiles(trace_path: Path, trace: Trace) -> tuple[dict[str, ProfileSet], list[CollectError]]:
    """Parse the run's attachments; each must resolve inside the trace's folder (no links out, no `..`)."""
    base = trace_path.parent
    parts: dict[str, dict[str, object]] = {"kernel": {}, "reference": {}}
    errors: list[CollectError] = []
    for i, att in enumerate(trace.attachments):
        where = f"attachments[{i}].path"
        try:
            if "\0" in att.path or not att.path.strip():
                raise CollectError(trace_path, where, f"{att.path!r} is not a usable file name")
            path = base / att.path
            try:
                checked_path(path, base, where, "MAX_ATTACHMENT_BYTES")
            except CollectError as exc:
                raise CollectError(trace_path, where, f"{att.path}: {exc.message}") from exc
            if att.kind == "torch_profiler_trace":
                parts[att.role]["profiler"] = gm.parse_chrome_trace(path, base)
            elif "ncu_kernels" not in parts[att.role]:
                # raw and details exports carry the same metrics; the first one listed wins.
                parts[att.role]["ncu_kernels"] = tuple(gm.derive(k) for k in gm.load_ncu(path, base))
                parts[att.role]["ncu_source"] = att.path
        except CollectError as exc:
            errors.append(exc)
    return {role: ProfileSet(**p) for role, p in parts.items() if p}, errors  # type: ignore[arg-type]


def _read_run(data: Path, path: Path, run_id: str, redactor: Redactor | None) -> RunRecord:
    doc = read_document(path, data)
    trace = original = validate_document(doc, path)
    counts: Counter[str] = Counter(REDACTED_ID.findall(run_id)) if redactor is not None else Counter()  # its folder name's
    if redactor is not None:
        published = redactor.trace_document(doc, counts)
        if counts:
            trace = validate_document(published, path)
    trace, name_problems = _visible_names(trace, path)
    name_problems += _strict_problems(trace, path)
    profiles, attachment_errors = _load_profiles(path, trace)
    attachment_errors = [e.inside(data) for e in attachment_errors + name_problems]
    if redactor is not None:
        # What the attachments say (kernel names) and where they are, as published; the files were found first.
        profiles = redacted_profiles(profiles, redactor, counts)
        attachment_errors = [redactor.error(e, counts) for e in attachment_errors]
        atts = tuple(a.model_copy(update={"path": redactor.text(a.path, counts)}) for a in trace.attachments)
        trace = trace.model_copy(update={"attachments": atts}) if atts != trace.attachments else trace
    findings = tuple(scan(trace.final_kernel.source, trace.run.backend)) if trace.final_kernel is not None else ()
    findings += tuple(scan_transcript(trace.turns, (trace.run.level, trace.run.problem_id, trace.run.sample)))
    work = _work(data, original, attachment_errors)
    if work is not None and redactor is not None:  # work.json is anyone's text too: its words are shown on pages
        def text(t: str) -> str:
            assert redactor is not None
            return redactor.text(t, counts)
        work = replace(work, why=text(work.why), torch=text(work.torch), estimated=tuple(map(text, work.estimated)),
                       tensors=tuple(replace(t, role=text(t.role), dtype=text(t.dtype)) for t in work.tensors),
                       ops=tuple(replace(o, dtype=text(o.dtype)) for o in work.ops),
                       dtype=text(work.dtype) if work.dtype is not None else None)
    flags = merged(check_trace(trace), recorded_floor_flags(trace, work))
    return RunRecord(run_id, path, trace, flags, unknown_fields(trace), profiles, attachment_errors,
                     findings=findings, original=original if counts else None, redactions=dict(sorted(counts.items())), work=work)


# The run fields that name a row, a group or a page: two spellings of one name must be one name, and two names
# that look alike must not be (a leaderboard once showed two identical-looking "Kimi-K2.6" rows).
NAME_FIELDS = ("benchmark", "configuration", "model", "problem_file", "title", "recorded_gpu")


def _visible_names(trace: Trace, path: Path) -> tuple[Trace, list[CollectError]]:
    """`trace` with its name fields in Unicode NFC (a composed and a decomposed é are one model) and every invisible
    or direction-changing character written as `\\uXXXX`; each such field is one problem naming what it held."""
    update, problems = {}, []
    for name in NAME_FIELDS:
        value = getattr(trace.run, name)
        if not isinstance(value, str):
            continue
        shown = visible(unicodedata.normalize("NFC", value))
        if shown != value:
            update[name] = shown
        if hidden := hidden_characters(value):
            problems.append(CollectError(path, f"run.{name}", f"holds {', '.join(hidden)}, invisible on a page: shown as "
                                         f"{shown!r}, so it is not mistaken for a name without them"))
    return (trace.model_copy(update={"run": trace.run.model_copy(update=update)}) if update else trace), problems


def _field_names() -> frozenset[str]:
    """Every field name the trace format defines, at any depth: what a misspelt field is matched against."""
    seen: set[type[BaseModel]] = set()
    todo: list[type[BaseModel]] = [Trace]
    names: set[str] = set()
    while todo:
        model = todo.pop()
        if model in seen:
            continue
        seen.add(model)
        for name, info in model.model_fields.items():
            names.add(name)
            for arg in (info.annotation, *typing.get_args(info.annotation),
                        *(a for x in typing.get_args(info.annotation) for a in typing.get_args(x))):
                if isinstance(arg, type) and issubclass(arg, BaseModel):
                    todo.append(arg)
    return frozenset(names)


_KNOWN_VERDICTS = tuple(v.value for v in RunVerdict)
KERNELBENCH_LEVELS = range(1, 5)  # levels 1-4 of KernelBench's problem set


def _nearest(value: str, choices: Iterable[str]) -> str:
    near = difflib.get_close_matches(value, list(choices), n=1, cutoff=0.7)
    return f" (did you mean {near[0]!r}?)" if near else ""


def _strict_problems(trace: Trace, path: Path) -> list[CollectError]:
    """What a trace holds that the format does not know: each unknown field (kept, not shown) and each word outside a
    closed vocabulary, with the nearest valid name. A warning on the run page and the build's list; an error under
    --strict (a misspelt `recorded_verdict` would otherwise count a correct kernel as not correct, silently)."""
    names = _field_names()
    out = [CollectError(path, field, f"is not a field of the trace format{_nearest(field.rsplit('.', 1)[-1], names)}: "
                        "it is kept but not shown or used") for field in unknown_fields(trace)]
    verdict = trace.run.recorded_verdict
    if verdict is not None and verdict not in _KNOWN_VERDICTS:
        out.append(CollectError(path, "run.recorded_verdict", f"{verdict!r} is not a verdict this reporter knows"
                                f"{_nearest(verdict, _KNOWN_VERDICTS)}; known: {', '.join(_KNOWN_VERDICTS)}. The run counts as "
                                "not correct"))
    level = trace.run.level
    if level is not None and "kernelbench" in (trace.run.benchmark or "").lower() and level not in KERNELBENCH_LEVELS:
        out.append(CollectError(path, "run.level", f"{level} is not a KernelBench level (1 to 4)"))
    return out


def _work(data: Path, source: Trace, errors: list[CollectError]) -> WorkCount | None:
    """The reference's work count (keyed by the reference as written); an unusable file is one more error."""
    if source.reference_source is None:
        return None
    problems: list[Problem] = []
    work = read_work(data, source.reference_source, problems)
    errors.extend(CollectError(p.path, p.field, p.message) for p in problems)
    return work


def redacted_profiles(profiles: Mapping[str, ProfileSet], redactor: Redactor, counts: Counter[str]) -> dict[str, ProfileSet]:
    """Attachments' contents as published: kernel names (an ncu CSV cell, a profiler event) and file names redacted."""
    out = {}
    for role, p in profiles.items():
        profiler = p.profiler and gm.ProfilerSummary(tuple((redactor.text(n, counts), d) for n, d in p.profiler.kernels),
                                                     p.profiler.memcpy, p.profiler.memset)
        def text(t: str) -> str:
            return redactor.text(t, counts)
        # A CSV's header names become stall reasons and the dominant pipe's name on the page: anyone's text, as the cells are.
        kernels = tuple(replace(k, name=text(k.name), stalls_pct=tuple((text(n), v) for n, v in k.stalls_pct),
                                stalls_raw_cycles={text(n): v for n, v in k.stalls_raw_cycles.items()},
                                figures={n: replace(f, value=text(f.value) if isinstance(f.value, str) else f.value,
                                                     unit=text(f.unit), formula=text(f.formula))
                                         for n, f in k.figures.items()})
                        for k in p.ncu_kernels)
        out[role] = ProfileSet(profiler, kernels, redactor.text(p.ncu_source, counts) if p.ncu_source else None)
    return out


def _with_rules(t: Trace, rules: str | None) -> Trace:
    """A trace that names no rule set takes the project's default (`[tool.reporter] rules`), saying so."""
    if rules is None or t.run.rules is not None:
        return t
    return t.model_copy(update={"run": t.run.model_copy(update={"rules": rules, "rules_from": PROJECT_DEFAULT})})


def _placed(record: RunRecord, slug: str, reviews: Reviews | None, redactor: Redactor | None = None,
            default_rules: str | None = None) -> RunRecord:
    """`record` with its slug among the collection's runs, the reviewers' word on its kernel (its words redacted:
    reviews.toml is anyone's text, and a note holding a key once cost the run its page) and the rule set it is
    judged under where the trace names none (`default_rules`, the project's)."""
    record = replace(record, trace=_with_rules(record.trace, default_rules),
                     original=_with_rules(record.original, default_rules) if record.original is not None else None)
    # Which version of its problem the reference is depends on the rule set that scored the run: known only now.
    # The trace as written (a redacted reference has another hash); the messages quote its names, redacted as the
    # rest of the page is (a name is anyone's text: an identifier can hold a token).
    found = reference_flags(record.source)
    if redactor is not None:
        found = [replace(f, message=redactor.text(f.message, Counter())) for f in found]
    record = replace(record, flags=tuple(merged(list(record.flags), found)))
    review, problem = reviews.for_run(record.run_id, record.kernel_hash) if reviews is not None else (None, "")
    if redactor is not None:
        counts: Counter[str] = Counter()
        if review is not None:
            review = replace(review, reviewer=redactor.text(review.reviewer, counts), note=redactor.text(review.note, counts))
        problem = redactor.text(problem, counts)
    return replace(record, slug=slug, review=review, review_problem=problem)


def load_run(data: Path, path: Path, run_id: str, slug: str, reviews: Reviews | None,
             redactor: Redactor | None, default_rules: str | None = None) -> RunRecord:
    """One run as `collect` reads it (checks, findings, attachments, redaction), with its slug and clearance."""
    return _placed(_read_run(data, path, run_id, redactor), slug, reviews, redactor, default_rules)


def collect(data: Path, *, redact: bool = True, default_rules: str | None = None) -> Collection:
    """Read every trace under `data`; a bad one becomes an error naming file and field, never a traceback.

    With `redact` (the default) every text field of the published traces has its secrets replaced,
    except what `DATA/redact-allow.txt` allows; `RunRecord.source` keeps the original for validation.
    `default_rules` names the rule set of runs whose trace names none (`[tool.reporter] rules`; None: `core.rules`'s).
    """
    runs: list[RunRecord] = []
    errors: list[CollectError] = []
    redactor, config_errors = None, list[CollectError]()
    if redact:
        allow, config_errors = load_allow_list(data)
        redactor = Redactor(allow)
    paths = find_traces(data, errors)
    ids = run_ids(data, paths, redactor)
    for path in paths:
        try:
            runs.append(_read_run(data, path, ids[path], redactor))
        except CollectError as exc:
            errors.append(exc)
        except Exception as exc:  # noqa: BLE001 - the guard: one file must never stop the others
            errors.append(CollectError(path, "(internal)", f"reporter failed on this file ({type(exc).__name__}: "
                                       f"{str(exc)[:200]}); the run is skipped. Please report this as a bug."))
    slugs = unique_slugs(r.run_id for r in runs)
    errors = [redactor.error(e, Counter()) for e in errors] if redactor is not None else errors
    reviews = load_reviews(data)
    reviews = replace(reviews, errors=(*reviews.errors, *unknown_clearances(reviews, {r.run_id for r in runs})))
    return Collection([_placed(r, slugs[r.run_id], reviews, redactor, default_rules) for r in runs], errors, reviews, redactor,
                      config_errors)


def unknown_clearances(reviews: Reviews, run_ids: set[str]) -> list[CollectError]:
    """A verdict that names no run found is an error in reviews.toml."""
    return [CollectError(reviews.path, f"{c.where}.run", f"no run {c.run!r} was found; it judges nothing")
            for c in reviews.clearances if c.run not in run_ids]
