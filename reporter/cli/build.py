"""`reporter build`: collect, re-validate where a GPU is, render."""

from __future__ import annotations

import logging
from pathlib import Path

import click

from .. import config
from ..core.errors import LOGGER, StrictError
from ..core.hosts import SiteSize, over_limits
from ..core.sitefiles import published_size
from .app import DATA, OUT, State, given_all


@click.command()
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
    from ..build import build as run_build

    cfg = state.config
    source, target = given_all((data, cfg.data_dir, "DATA"), (site, cfg.site_dir, "SITE"))
    summary = run_build(source, target, config.settings(cfg),
                        validate=not no_validate, ncu=bool(ncu if ncu is not None else cfg.validation.ncu),
                        strict=strict, progress=state.bar if state.progress else None, redact=not no_redact, jobs=jobs,
                        options=config.page_options(cfg), default_rules=cfg.rules)
    if summary.redaction is not None:
        for line in summary.redaction.lines():
            logging.getLogger(LOGGER).debug("redacted in %s", line)  # -v lists them run by run
    if not (state.quiet and summary.redaction is not None and not summary.redaction.total):  # -q: "no secrets" is no news
        click.echo(summary.redaction_line())
    if not summary.committed:
        raise StrictError(f"--strict: {target} was left as it was, because of the problems reported above")
    for sentence in over_limits(published_size(target) or SiteSize(0, 0, 0, "")):  # before anyone publishes it
        logging.getLogger(LOGGER).warning("%s (docs/publishing.md: what each host accepts)", sentence)
    click.echo(summary.line())
    if strict and state.counter.total:
        raise StrictError(f"--strict: {state.counter.warnings} warning(s) and {state.counter.errors} error(s) "
                          "were reported above")
