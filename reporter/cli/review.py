"""`reporter review`: record an audit's verdict on one run's kernel in DATA/reviews.toml."""

from __future__ import annotations

from pathlib import Path

import click

from ..collect.reviews import ReviewVerdict
from .app import State, given


@click.command()
@click.argument("run")
@click.option("--data", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="The data folder that holds RUN (default: [tool.reporter] data).")
@click.option("--verdict", type=click.Choice([v.value for v in ReviewVerdict]), required=True, help="The audit's verdict on the run's kernel.")
@click.option("--quote", default="", help="The evidence: kernel.py:LINE, kernel.py:LINE-LINE, reference.py:LINE or 'turn N' "
              "(required unless the verdict is clean).")
@click.option("--note", required=True, help="What the reviewer saw, in a sentence.")
@click.option("--reviewer", default=None, help="Who judged it (default: [tool.reporter.audit] reviewer).")
@click.pass_obj
def review(state: State, run: str, data: Path | None, verdict: str, quote: str, note: str, reviewer: str | None) -> None:
    """Judge RUN's kernel (its id, as its page shows it, or its folder) and append the verdict to DATA/reviews.toml.

    The verdict names the kernel's sha256, so an edited kernel is judged again. reward_hack and contamination leave
    the run out of the rankings; clean, rubric_leak and harness_bug clear its flags; interesting is a note."""
    from ..collect.audit import add_review
    from ..core.errors import ConfigError

    data = given(data, state.config.data_dir, "DATA (--data)")
    who = reviewer or state.config.audit.reviewer
    if not who:
        raise ConfigError("who is the reviewer? pass --reviewer NAME or set [tool.reporter.audit] reviewer")
    done = add_review(data, run, verdict, quote, note, who)
    click.echo(f"{data / 'reviews.toml'}: {done.verdict.value} on {done.run} (kernel {done.kernel_sha256[:12]}…) by {done.reviewer}")
