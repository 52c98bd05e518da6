"""`reporter work`: count each reference's FLOPs and bytes for the hardware scores (no GPU needed)."""

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
    """Count each reference's FLOPs and bytes for the hardware scores (no GPU needed); kept in DATA/validation/work."""
    from ..collect import collect
    from ..validate import torch_installed
    from ..validate.work import count_work

    data = given(data, state.config.data_dir, "DATA")
    if not torch_installed():
        raise NoDeviceError("torch is not installed, and counting runs each reference under it (no GPU needed: "
                            "pip install torch --index-url https://download.pytorch.org/whl/cpu)")
    refs = [ref for r in collect(data).runs if (ref := r.source.reference_source) is not None]
    done = count_work(data, refs, force=force, jobs=jobs, on_done=lambda w: click.echo(w.line()))
    click.echo(f"counted {len(done.counts)} references ({sum(not w.counted for w in done.counts)} failed); "
               f"{done.cached} already had a count in {data / 'validation' / 'work'}")
