"""Command line: thin wrappers over the stages.

Errors are `ReporterError`s (click exceptions with an exit code per kind, see `errors`); messages go
through the `reporter` logger, whose counter `--strict` reads.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import click

from . import __version__, config
from .config import ReporterConfig
from .core.errors import LOGGER, CacheError, ConfigError, NoDeviceError, ProblemCounter, StrictError
from .progress import Progress

if TYPE_CHECKING:
    from .collect.traces import RunRecord
    from .core.records import ValidationResult

DATA = click.Path(exists=True, file_okay=False, path_type=Path)
OUT = click.Path(file_okay=False, path_type=Path)


@dataclass
class State:
    """What the group's options give every command."""

    config: ReporterConfig
    counter: ProblemCounter
    progress: bool  # False under -q: the validator's per-kernel lines are progress too
    bar: Progress  # counts for long phases: on a terminal, or under -v


class _EchoHandler(logging.Handler):
    """Log records to stderr through click (so tests' runners and colours work)."""

    COLOURS: ClassVar[dict[int, str]] = {logging.WARNING: "yellow", logging.ERROR: "red", logging.CRITICAL: "red"}

    def emit(self, record: logging.LogRecord) -> None:
        prefix = f"{record.levelname.lower()}: " if record.levelno >= logging.WARNING else ""
        click.secho(prefix + record.getMessage(), err=True, fg=self.COLOURS.get(record.levelno))


def _setup_logging(verbose: int, quiet: bool) -> ProblemCounter:
    logger = logging.getLogger(LOGGER)
    for h in [h for h in logger.handlers if isinstance(h, (_EchoHandler, ProblemCounter))]:
        logger.removeHandler(h)
    echo = _EchoHandler()
    echo.setLevel(logging.WARNING if quiet else logging.DEBUG if verbose else logging.INFO)
    counter = ProblemCounter()
    logger.addHandler(echo)
    logger.addHandler(counter)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    return counter


def _given(value: Path | None, configured: Path | None, what: str) -> Path:
    """An argument, else its [tool.reporter] value, else a usage error."""
    if value is not None:
        return value
    if configured is not None:
        return configured
    raise click.UsageError(f"missing {what} (give it, or set it in [tool.reporter] of pyproject.toml)")


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="reporter")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Read [tool.reporter] from this file instead of ./pyproject.toml.")
@click.option("-v", "--verbose", count=True, help="Also print debug messages.")
@click.option("-q", "--quiet", is_flag=True, help="Print warnings, errors and the result only (no progress).")
@click.pass_context
def main(ctx: click.Context, config_file: Path | None, verbose: int, quiet: bool) -> None:
    """Turn LLM-agent CUDA-kernel runs into a static site people can trust.

    \b
    From your runs to a published site:
      reporter import kernelbench  convert KernelBench run folders into traces under DATA
      reporter validate DATA       re-check kernels on this machine's GPU and cache the results in DATA
      reporter build DATA SITE     collect traces, re-validate on a GPU if present, render the site
      reporter publish SITE        commit the built site to a gh-pages branch
      reporter init-workflow       write a GitHub Actions workflow that builds and deploys the site
    \b
    Around it:
      reporter cache check DATA    compare DATA/validation with its manifest
      reporter cache migrate DATA  re-key cached results after a key change, rewrite the manifest
      reporter export DATA         every run as a table (csv, parquet, jsonl)
      reporter schema              print the trace format's JSON Schema

    Settings come from [tool.reporter] in ./pyproject.toml (or --config FILE); options beat the file.
    """
    counter = _setup_logging(verbose, quiet)
    ctx.obj = State(config.load(config_file), counter, progress=not quiet, bar=Progress(quiet=quiet, verbose=bool(verbose)))


def _tolerances(items: tuple[str, ...]) -> dict[str, float]:
    try:
        return config.parse_tolerances(items)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--tol") from exc


@main.command()
@click.argument("data", type=DATA, required=False)
@click.argument("site", type=OUT, required=False)
@click.option("--strict", is_flag=True, help="Fail (exit 3) if any file could not be used or any warning was logged.")
@click.option("--no-validate", is_flag=True, help="Do not touch the GPU; show cached re-validation results only.")
@click.option("--ncu", is_flag=True, default=None, help="Also profile kernels with Nsight Compute while validating.")
@click.option("--no-redact", is_flag=True, help="Publish secrets (API keys, tokens) as written: for private sites only.")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Processes that read and render runs (default: every core, or REPORTER_JOBS).")
@click.pass_obj
def build(state: State, data: Path | None, site: Path | None, strict: bool, no_validate: bool, ncu: bool | None,
          no_redact: bool, jobs: int | None) -> None:
    """Build the static site in SITE from the runs in DATA."""
    from .build import build as run_build

    cfg = state.config
    target = _given(site, cfg.site_dir, "SITE")
    summary = run_build(_given(data, cfg.data_dir, "DATA"), target, config.settings(cfg),
                        validate=not no_validate, ncu=bool(ncu if ncu is not None else cfg.validation.ncu),
                        strict=strict, progress=state.bar if state.progress else None, redact=not no_redact, jobs=jobs)
    if summary.redaction is not None:
        for line in summary.redaction.lines():
            logging.getLogger(LOGGER).debug("redacted in %s", line)  # -v lists them run by run
    click.echo(summary.redaction_line())
    if not summary.committed:
        raise StrictError(f"--strict: {target} was left as it was, because of the problems reported above")
    click.echo(summary.line())
    if strict and state.counter.total:
        raise StrictError(f"--strict: {state.counter.warnings} warning(s) and {state.counter.errors} error(s) "
                          "were reported above")


