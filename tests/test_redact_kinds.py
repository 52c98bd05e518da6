"""Issue 32, items 2 and 3: secrets of every common kind (the 15 kinds and two gaps an attacker found
published), each in its own words and in the places an agent writes them, and every pattern run on
untrusted text by RE2 (linear time), the user's allow-list included."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import re2

from conftest import small_copy, validation_entry
from reporter.collect.redact import Redactor, load_allow_list

HEX40 = "3f9a1c0b7e2d4f6a8b1c3e5d7f9a0b2c4d6e8f01"
# (what the attacker planted, the secret that must be gone): one per kind the issue names.
MISSED = {
    "legacy GitHub token in a URL": (f"git clone https://{HEX40}@github.com/org/repo.git", HEX40),
    "legacy GitHub token in a header": (f"curl -H 'Authorization: token {HEX40}' https://api.github.com", HEX40),
    "DigitalOcean": (f"doctl auth init -t dop_v1_{HEX40}{HEX40[:24]}.", HEX40),
    "npm": ("//registry.npmjs.org/:_authToken=npm_aB3cD5eF7gH9iJ1kL3mN5oP7qR9sT1uV3wX1", "aB3cD5eF7gH9iJ1kL3mN5oP7qR9sT1uV3wX1"),
    "Databricks": ("host=x token=dapi0123456789abcdef0123456789abcdef-2", "0123456789abcdef0123456789abcdef"),
    "Sentry DSN": ("sentry_sdk.init('https://9f8e7d6c5b4a39281706f5e4d3c2b1a0@o4504.ingest.sentry.io/42')",
                   "9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
    "MYSQL_PWD": ("env MYSQL_PWD=Tr0ub4dor&3 mysql -u root", "Tr0ub4dor"),
    "SIGNING_KEY": ("SIGNING_KEY=q8Zr2Lp0Wx", "q8Zr2Lp0Wx"),
    "--password=": ("pg_dump --password=Xy7hunterQ db > out.sql", "Xy7hunterQ"),
    "--password VALUE": ("mysqladmin --password correcthorsebattery status", "correcthorsebattery"),
    "HTTP Basic header": ("Authorization: Basic YWRtaW46czNjcjN0UGFzcw==", "YWRtaW46czNjcjN0UGFzcw"),
    'api_key="…" inside a line': ('client = Client(api_key="q7Wm2Zr9Lp0x", timeout=3)', "q7Wm2Zr9Lp0x"),
    "compact JSON": ('{"user":"bob","password":"Zq9Rm3Lw8x","retries":3}', "Zq9Rm3Lw8x"),
    "PGP private key body": ("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGF4bWkBCADQ0a7Zr9Lp0x\n=AbCd\n"
                             "-----END PGP PRIVATE KEY BLOCK-----", "lQOYBGF4bWkBCADQ0a7Zr9Lp0x"),
    "PuTTY private key body": ("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: k\nPublic-Lines: 2\n"
                               "AAAAC3NzaC1lZDI1NTE5AAAAIOq\nPrivate-Lines: 1\nAAAAIFx7Zr9Lp0xQmW3v8\n"
                               "Private-MAC: 5f3a9c0b7e2d4f6a", "AAAAIFx7Zr9Lp0xQmW3v8"),
    "JWT signature": ("Bearer-less jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.Zr9Lp0xQmW3v8Tn2Ks5Jd",
                      "Zr9Lp0xQmW3v8Tn2Ks5Jd"),
    "assignment mid-line": ("cd /app && PGPASSWORD=s3cretPw psql -h db", "s3cretPw"),
    "assignment in a comment": ("# DB_PASSWORD=hunter2", "hunter2"),
    "key glued to a word": ("run_sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"),
    "Basic credential in a path": ("could not read DATA/run-Authorization: Basic dTpjZ1Z4U3d6WTk5M2c/trace.json",
                                   "dTpjZ1Z4U3d6WTk5M2c"),  # found by benchmarks/fuzz_round3.py
    "key glued on both sides": ("xghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8Zz", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
}


@pytest.mark.parametrize("name", sorted(MISSED))
def test_each_kind_the_attacker_published_is_redacted(name: str) -> None:
    text, secret = MISSED[name]
    counts: Counter[str] = Counter()
    out = Redactor().text(text, counts)
    assert secret not in out and sum(counts.values()) >= 1, out
    assert out.count("\n") == text.count("\n")  # line numbers still match the source


def test_a_reference_starting_the_value_is_kept_but_a_dollar_inside_it_is_a_secret() -> None:
    """Only a value that starts as a reference (`$VAR`) is one: `hunter2$Xq9zz` is a password."""
    counts: Counter[str] = Counter()
    out = Redactor().text("DB_PASSWORD=hunter2$Xq9zz\nAPI_TOKEN=$FROM_ENV", counts)
    assert out == "DB_PASSWORD=[redacted: secret-assignment]\nAPI_TOKEN=$FROM_ENV" and counts == {"secret-assignment": 1}


@pytest.mark.parametrize(("key", "kind"), [
    ("ghp_" + "a1B2c3D4e5" * 5, "github-token"),  # longer than the usual 36 characters
    (f"dop_v1_{HEX40}{HEX40[:24]}Zz9", "digitalocean-pat"),  # a fixed-length rule, glued to more letters
    ("AKIAZ7Q2M4K8W1R5T9Y3QQ", "aws-access-key"),
])
def test_the_whole_token_is_redacted_never_only_its_prefix(key: str, kind: str) -> None:
    counts: Counter[str] = Counter()
    assert Redactor().text(f"token {key}.", counts) == f"token [redacted: {kind}]."


def test_a_secret_used_as_a_json_key_is_redacted_and_counted() -> None:
    key = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
    counts: Counter[str] = Counter()
    doc = Redactor().document({"env": {key: 1, "plain": key[:6]}}, counts)
    assert json.dumps(doc) == '{"env": {"[redacted: openai-key]": 1, "plain": "sk-pro"}}' and counts == {"openai-key": 1}


@pytest.mark.parametrize("line", [
    "per token: 16*4=64 FMAs", "Amortized per token: 8KB / 4 = 2KB per token", "max_tokens=4096",
    "tokens = tokenizer(text)", "--max-tokens 512", "authorization: completed", "the basic idea is simple",
    "see https://pytorch.org/docs/stable/generated/torch.compile.html", "PWD=/home/user", "bypass=true",
    "if password == expected:", "git checkout 3f9a1c0b7e2d4f6a8b1c3e5d7f9a0b2c4d6e8f01",
])
def test_prose_code_and_commits_are_not_secrets(line: str) -> None:
    counts: Counter[str] = Counter()
    assert Redactor().text(line, counts) == line and not counts


def test_a_cached_results_log_is_redacted_where_it_is_read(tmp_path: Path) -> None:
    from reporter.collect import collect
    from reporter.collect.validation import load_validation
    data = small_copy(tmp_path / "data")
    run = "seed-000-l2-p10"
    entry = validation_entry(data, run)
    doc = json.loads(entry.read_text(encoding="utf-8"))
    doc["log"] = "nvcc: GITHUB_TOKEN=ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8 failed"
    entry.write_text(json.dumps(doc), encoding="utf-8")
    redactor = Redactor()
    (record,) = [r for r in collect(data, redact=True).runs if r.run_id == run]
    cached = load_validation(data, record, [], redactor)
    assert cached is not None and "ghp_a1B2" not in cached.result.log and "[redacted: github-token]" in cached.result.log
    assert cached.redactions == {"github-token": 1}


# Item 3: linear time. No test times anything: each checks that the engine is one that cannot backtrack.

def test_every_detector_is_an_re2_pattern() -> None:
    from reporter.collect import assign, secretrules
    patterns = [r.pattern for r in secretrules.rules()] + [secretrules.keyword_finder()]
    patterns += [v for v in vars(assign).values() if type(v).__name__ == "_Regexp"]
    from reporter.collect import transcript  # the transcript check reads every tool call's arguments
    patterns.append(transcript.HARNESS_NAMES)
    assert len(patterns) > 150 and all(isinstance(p, re2._Regexp) for p in patterns)
    kinds = {r.kind for r in secretrules.rules()}
    assert {"digitalocean-pat", "databricks-api-token", "npm-access-token", "sentry-user-token"} <= kinds  # gitleaks' data
    assert {"basic-auth-credentials", "npm-tokens", "cloudant-credentials"} <= kinds  # detect-secrets' plugins


def test_the_allow_list_runs_with_re2_and_refuses_a_pattern_that_needs_backtracking(tmp_path: Path) -> None:
    (tmp_path / "redact-allow.txt").write_text("re:(.*a){12}x\nre:(?=sk-)sk-test.*\nre:(a)\\1\nre:ghp_[0-9]+\n", encoding="utf-8")
    allow, errors = load_allow_list(tmp_path)
    assert [e.field for e in errors] == ["line 2", "line 3"]
    assert all("backtracking" in e.message and "RE2" in e.message for e in errors)
    assert len(allow.patterns) == 2 and all(isinstance(p, re2._Regexp) for p in allow.patterns)
    assert not allow.allows("a" * 5000) and allow.allows("ghp_123")
