"""`reporter import NAME`: one command per importer registered in the `reporter.importers` entry point group
(`collect.importer`), made from its options; this module knows no importer by name."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import click

from ..collect import importer as registry
from ..core.errors import LOGGER, ConfigError
from .app import DATA, State

_TYPES: dict[str, click.ParamType[Any]] = {
    "folder": DATA,
    "file": click.Path(exists=True, dir_okay=False, path_type=Path),
    "out": click.Path(file_okay=False, path_type=Path),  # a folder that may not exist yet
    "text": click.STRING,
}


def _option(o: registry.Option) -> click.Option:
    if o.kind == "flag":
        return click.Option([f"--{o.name}", o.key], is_flag=True, help=o.help)
    return click.Option([f"--{o.name}", o.key], type=_TYPES[o.kind], required=o.required, help=o.help)


def command(imp: registry.Importer) -> click.Command:
    """`reporter import NAME SOURCES... --out DATA [--options]` for one importer."""
    @click.pass_obj
    def callback(state: State, /, sources: tuple[Path, ...], out: Path, no_work: bool, **options: Any) -> None:
        from collections import Counter

        from ..collect import collect
        from ..collect.redact import Redactor, load_allow_list
        from ..core.names import visible
        from ..validate.work import count_missing
        done = imp.run(registry.Request(tuple(sources), out, options), state.bar)
        # A message quotes what it found in the runs (a key of eval_results.json, a file name): anyone's text, so
        # redacted as the site's text is, and with no control character left to act on the terminal.
        redactor = Redactor(load_allow_list(out)[0] if out.is_dir() else Redactor().allow)
        for msg in done.messages:
            logging.getLogger(LOGGER).warning(visible(redactor.text(msg, Counter())))
        click.echo(f"wrote {done.written} traces from {done.folders} run folders under {out} ({len(done.messages)} messages)")
        if not no_work and done.written:  # the hardware floor needs each reference's work: counted now, not later
            try:
                click.echo(count_missing(out, collect(out).runs))
            except Exception as exc:  # noqa: BLE001 - the traces are written; the count can be made later
                logging.getLogger(LOGGER).warning(f"work not counted ({type(exc).__name__}: {str(exc)[:200]}); "
                                                  f"`reporter work {out}` counts it for the hardware floor")

    sources = click.Argument(["sources"], nargs=-1, required=True, type=click.Path(exists=True, path_type=Path), metavar=imp.sources)
    out = click.Option(["--out"], type=_TYPES["out"], required=True, help="The data folder to write into.")
    no_work = click.Option(["--no-work"], is_flag=True,
                           help="Do not count the references' FLOPs and bytes now (the hardware floor); `reporter work` can later.")
    return click.Command(imp.name, callback=callback, params=[sources, out, no_work, *map(_option, imp.options)], help=imp.help,
                         short_help=imp.summary)


def _broken(name: str, error: ConfigError) -> click.Command:
    def fail(*_: object, **__: object) -> None:
        raise error
    return click.Command(name, callback=fail, short_help=f"(cannot be loaded: {error.message})",
                         context_settings={"ignore_unknown_options": True, "allow_extra_args": True})


class ImportGroup(click.Group):
    """Its commands are the registered importers, each loaded only when it is the one asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return registry.names()

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in registry.names():
            return None
        try:
            return command(registry.load(cmd_name))
        except ConfigError as exc:  # a broken plug-in: listed with why, and running it says so; the others still work
            return _broken(cmd_name, exc)


@click.group("import", cls=ImportGroup)
def import_group() -> None:
    """Convert other tools' results into traces (an importer per harness format, see docs/your-own-runs.md)."""
