"""`reporter export` and `reporter schema`: the runs as a table, the trace format as JSON Schema."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import click

from ..core.errors import ConfigError
from .app import DATA


@click.command()
@click.argument("data", type=DATA)
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet", "jsonl"]), default="csv", show_default=True,
              help="The table's file format (parquet needs pyarrow).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="File to write (default: standard output).")
@click.option("--turns", is_flag=True, help="One row per turn and tool call instead of one per run.")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
def export(data: Path, fmt: str, out: Path | None, turns: bool, force: bool) -> None:
    """Write every run in DATA as a table (the columns of reporter.load), with cached re-validation results."""
    from ..frames import export_bytes, load_turns
    from ..tables import load
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


@click.command()
def schema() -> None:
    """Print the JSON Schema of the trace format (version 1)."""
    from ..core.records import Trace
    click.echo(json.dumps(Trace.model_json_schema(), indent=2, sort_keys=True))