@main.command()
@click.argument("data", type=DATA, required=False)
@click.option("--run", "run_ids", multiple=True, help="Only this run (repeatable); the id is the trace's folder under DATA.")
@click.option("--ncu", is_flag=True, default=None, help="Profile the kernel and the reference with Nsight Compute (needs ncu on PATH).")
@click.option("--force", is_flag=True, help="Re-measure even when a cached result exists for this machine.")
@click.option("--trials", type=click.IntRange(min=1), default=None, help="Correctness trials at nominal shapes.")
@click.option("--jitter-trials", type=click.IntRange(min=0), default=None, help="Correctness trials with jittered shapes.")
@click.option("--perf-trials", type=click.IntRange(min=1), default=None, help="Timed calls per kernel.")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Kernels compiled at once (default: sized to the cores from the measured CPU time of a build).")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="Where compiles and checks run: this machine, or a Ray cluster (pip install 'reporter[ray]').")
@click.option("--address", default=None, help="Ray cluster to join (auto or HOST:PORT); default: start a local one.")
@click.option("--compile-during-timing", is_flag=True,
              help="Let compiles run through timing windows (only when the timing basis is immune to CPU load).")
@click.option("--compile-baseline", is_flag=True, default=None, help="Also time the reference under torch.compile (a separate cache entry).")
@click.option("--tol", "tolerances", multiple=True, metavar="PREC=VALUE",
              help="atol and rtol for one precision, e.g. --tol fp32=1e-3 (defaults: fp32 1e-4, fp16/bf16 1e-2).")
@click.pass_obj
def validate(state: State, data: Path | None, run_ids: tuple[str, ...], ncu: bool | None, force: bool,
             trials: int | None, jitter_trials: int | None, perf_trials: int | None, jobs: int | None, executor: str,
             address: str | None, compile_during_timing: bool, compile_baseline: bool | None,
             tolerances: tuple[str, ...]) -> None:
    """Re-check submitted kernels on this machine's GPU; results are cached in DATA/validation."""
    from .collect import collect
    from .validate import gpu_available, torch_installed, validate_runs

    cfg = state.config
    data = _given(data, cfg.data_dir, "DATA")
    settings = config.settings(cfg, nominal_trials=trials, jitter_trials=jitter_trials, perf_trials=perf_trials,
                               torch_compile_baseline=compile_baseline, tol=_tolerances(tolerances))
    if executor == "local" and not torch_installed():
        raise NoDeviceError("torch is not installed, and validating needs it (and a CUDA GPU). On a GPU machine: "
                            "pip install torch ninja (a CUDA build of torch, see https://pytorch.org/get-started/locally/), "
                            "then pip install 'reporter[gpu]'; docs/gpu-setup.md has the whole setup")
    if executor == "local" and not gpu_available():
        raise NoDeviceError("no CUDA device is visible (torch.cuda.is_available() is False); run this on a GPU machine "
                            "(docs/gpu-setup.md), then commit DATA/validation/ so that any machine can build the site")
    if address and executor != "ray":
        raise ConfigError("--address joins a Ray cluster: use it with --executor ray")
    collection = collect(data)
    runs = [r for r in collection.runs if not run_ids or r.run_id in run_ids]
    missing = set(run_ids) - {r.run_id for r in runs}
    if missing:
        raise ConfigError(f"no run with id {', '.join(sorted(missing))} under {data}")
    results = validate_runs(data, runs, settings, ncu=bool(ncu if ncu is not None else cfg.validation.ncu), force=force,
                            progress=state.progress, jobs=jobs or cfg.validation.jobs, executor=executor,
                            address=address, gate=not compile_during_timing)
    by_id = {r.run_id: r for r in runs}
    for run_id, (res, cached) in sorted(results.items()):
        click.echo(result_line(by_id[run_id], res, cached))


