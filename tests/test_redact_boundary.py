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


# Rules pinned on hand-made text (issue 22, item 5): each kind's name, line numbers, the allow-list's whitespace ----

@pytest.mark.parametrize(("secret", "kind"), [
    ("sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7", "anthropic-key"),
    ("sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", "openai-key"),
    ("ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "github-token"),
    ("AKIAZ7Q2M4K8W1R5T9Y3", "aws-access-key"),
    ("hf_aB3cD5eF7gH9iJ1kL3mN5oP7qR9sT1uV3wX", "huggingface-token"),
    ("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "slack-token"),
])
def test_each_key_shape_is_named_by_its_own_kind(secret: str, kind: str) -> None:
    counts: Counter[str] = Counter()
    assert Redactor().text(f"key = '{secret}'", counts) == f"key = '[redacted: {kind}]'"
    assert counts == {kind: 1}


def test_a_redacted_block_keeps_its_line_breaks_so_later_line_numbers_still_match() -> None:
    block = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAA\n-----END OPENSSH PRIVATE KEY-----"
    counts: Counter[str] = Counter()
    out = Redactor().text(f"line 1\n{block}\nline 6", counts)
    assert out == "line 1\n[redacted: private-key]\n\n\n\nline 6" and counts == {"private-key": 1}


@pytest.mark.parametrize("line", ["GPG_PASSPHRASE=tr0ub4dor", "db_passwd: tr0ub4dor", "GOOGLE_CREDENTIALS=tr0ub4dor",
                                  "MY_PRIVATE_KEY=tr0ub4dor", "STRIPE_APIKEY=tr0ub4dor", "aws_access_key = 'tr0ub4dor'"])
def test_every_secret_word_of_a_key_name_is_redacted(line: str) -> None:
    counts: Counter[str] = Counter()
    assert "tr0ub4dor" not in Redactor().text(line, counts) and counts == {"secret-assignment": 1}


def test_an_allow_list_entry_is_read_without_its_surrounding_spaces(tmp_path: Path) -> None:
    from reporter.collect.redact import load_allow_list
    (tmp_path / "redact-allow.txt").write_text(f"  {KEY}  \n\t# an indented comment\n  re:ghp_[A-Za-z0-9]+ \n", encoding="utf-8")
    allow, errors = load_allow_list(tmp_path)
    assert errors == [] and allow.literals == frozenset({KEY})
    assert allow.allows(KEY) and allow.allows("ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8")
    assert not allow.allows(KEY + "x") and not allow.allows("x" + KEY)  # a whole match, never a part
