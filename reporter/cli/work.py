"""`reporter work`: count each reference's FLOPs and bytes for the hardware scores (no GPU needed).

The other commands that touch references count too, so the floor needs no extra command: `reporter import` counts
the references it just wrote and `reporter validate` (and a build that re-validates on a GPU) those it is about to
check. Each counts only what has no count yet, in the validator's isolated fork server (`validate.work`).
"""

from __future__ import annotations

from pathlib import Path

import click

from ..core.errors import NoDeviceError
from .app import DATA, State, given


@click.command()
@click.argument("data", type=DATA, required=False)
@click.option("--force", is_flag=True, help="Count again, also the references that have a count.")
@click.option("--jobs", type=click.IntRange(min=1), default=None, help="References counted at once (default: every core).")
@click.pass_obj
def work(state: State, data: Path | None, force: bool, jobs: int | None) -> None:
    """Count each reference's FLOPs and bytes for the hardware scores (no GPU needed); kept in DATA/validation/work.

    `reporter import` and `reporter validate` count the references they touch already: this command is for traces
    written by hand, or to count again (--force)."""
    from ..collect import collect
    from ..validate import torch_installed
    from ..validate.work import NO_TORCH, count_missing

    data = given(data, state.config.data_dir, "DATA")
    if not torch_installed():
        raise NoDeviceError(NO_TORCH)
    click.echo(count_missing(data, collect(data).runs, force=force, jobs=jobs, on_done=lambda w: click.echo(w.line())))