def result_line(run: RunRecord, res: ValidationResult, cached: bool) -> str:
    """`validate`'s line for a run: no speedup for an incorrect, failed or suspect kernel (`checks.speedup_reported`)."""
    from .collect.suspicion import suspicion
    from .core.checks import speedup_reported
    from .core.schema import Verdict
    excluded = suspicion(run, res).excluded
    sp = (f"speedup {res.speedup:.2f}x" if res.speedup else "speedup —") if speedup_reported(res.verdict == Verdict.CORRECT, excluded) \
        else "suspect, no speedup" if excluded else "no speedup"
    return f"{run.run_id}: {res.verdict}{' (cached)' if cached else ''} {sp} {res.reason}"


@main.group("cache")
def cache_group() -> None:
    """Inspect and repair DATA/validation (the cached re-validation results and their manifest)."""


@cache_group.command("check")
@click.argument("data", type=DATA, required=False)
@click.pass_obj
def cache_check(state: State, data: Path | None) -> None:
    """Compare DATA/validation with its manifest; exit 5 if anything is missing, extra, changed or unreadable."""
    from .validate import manifest

    data = _given(data, state.config.data_dir, "DATA")
    if manifest.nothing_cached(data):
        click.echo(f"{data / 'validation'}: nothing cached yet, so nothing to check; `reporter validate {data}` "
                   "on a GPU machine writes it (docs/your-own-runs.md)")
        return
    problems = manifest.check(data)
    for p in problems:
        click.echo(str(p))
    if problems:
        raise CacheError(f"{len(problems)} problem(s) in {data / 'validation'}; "
                         "`reporter cache migrate` re-keys entries and rewrites the manifest")
    click.echo(f"{data / 'validation'}: every entry matches the manifest")


@cache_group.command("migrate")
@click.argument("data", type=DATA, required=False)
@click.pass_obj
def cache_migrate(state: State, data: Path | None) -> None:
    """Re-file results under the current keys and rewrite the manifest (unreadable entries stay, with a warning)."""
    from .core.errors import report
    from .validate import manifest

    data = _given(data, state.config.data_dir, "DATA")
    done = manifest.migrate(data)
    for old, new in done.moved:
        click.echo(f"moved {old} -> {new}")
    for old in done.dropped:
        click.echo(f"dropped {old} (a newer result for the same content and machine was kept)")
    report(done.problems)
    click.echo(f"{len(done.moved)} moved, {len(done.dropped)} dropped, {len(done.problems)} unreadable; "
               f"wrote {data / 'validation' / manifest.MANIFEST}")


@main.group("import")
def import_group() -> None:
    """Convert other tools' results into traces."""


