"""Command line: thin wrappers over the stages. Only this module turns errors into exit codes."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from . import __version__
from .errors import ReporterError

DATA = click.Path(exists=True, file_okay=False, path_type=Path)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="reporter")
def main() -> None:
    """Turn LLM-agent CUDA-kernel runs into a static site people can trust.

    \b
    The pipeline, one command per stage:
      reporter build DATA SITE     collect traces, re-validate on a GPU if present, render the site
      reporter validate DATA       re-check kernels on this machine's GPU and cache the results in DATA
      reporter import kernelbench  convert a KernelBench run folder into traces
      reporter publish SITE        commit the built site to a gh-pages branch
      reporter schema              print the trace format's JSON Schema
    """


def _settings(trials: int | None, jitter: int | None, perf: int | None, compile_baseline: bool = False,  # type: ignore[no-untyped-def]
              tolerances: tuple[str, ...] = ()):
    from .records import ValidationSettings
    s = ValidationSettings()
    updates: dict[str, object] = {k: v for k, v in (("nominal_trials", trials), ("jitter_trials", jitter),
                                                   ("perf_trials", perf)) if v is not None}
    if compile_baseline:
        updates["torch_compile_baseline"] = True
    atol, rtol = dict(s.atol), dict(s.rtol)
    for item in tolerances:
        prec, _, value = item.partition("=")
        if prec not in atol:
            raise click.BadParameter(f"{item!r}: precision must be one of {', '.join(sorted(atol))}", param_hint="--tol")
        try:
            atol[prec] = rtol[prec] = float(value)
        except ValueError as exc:
            raise click.BadParameter(f"{item!r}: expected PRECISION=NUMBER, e.g. fp32=1e-4", param_hint="--tol") from exc
    if tolerances:
        updates.update(atol=atol, rtol=rtol)
    return s.model_copy(update=updates)


@main.command()
@click.argument("data", type=DATA)
@click.argument("site", type=click.Path(file_okay=False, path_type=Path))
@click.option("--strict", is_flag=True, help="Exit non-zero if any trace or attachment could not be read.")
@click.option("--no-validate", is_flag=True, help="Do not touch the GPU; show cached re-validation results only.")
@click.option("--ncu", is_flag=True, help="Also profile kernels with Nsight Compute while validating.")
@click.option("--jobs", type=int, default=None, help="Processes rendering run pages (default: every core, or REPORTER_JOBS).")
def build(data: Path, site: Path, strict: bool, no_validate: bool, ncu: bool, jobs: int | None) -> None:
    """Build the static site in SITE from the runs in DATA; a rebuild re-renders only what changed."""
    from .render.incremental import build_incremental

    started = time.monotonic()
    if not no_validate:
        from .validate import gpu_available, validate_runs
        if gpu_available():
            from .collect import collect
            validate_runs(data, collect(data).runs, _settings(None, None, None), ncu=ncu, progress=True)
        else:
            click.echo("no CUDA device here: showing cached re-validation results (see `reporter validate`)", err=True)
    report = build_incremental(data, site, jobs)
    for err in report.errors:
        click.secho(f"could not read {err}", fg="red", err=True)
    problems = sum(len(d["flags"]) for d in report.digests)
    att_errors = sum(len(d["attachment_errors"]) for d in report.digests)
    for d in report.digests:
        for e in d["attachment_errors"]:
            click.secho(f"could not read attachment {e}", fg="yellow", err=True)
    done = ("wrote 0 pages: the site is up to date" if report.up_to_date else
            f"wrote {report.pages} pages to {site} (re-rendered {report.rendered} run pages)")
    click.echo(f"read {report.runs} runs ({len(report.errors)} unreadable), {done}, "
               f"flagged {problems} recorded values, in {time.monotonic() - started:.1f} s")
    if strict and (report.errors or att_errors):
        raise SystemExit(1)


@main.command()
@click.argument("data", type=DATA)
@click.option("--run", "run_ids", multiple=True, help="Only this run (repeatable); the id is the trace's folder under DATA.")
@click.option("--ncu", is_flag=True, help="Profile the kernel and the reference with Nsight Compute (needs ncu on PATH).")
@click.option("--force", is_flag=True, help="Re-measure even when a cached result exists for this machine.")
@click.option("--trials", type=int, default=None, help="Correctness trials at nominal shapes.")
@click.option("--jitter-trials", type=int, default=None, help="Correctness trials with jittered shapes.")
@click.option("--perf-trials", type=int, default=None, help="Timed calls per kernel.")
@click.option("--jobs", type=int, default=4, show_default=True, help="Kernels compiled in parallel (timing stays sequential).")
@click.option("--compile-baseline", is_flag=True, help="Also time the reference under torch.compile (a separate cache entry).")
@click.option("--tol", "tolerances", multiple=True, metavar="PREC=VALUE",
              help="atol and rtol for one precision, e.g. --tol fp32=1e-3 (defaults: fp32 1e-4, fp16/bf16 1e-2).")
def validate(data: Path, run_ids: tuple[str, ...], ncu: bool, force: bool, trials: int | None,
             jitter_trials: int | None, perf_trials: int | None, jobs: int, compile_baseline: bool,
             tolerances: tuple[str, ...]) -> None:
    """Re-check submitted kernels on this machine's GPU; results are cached in DATA/validation."""
    from .collect import collect
    from .validate import gpu_available, validate_runs

    settings = _settings(trials, jitter_trials, perf_trials, compile_baseline, tolerances)
    if not gpu_available():
        raise click.ClickException("no CUDA device is visible (torch.cuda.is_available() is False); run this on a GPU machine")
    collection = collect(data)
    runs = [r for r in collection.runs if not run_ids or r.run_id in run_ids]
    missing = set(run_ids) - {r.run_id for r in runs}
    if missing:
        raise click.ClickException(f"no run with id {', '.join(sorted(missing))} under {data}")
    results = validate_runs(data, runs, settings, ncu=ncu, force=force,
                            progress=True, jobs=jobs)
    for run_id, (res, cached) in sorted(results.items()):
        sp = f"{res.speedup:.2f}x" if res.speedup else "—"
        click.echo(f"{run_id}: {res.verdict}{' (cached)' if cached else ''} speedup {sp} {res.reason}")


