"""`reporter validate`: re-check kernels on this machine's GPU (or a Ray cluster) and cache the results."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from .. import config
from ..core import DISTRIBUTION
from ..core.errors import ConfigError, NoDeviceError
from .app import DATA, State, given

if TYPE_CHECKING:
    from ..collect.traces import RunRecord
    from ..core.records import ValidationResult


def _tolerances(items: tuple[str, ...]) -> dict[str, float]:
    try:
        return config.parse_tolerances(items)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--tol") from exc


@click.command()
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
              help=f"Where compiles and checks run: this machine, or a Ray cluster (pip install '{DISTRIBUTION}[ray]').")
@click.option("--address", default=None, help="Ray cluster to join (auto or HOST:PORT); default: start a local one.")
@click.option("--compile-during-timing", is_flag=True,
              help="Let compiles run through timing windows (only when the timing basis is immune to CPU load).")
@click.option("--compile-baseline", is_flag=True, default=None, help="Also time the reference under torch.compile (a separate cache entry).")
@click.option("--quiet", is_flag=True, help="No per-kernel progress lines, and the summary in one line.")
@click.option("--tol", "tolerances", multiple=True, metavar="PREC=VALUE",
              help="atol and rtol for one precision, e.g. --tol fp32=1e-3 (defaults: fp32 1e-4, fp16/bf16 1e-2).")
@click.pass_obj
def validate(state: State, data: Path | None, run_ids: tuple[str, ...], ncu: bool | None, force: bool,
             trials: int | None, jitter_trials: int | None, perf_trials: int | None, jobs: int | None, executor: str,
             address: str | None, compile_during_timing: bool, compile_baseline: bool | None, quiet: bool,
             tolerances: tuple[str, ...]) -> None:
    """Re-check submitted kernels on this machine's GPU; results are cached in DATA/validation, with the call's
    summary (kernels/hour, the GPU's busy share and time to itself, where the time went) beside them."""
    from ..collect import collect
    from ..validate import gpu_available, torch_installed, validate_runs
    from ..validate.throughput import Summary, lines, one_line
    from ..validate.work import count_missing

    cfg = state.config
    data = given(data, cfg.data_dir, "DATA")
    settings = config.settings(cfg, nominal_trials=trials, jitter_trials=jitter_trials, perf_trials=perf_trials,
                               torch_compile_baseline=compile_baseline, tol=_tolerances(tolerances))
    if executor == "local" and not torch_installed():
        raise NoDeviceError("torch is not installed, and validating needs it (and a CUDA GPU). On a GPU machine: "
                            "pip install torch ninja (a CUDA build of torch, see https://pytorch.org/get-started/locally/), "
                            f"then pip install '{DISTRIBUTION}[gpu]'; docs/gpu-setup.md has the whole setup")
    if executor == "local" and not gpu_available():
        raise NoDeviceError("no CUDA device is visible (torch.cuda.is_available() is False); run this on a GPU machine "
                            "(docs/gpu-setup.md), then commit DATA/validation/ so that any machine can build the site")
    if address and executor != "ray":
        raise ConfigError("--address joins a Ray cluster: use it with --executor ray")
    collection = collect(data, default_rules=cfg.rules)
    runs = [r for r in collection.runs if not run_ids or r.run_id in run_ids]
    missing = set(run_ids) - {r.run_id for r in runs}
    if missing:
        raise ConfigError(f"no run with id {', '.join(sorted(missing))} under {data}")
    summaries: list[Summary] = []
    quiet = quiet or state.quiet
    counted = count_missing(data, runs)  # no GPU needed: the floor of every run checked here, with no extra command
    if not quiet:
        click.echo(counted)
    results = validate_runs(data, runs, settings, ncu=bool(ncu if ncu is not None else cfg.validation.ncu), force=force,
                            progress=state.progress and not quiet, jobs=jobs or cfg.validation.jobs, executor=executor,
                            address=address, gate=not compile_during_timing, summaries=summaries)
    by_id = {r.run_id: r for r in runs}
    for run_id, (res, cached) in sorted(results.items()):
        click.echo(result_line(by_id[run_id], res, cached))
    for summary in summaries:  # none when every result came from the cache
        click.echo(one_line(summary) if quiet else "\n".join(lines(summary)))


def result_line(run: RunRecord, res: ValidationResult, cached: bool) -> str:
    """`validate`'s line for a run: no speedup for an incorrect, failed or suspect kernel (`checks.speedup_reported`)."""
    from ..collect.suspicion import suspicion
    from ..core.checks import speedup_reported
    from ..core.schema import Verdict
    excluded = suspicion(run, res).excluded
    sp = (f"speedup {res.speedup:.2f}x" if res.speedup else "speedup —") if speedup_reported(res.verdict == Verdict.CORRECT, excluded) \
        else "suspect, no speedup" if excluded else "no speedup"
    return f"{run.run_id}: {res.verdict}{' (cached)' if cached else ''} {sp} {res.reason}"
