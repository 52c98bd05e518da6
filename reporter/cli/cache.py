"""`reporter cache`: inspect and repair DATA/validation."""

from __future__ import annotations

from pathlib import Path

import click

from ..core.errors import CacheError
from .app import DATA, State, given


@click.group("cache")
def cache_group() -> None:
    """Inspect and repair DATA/validation (the cached re-validation results and their manifest)."""


@cache_group.command("check")
@click.argument("data", type=DATA, required=False)
@click.pass_obj
def cache_check(state: State, data: Path | None) -> None:
    """Compare DATA/validation with its manifest; exit 5 if anything is missing, extra, changed or unreadable."""
    from ..validate import manifest

    data = given(data, state.config.data_dir, "DATA")
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
    from ..core.errors import report
    from ..validate import manifest

    data = given(data, state.config.data_dir, "DATA")
    done = manifest.migrate(data)
    for old, new in done.moved:
        click.echo(f"moved {old} -> {new}")
    for old in done.dropped:
        click.echo(f"dropped {old} (a newer result for the same content and machine was kept)")
    report(done.problems)
    click.echo(f"{len(done.moved)} moved, {len(done.dropped)} dropped, {len(done.problems)} unreadable; "
               f"wrote {data / 'validation' / manifest.MANIFEST}")