@main.group("import")
def import_group() -> None:
    """Convert other tools' results into traces."""


@import_group.command("kernelbench")
@click.argument("run_dir", type=DATA)
@click.option("--problems", type=DATA, required=True, help="KernelBench's problem folder (holds level1/, level2/, ...).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="The data folder to write into.")
@click.option("--model", default=None, help="Model name (default: generation_config.yaml's model_name, else the folder name).")
def import_kernelbench(run_dir: Path, problems: Path, out: Path, model: str | None) -> None:
    """Convert a KernelBench run folder (kernels + eval_results.json) into traces under OUT."""
    from .collect.kernelbench import import_kernelbench as run_import
    report = run_import(run_dir, problems, out, model)
    for msg in report.messages:
        click.secho(msg, fg="yellow", err=True)
    click.echo(f"wrote {len(report.written)} traces under {out} ({len(report.messages)} messages)")


@main.command()
def schema() -> None:
    """Print the JSON Schema of the trace format (version 1)."""
    from .records import Trace
    click.echo(json.dumps(Trace.model_json_schema(), indent=2, sort_keys=True))


@main.command()
@click.argument("site", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--repo", type=click.Path(exists=True, file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="The git repository to commit into.")
@click.option("--branch", default="gh-pages", show_default=True)
@click.option("--cname", default=None, help="Custom domain to write as CNAME.")
@click.option("--push", "remote", default=None, metavar="REMOTE", help="Push the branch to REMOTE afterwards.")
@click.option("-m", "--message", default=None, help="Commit message (default records source commit and version).")
def publish(site: Path, repo: Path, branch: str, cname: str | None, remote: str | None, message: str | None) -> None:
    """Commit the built SITE to a branch that holds only the site (GitHub Pages)."""
    from .publish import publish_site
    sha = publish_site(site, repo, branch=branch, cname=cname, remote=remote, message=message)
    click.echo(f"published {site} to {branch} as {sha[:12]}" + (f" and pushed to {remote}" if remote else ""))


@main.command("init-workflow")
@click.option("--path", type=click.Path(dir_okay=False, path_type=Path), default=Path(".github/workflows/pages.yml"),
              show_default=True)
@click.option("--data", default="data", show_default=True, help="The data folder the workflow builds from.")
def init_workflow(path: Path, data: str) -> None:
    """Write a GitHub Actions workflow that builds the site (no GPU) and deploys it to Pages."""
    from .publish import workflow_yaml
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(workflow_yaml(data), encoding="utf-8")
    click.echo(f"wrote {path}")


def run() -> None:
    try:
        main(standalone_mode=True)
    except ReporterError as exc:
        click.secho(f"error: {exc}", fg="red", err=True)
        sys.exit(exc.exit_code)


if __name__ == "__main__":
    run()
