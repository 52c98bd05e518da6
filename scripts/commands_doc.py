"""docs/commands.md's reference of every command and option, made from the CLI itself.

`python scripts/commands_doc.py` rewrites the part of docs/commands.md between the BEGIN and END lines; the rest
of the file is prose written by hand. tests/test_docs.py fails when that part differs from what this makes, so
an option added to a command without running this is a failing test, not a doc that silently lacks it.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DOC = ROOT / "docs" / "commands.md"
BEGIN = "<!-- commands: made by `python scripts/commands_doc.py` from the CLI; tests/test_docs.py checks it -->"
END = "<!-- end of commands -->"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _about(cmd: click.Command) -> str:
    """A command's help as paragraphs; click's `\\b` (keep as is) blocks become indented code."""
    out = []
    for block in inspect.cleandoc(cmd.help or "").split("\n\n"):
        if block.startswith("\b"):
            out.append("\n".join(("    " + line).rstrip() for line in block.removeprefix("\b").strip("\n").splitlines()))
        else:
            out.append(" ".join(block.split()))
    return "\n\n".join(out)


def _section(cmd: click.Command, ctx: click.Context, path: str) -> list[str]:
    usage = " ".join(cmd.collect_usage_pieces(ctx))
    lines = [f"### `{path} {usage}`", "", _about(cmd), ""]
    # every option but --help, which every command has
    # (known by its flags: click 8.5 names the option "_click_default_help", earlier ones "help")
    rows = [p.get_help_record(ctx) for p in cmd.get_params(ctx)
            if isinstance(p, click.Option) and not set(p.opts) & set(ctx.help_option_names)]
    rows = [r for r in rows if r is not None]
    if rows:
        lines += ["| option | |", "|---|---|", *(f"| `{_cell(opts)}` | {_cell(text)} |" for opts, text in rows), ""]
    return lines


def _walk(cmd: click.Command, ctx: click.Context, path: str) -> list[str]:
    """The section of `cmd` and, for a group, of each of its commands (made on demand too, as `reporter import`'s)."""
    lines = _section(cmd, ctx, path)
    if isinstance(cmd, click.Group):
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                lines += _walk(sub, sub.make_context(name, [], parent=ctx, resilient_parsing=True), f"{path} {name}")
    return lines


def render() -> str:
    """The generated part of docs/commands.md, BEGIN and END lines included."""
    from reporter.cli import main
    ctx = main.make_context("reporter", [], resilient_parsing=True)  # with the group's settings: -h, --help
    return "\n".join([BEGIN, "", *_walk(main, ctx, "reporter"), END])


def updated(text: str) -> str:
    """`text` (docs/commands.md) with its generated part made again."""
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return head + render() + tail


if __name__ == "__main__":
    DOC.write_text(updated(DOC.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote {DOC}")