@import_group.command("kernelbench")
@click.argument("run_dirs", nargs=-1, required=True, type=DATA)
@click.option("--problems", type=DATA, required=True, help="KernelBench's problem folder (holds level1/, level2/, ...).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="The data folder to write into.")
@click.option("--model", default=None, help="Model name (default: generation_config.yaml's model_name, else the folder name).")
@click.option("--configuration", default=None, help="Prompt / harness settings shared by these runs (optional).")
@click.option("--gpu", default=None, help="The GPU the runs were timed on (default: eval_results.json's hardware).")
@click.option("--baseline", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="KernelBench's results/timing/<hardware>/baseline_time_torch.json: the reference times (ms).")
@click.option("--baseline-compile", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="The torch.compile baseline file (baseline_time_torch_compile_*.json).")
@click.option("--note", default=None, help="A caveat added to every imported run's source note (shown on its page).")
@click.option("--allow-missing-reference", is_flag=True,
              help="Import kernels whose problem file is not under --problems (they cannot be re-validated).")
@click.pass_obj
def import_kernelbench(state: State, run_dirs: tuple[Path, ...], problems: Path, out: Path, model: str | None,
                       configuration: str | None, gpu: str | None, baseline: Path | None, baseline_compile: Path | None,
                       note: str | None, allow_missing_reference: bool) -> None:
    """Convert KernelBench run folders (kernels + eval_results.json), or a runs/ root holding them, into traces under OUT.

    --problems is KernelBench's problem folder (KernelBench/KernelBench in its checkout, holding level1/,
    level2/, ...): each kernel's problem file becomes the run's reference, which re-validation runs against.
    """
    from .collect import kernelbench as kb
    folders = kb.run_dirs(list(run_dirs))
    if not folders:
        raise ConfigError(f"no KernelBench run folder (level_L_problem_P_sample_S_kernel.py files or eval_results.json) "
                          f"in {', '.join(map(str, run_dirs))} or directly inside it")
    missing = kb.missing_references(folders, problems)
    if missing and not allow_missing_reference:
        raise ConfigError(missing + "; nothing was written")
    from .collect import problemset
    today, messages = problemset.scan(problems)  # the universe of the leaderboards' denominators
    drift = problemset.record(out, today)[1]
    opts = kb.ImportOptions(model, configuration, gpu, kb.read_baseline(baseline) if baseline else None,
                            kb.read_baseline(baseline_compile) if baseline_compile else None, note, drift)
    done, total = [0], sum(len(kb.kernel_files(f)) for f in folders)

    def step() -> None:
        done[0] += 1
        state.bar("importing kernels", done[0], total)

    for folder in folders:
        messages += kb.import_kernelbench(folder, problems, out, options=opts, step=step).messages
    written = done[0]
    for msg in messages:
        logging.getLogger(LOGGER).warning(msg)
    click.echo(f"wrote {written} traces from {len(folders)} run folders under {out} ({len(messages)} messages)")


@main.command()
@click.argument("data", type=DATA)
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet", "jsonl"]), default="csv", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="File to write (default: standard output).")
@click.option("--turns", is_flag=True, help="One row per turn and tool call instead of one per run.")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
def export(data: Path, fmt: str, out: Path | None, turns: bool, force: bool) -> None:
    """Write every run in DATA as a table (the columns of reporter.load), with cached re-validation results."""
    from .frames import export_bytes, load_turns
    from .tables import load
    if out is not None and (out.exists() or out.is_symlink()) and not force:
        raise ConfigError(f"{out} already exists; pass --force to overwrite it")
    blob = export_bytes(load_turns(data) if turns else load(data), fmt)
    if out is None:
        sys.stdout.buffer.write(blob)
        sys.stdout.flush()
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        out.unlink()  # --force: replace the file (a link there is replaced too, never written through)
    with open(out, "xb") as fh:
        fh.write(blob)
    click.echo(f"wrote {out}", err=True)


@main.command()
def schema() -> None:
    """Print the JSON Schema of the trace format (version 1)."""
    from .core.records import Trace
    click.echo(json.dumps(Trace.model_json_schema(), indent=2, sort_keys=True))


@main.command()
@click.argument("site", type=click.Path(exists=True, file_okay=False, path_type=Path), required=False)
@click.option("--repo", type=click.Path(exists=True, file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="The git repository to commit into.")
@click.option("--branch", default=None, help="The branch that holds the site. [default: gh-pages]")
@click.option("--cname", default=None, help="Custom domain to write as CNAME (default: keep the branch's CNAME).")
@click.option("--push", "remote", default=None, metavar="REMOTE", help="Push the branch to REMOTE afterwards.")
@click.option("-m", "--message", default=None, help="Commit message (default records source commit and version).")
@click.option("--force", is_flag=True, help="Allow --branch to be the current or default branch (its content is replaced).")
@click.pass_obj
def publish(state: State, site: Path | None, repo: Path, branch: str | None, cname: str | None, remote: str | None,
            message: str | None, force: bool) -> None:
    """Commit the built SITE to a branch that holds only the site (GitHub Pages)."""
    from .publish import publish_site

    pc = state.config.publish
    site = _given(site, state.config.site_dir, "SITE")
    branch = branch or pc.branch or "gh-pages"
    remote = remote or pc.remote
    done = publish_site(site, repo, branch=branch, cname=cname or pc.cname, remote=remote, message=message, force=force)
    if done.left_out:
        logging.getLogger(LOGGER).info("not published: %d path(s) in %s that the build did not write or that are not "
                                       "plain files: %s", len(done.left_out), site, ", ".join(done.left_out[:10]))
    what = f"published {site} to {branch} as {done.commit[:12]}" if done.changed else \
        f"{branch} already holds this site ({done.commit[:12]}): nothing to commit"
    click.echo(what + (f"; pushed to {remote}" if remote else ""))


@main.command("init-workflow")
@click.option("--path", type=click.Path(dir_okay=False, path_type=Path), default=Path(".github/workflows/pages.yml"),
              show_default=True)
@click.option("--data", default="data", show_default=True, help="The data folder the workflow builds from.")
@click.option("--branch", default=None, help="The branch whose pushes deploy (default: the repository's default branch).")
@click.option("--force", is_flag=True, help="Overwrite PATH if it exists.")
@click.option("--install", "install", default=None, metavar="REQUIREMENT",
              help="The pinned reporter the workflow installs (default: this one, as reporter @ git+URL@COMMIT).")
def init_workflow(path: Path, data: str, branch: str | None, force: bool, install: str | None) -> None:
    """Write a GitHub Actions workflow that builds the site (no GPU) and deploys it to Pages.

    It works in a repository that holds only DATA: it installs this reporter, pinned to its commit.
    """
    from .publish import write_workflow

    used, spec = write_workflow(path, data, branch, force=force, install=install)
    click.echo(f"wrote {path} (deploys on pushes to {used}; installs {spec})")


def run() -> None:
    main()


if __name__ == "__main__":
    run()
