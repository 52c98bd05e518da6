"""The `reporter` group: global options, logging, and what every command is given (`State`).

Errors are `ReporterError`s (click exceptions with an exit code per kind, see `core.errors`); messages go
through the `reporter` logger, whose counter `--strict` reads.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import click

from .. import __version__, config
from ..config import ReporterConfig
from ..core.errors import LOGGER, ProblemCounter
from ..progress import Progress

DATA = click.Path(exists=True, file_okay=False, path_type=Path)
OUT = click.Path(file_okay=False, path_type=Path)


@dataclass
class State:
    """What the group's options give every command."""

    config: ReporterConfig
    counter: ProblemCounter
    progress: bool  # False under -q: the validator's per-kernel lines are progress too
    bar: Progress  # counts for long phases: on a terminal, or under -v
    quiet: bool = False
    verbose: int = 0


class _EchoHandler(logging.Handler):
    """Log records to stderr through click (so tests' runners and colours work)."""

    COLOURS: ClassVar[dict[int, str]] = {logging.WARNING: "yellow", logging.ERROR: "red", logging.CRITICAL: "red"}

    def emit(self, record: logging.LogRecord) -> None:
        prefix = f"{record.levelname.lower()}: " if record.levelno >= logging.WARNING else ""
        click.secho(prefix + terminal_text(record.getMessage()), err=True, fg=self.COLOURS.get(record.levelno))


# A message quotes what it read (a file name, an attachment's path): an escape sequence there would act on the
# terminal (set its title, move the cursor), and a line break could forge a line of our own.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_text(text: str) -> str:
    """`text` with every control character but the line break and tab written as `\\xNN`, and each line after the
    first indented, so no line of it reads as a message of its own."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text).replace("\n", "\n    ")


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


def given_all(*items: tuple[Path | None, Path | None, str]) -> tuple[Path, ...]:
    """Each (argument, its [tool.reporter] value, its name): the argument, else the value; one usage error naming
    every one that is missing (a bare `reporter build` lacks DATA and SITE, not only the first looked at)."""
    chosen = [(value if value is not None else configured, what) for value, configured, what in items]
    missing = [what for path, what in chosen if path is None]
    if missing:
        keys = " and ".join(w.lower() for w in missing)
        raise click.UsageError(f"missing {' and '.join(missing)}: give {'them' if len(missing) > 1 else 'it'} (e.g. "
                               f"reporter build data/ site/), or set {keys} in [tool.reporter] of pyproject.toml")
    return tuple(path for path, _ in chosen if path is not None)


def given(value: Path | None, configured: Path | None, what: str) -> Path:
    """An argument, else its [tool.reporter] value, else a usage error."""
    return given_all((value, configured, what))[0]


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
      reporter work DATA           count each reference's FLOPs and bytes (no GPU), for the hardware scores
      reporter build DATA SITE     collect traces, re-validate on a GPU if present, render the site
      reporter publish SITE        commit the built site to a gh-pages branch
      reporter init-workflow       write a GitHub Actions workflow that builds and deploys the site
    \b
    Around it:
      reporter cache check DATA    compare DATA/validation with its manifest
      reporter cache migrate DATA  re-key cached results after a key change, rewrite the manifest
      reporter export DATA         every run as a table (csv, parquet, jsonl)
      reporter review RUN          record an audit's verdict on a run's kernel in DATA/reviews.toml
      reporter schema              print the trace format's JSON Schema

    Settings come from [tool.reporter] in ./pyproject.toml (or --config FILE); options beat the file.
    """
    counter = _setup_logging(verbose, quiet)
    ctx.obj = State(config.load(config_file), counter, progress=not quiet,
                    bar=Progress(quiet=quiet, verbose=bool(verbose)), quiet=quiet, verbose=verbose)


def _late(ctx: click.Context, param: click.Parameter, value: int | bool) -> None:
    """-q or -v given after the command's name: the same as before it (parsed before the command runs, so nothing
    has been logged or counted yet)."""
    state = ctx.find_object(State)
    if not value or state is None:
        return
    if param.name == "late_quiet":
        state.quiet = True
    else:
        state.verbose += int(value)
    state.counter = _setup_logging(state.verbose, state.quiet)
    state.progress = not state.quiet
    state.bar = Progress(quiet=state.quiet, verbose=bool(state.verbose))


def with_verbosity(command: click.Command) -> None:
    """Give `command` (and each command of a group) the group's -q and -v, so `reporter build DATA SITE -q` works."""
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            with_verbosity(sub)
        return
    names = {o for p in command.params for o in getattr(p, "opts", ())}
    if "-q" not in names:
        command.params.append(click.Option(["-q", "late_quiet"], is_flag=True, expose_value=False, callback=_late,
                                           is_eager=True, hidden=True))
    if "-v" not in names:
        command.params.append(click.Option(["-v", "late_verbose"], count=True, expose_value=False, callback=_late,
                                           is_eager=True, hidden=True))
