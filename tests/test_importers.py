"""Importers are plug-ins: one module and an entry point in the `reporter.importers` group make `reporter import
NAME`, with its options, and the CLI is not edited. The toy importer below lives in a package of its own (a
folder on sys.path with its .dist-info), as a third party's would."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import minimal_trace
from reporter.cli import main
from reporter.collect import collect
from reporter.collect import importer as registry

TOY = '''
import json
from reporter.collect.importer import Imported, Option


class Toy:
    name = "toy"
    summary = "toy result files (a trace per file) into traces"
    help = "Import toy result files: each is a trace whose model gets --model-prefix."
    sources = "FILE..."
    options = (Option("model-prefix", "Put before every model name.", required=True), Option("loud", "One message per file.", "flag"))

    def run(self, request, progress):
        messages = []
        for i, src in enumerate(request.sources):
            doc = json.loads(src.read_text())
            doc["run"]["model"] = request.text("model_prefix") + doc["run"]["model"]
            (request.out / src.stem).mkdir(parents=True, exist_ok=True)
            (request.out / src.stem / "trace.json").write_text(json.dumps(doc))
            progress("importing", i + 1, len(request.sources))
            messages += [f"{src.name}: imported"] if request.flag("loud") else []
        return Imported(len(request.sources), len(request.sources), tuple(messages))


TOY = Toy()
NOT_ONE = object()
'''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site-packages"
    info = site / "toy_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[reporter.importers]\ntoy = toy_importer:TOY\nbroken = toy_importer:NOT_ONE\n")
    (site / "toy_importer.py").write_text(TOY)
    monkeypatch.syspath_prepend(str(site))
    return tmp_path


def test_an_installed_importer_is_a_command_with_its_options(plugin: Path) -> None:
    assert {"kernelbench", "toy"} <= set(registry.names())
    listing = CliRunner().invoke(main, ["import", "--help"])
    assert "toy" in listing.output and "toy result files (a trace per file) into traces" in listing.output
    assert "--model-prefix" in CliRunner().invoke(main, ["import", "toy", "--help"]).output
    src = plugin / "run-1.json"
    src.write_text(json.dumps(minimal_trace(model="m")))
    out = plugin / "data"
    res = CliRunner().invoke(main, ["import", "toy", str(src), "--out", str(out), "--model-prefix", "lab/", "--loud"])
    assert res.exit_code == 0, res.output
    assert "warning: run-1.json: imported" in res.output and f"wrote 1 traces from 1 run folders under {out} (1 messages)" in res.output
    assert [r.trace.run.model for r in collect(out).runs] == ["lab/m"]
    missing = CliRunner().invoke(main, ["import", "toy", str(src), "--out", str(out)])
    assert missing.exit_code == 2 and "--model-prefix" in missing.output  # a required option is required


def test_a_registered_object_that_is_not_an_importer_is_named(plugin: Path) -> None:
    listing = CliRunner().invoke(main, ["import", "--help"]).output
    assert re.search(r"broken\s+\(cannot be loaded: ", listing) and "toy result files" in listing  # the others still work
    res = CliRunner().invoke(main, ["import", "broken", str(plugin), "--out", str(plugin / "d")])
    assert res.exit_code == 2 and not (plugin / "d").exists()
    assert "toy_importer:NOT_ONE (entry point 'broken' in reporter.importers) is not an importer named 'broken'" in res.output


def test_kernelbench_is_an_importer_like_any_other() -> None:
    kb = registry.load("kernelbench")
    assert isinstance(kb, registry.Importer) and {o.name for o in kb.options} >= {"problems", "baseline", "force"}
    assert registry.BUILTIN["kernelbench"] in {ep.value for ep in _declared()}  # pyproject registers it too


def _declared() -> list[registry.metadata.EntryPoint]:
    """The entry points pyproject.toml declares for the group (what an install of this checkout registers)."""
    import tomllib

    from conftest import ROOT
    doc = tomllib.loads((ROOT / "pyproject.toml").read_text())
    table = doc["project"]["entry-points"][registry.GROUP]
    return [registry.metadata.EntryPoint(k, v, registry.GROUP) for k, v in table.items()]
