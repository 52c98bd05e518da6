"""docs/commands.md lists every command and option of the CLI: its reference part is made from the CLI
(scripts/commands_doc.py) and must be as that script makes it now; and, checked apart from the script, every
option string of every command is in it."""

from __future__ import annotations

import importlib.util
import re
from types import ModuleType

import click

from conftest import ROOT
from reporter.cli import main

DOC = ROOT / "docs" / "commands.md"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("commands_doc", ROOT / "scripts" / "commands_doc.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def options(group: click.Group, ctx: click.Context) -> dict[str, list[str]]:
    """Every command path and the option strings it takes (--help left out), walked through the group's own API."""
    out: dict[str, list[str]] = {}
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        assert cmd is not None
        path = f"{ctx.command_path} {name}"
        sub = cmd.make_context(name, [], parent=ctx, resilient_parsing=True)
        # hidden: the group's -q and -v repeated after a command's name, documented once with the group's
        out[path] = [o for p in cmd.params if isinstance(p, click.Option) and p.name != "help" and not p.hidden for o in p.opts]
        if isinstance(cmd, click.Group):
            out |= options(cmd, sub)
    return out


def test_the_commands_reference_is_made_from_the_cli() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert _script().updated(text) == text, "docs/commands.md is stale: run python scripts/commands_doc.py"


def test_every_command_and_option_is_in_the_doc() -> None:
    text = DOC.read_text(encoding="utf-8")
    found = options(main, main.make_context("reporter", [], resilient_parsing=True))
    assert {"reporter build", "reporter import kernelbench", "reporter cache migrate"} <= set(found)
    assert "--jobs" in found["reporter build"] and "--tol" in found["reporter validate"]
    missing: list[str] = []
    for path, opts in found.items():
        head = f"### `{path} "
        part = text.split(head)[1].split("\n### ")[0] if head in text else None  # the command's own section
        missing += [path] if part is None else [f"{path} {o}" for o in opts if not re.search(rf"[`,] ?{re.escape(o)}(?![\w-])", part)]
    assert missing == []


def test_the_feature_map_names_files_that_exist() -> None:
    """docs/architecture.md's feature map (issue 47, item 7): a renamed module or test must be renamed there too."""
    root = ROOT
    doc = (root / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = doc.split("## Features, floor by floor", 1)[1].split("\n## ", 1)[0]
    named = re.findall(r"`((?:core|collect|aggregates|validate|render|templates|static|tests)/[\w./]+|frames\.py)`", table)
    assert len(named) > 60
    missing = [n for n in named if not ((root / n).exists() or (root / "reporter" / n).exists())]
    assert not missing, missing
