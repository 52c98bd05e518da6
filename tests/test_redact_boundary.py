"""Redaction at the boundary: a secret planted anywhere DATA can hold one (a folder name, a cached result's
environment, an ncu CSV cell, an attachment's name, a bad field's value, a `.env` line) is in no file of
the site (pages, chunks, downloads, CSVs, the status file) and not in the build's messages."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import DATA, minimal_trace, write_trace
from reporter.cli import main
from reporter.collect.redact import Redactor

KEY = "sk-proj-Zq8Wd3Lk5Rt1Vb7Nm2Xc9Hs4Jf6Gp0Ty3Ua8Ie"
PASSWORD = "correct-horse-battery-42"


def build(data: Path, site: Path) -> str:
    res = CliRunner().invoke(main, ["build", str(data), str(site), "--no-validate"])
    assert res.exit_code == 0, res.output
    return res.output


def leaks(site: Path, output: str, *secrets: str) -> list[str]:
    found = [f"{p.relative_to(site)}" for p in site.rglob("*") if p.is_file()
             for s in secrets if s.encode() in p.read_bytes()]
    return found + [f"build output: {s[:10]}" for s in secrets if s in output]


@pytest.mark.parametrize(("line", "secret"), [
    (f"DB_PASSWORD={PASSWORD}", PASSWORD), (f"export GITHUB_TOKEN={PASSWORD}", PASSWORD),
    (f'password: "{PASSWORD}"', PASSWORD), (f'  "api_key": "{PASSWORD}",', PASSWORD),
    (f"AWS_SECRET_ACCESS_KEY='{PASSWORD}'", PASSWORD), (f"client_secret = {PASSWORD}", PASSWORD),
    ("PGPASSWORD=hunter2", "hunter2"), ("SECRET_KEY: abc", "abc"),
])
def test_assignments_whose_key_names_a_secret_are_redacted(line: str, secret: str) -> None:
    counts: Counter[str] = Counter()
    out = Redactor().text(f"before\n{line}\nafter", counts)
    assert secret not in out and counts == {"secret-assignment": 1} and out.count("\n") == 2, out


@pytest.mark.parametrize("line", [
    "max_tokens=4096", "token_count = 12", "max_new_tokens: 512", "pad_token = tokenizer.eos_token",
    'api_key = os.environ["OPENAI_API_KEY"]', "password = getpass()", "API_KEY=${API_KEY}", "DB_PASSWORD=",
    "api_key: <your key here>", "TOKEN=****", "secret: true", "the password is in the vault", "token = 12",
    "num_tokens = len(tokens)", "AWS_ACCESS_KEY_ID_FILE=/run/secrets/id",
])
def test_code_counts_and_references_are_not_secrets(line: str) -> None:
    counts: Counter[str] = Counter()
    assert Redactor().text(line, counts) == line and not counts


def test_a_value_under_a_secret_key_in_a_json_object_is_redacted() -> None:
    counts: Counter[str] = Counter()
    doc = Redactor().document({"env": {"DB_PASSWORD": PASSWORD, "max_tokens": "4096", "HF_TOKEN": "$HF"}}, counts)
    assert doc == {"env": {"DB_PASSWORD": "[redacted: secret-assignment]", "max_tokens": "4096", "HF_TOKEN": "$HF"}}


def test_the_content_cache_counts_every_call() -> None:
    redactor, counts = Redactor(), Counter[str]()
    for _ in range(3):
        assert KEY not in redactor.text(f"key {KEY}", counts)
    assert counts == {"openai-key": 3}


def test_secrets_in_names_environments_attachments_and_errors_reach_no_output(sample_data: Path, tmp_path: Path) -> None:
    data = sample_data
    # a run folder named with a key (and a .env line in its prompt)
    doc = minimal_trace(model="leaky")
    doc["prompt"] = f"Set up first:\nDB_PASSWORD={PASSWORD}\n"
    doc["attachments"] = [{"kind": "ncu_raw_csv", "role": "kernel", "path": "k.csv"},
                          {"kind": "ncu_raw_csv", "role": "reference", "path": f"missing-{KEY}.csv"}]
    folder = write_trace(data, f"run-{KEY}", doc).parent
    raw = (DATA / "seed-003-l2-p8" / "p8_new_raw.csv").read_text()
    (folder / "k.csv").write_text(raw.replace("grounded_top2_kernel(", f"kernel_{KEY}("))
    # a bad schema_version holding a key, shown as an unreadable file
    write_trace(data, "bad-version", {**minimal_trace(), "schema_version": f"{KEY} and more"})
    # a cached result whose environment names a key
    for res in sorted((data / "validation").glob("*/*.json")):
        d = json.loads(res.read_text())
        if "environment" in d:
            d["environment"]["gpu"] = f"NVIDIA H200 {KEY}"
            d["environment"]["host"] = f"DB_PASSWORD={PASSWORD}"
            res.write_text(json.dumps(d))
    site = tmp_path / "site"
    out = build(data, site)
    assert leaks(site, out, KEY, KEY[:24], PASSWORD) == []
    assert "openai-key" in out  # the folder name's key is counted with the rest
    status = json.loads((site / ".reporter-status.json").read_text())
    shown = [r for r in status["runs"] if r.startswith("run-[redacted: openai-key]~")]
    assert len(shown) == 1, sorted(status["runs"])
    assert any(p.name.startswith("run-redacted-openai-key") for p in (site / "runs").glob("*.html"))
    assert "[redacted: openai-key]" in (site / "runs.csv").read_text()
    assert "[redacted: secret-assignment]" in "".join(p.read_text() for p in (site / "runs").glob("run-redacted*"))
    shutil.rmtree(site)
