"""Secret redaction: no key in any written page or download; the validator still sees the original."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import DATA, minimal_trace, write_trace
from reporter.cli import main
from reporter.collect import collect
from reporter.collect.redact import Redactor, load_allow_list

PRIVATE_KEY_BODY = "MIIEowIBAAKCAQEA7fakeFAKEfake0123456789abcdefABCDEFxyzXYZ"
KEYS = {
    "openai-key": "sk-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4",
    "openai-proj": "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3iJk6lMn9oPq2rSt5uVw8xYz1",
    "anthropic-key": "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7Zx6Yw5Vu4Ts3Rq2-AA",
    "ghp": "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "gho": "gho_Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8",
    "github-pat": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV",
    "aws-access-key": "AKIAZ7Q2M4K8W1R5T9Y3",
    "huggingface-token": "hf_aB3cD5eF7gH9iJ1kL3mN5oP7qR9sT1uV3wX",
    "slack-bot": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "slack-user": "xoxp-210987654321-3210987654321-ZyXwVuTsRqPoNmLkJiHgFeDc",
    "bearer-token": "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA",
    "private-key": f"-----BEGIN RSA PRIVATE KEY-----\n{PRIVATE_KEY_BODY}\nAAAA\n-----END RSA PRIVATE KEY-----",
}


def secret_trace() -> dict[str, object]:
    """12 keys in 11 fields, every kind of text a trace holds."""
    k = KEYS
    doc = minimal_trace(source_note=f"collected with HF_TOKEN={k['huggingface-token']}")
    doc["prompt"] = f"Use the token {k['ghp']} to clone the repo."
    doc["reference_source"] = f"# {k['github-pat']}\nimport torch\nclass Model(torch.nn.Module):\n    pass\n"
    doc["final_kernel"] = {"source": f"API = '{k['gho']}'\nclass ModelNew:\n    pass\n", "turn": 0}
    doc["harness_metadata"] = {"env": {"AWS_ACCESS_KEY_ID": k["aws-access-key"]}}
    doc["turns"] = [
        {"index": 0, "reasoning": f"My key is {k['openai-key']}.\n{k['private-key']}\nThen 4*24*96.", "calls": [
            {"tool": "compile_kernel", "arguments": {"kernel_code": f"// {k['openai-proj']}\n__global__ void f() {{}}"},
             "result": {"ok": False, "text": f"error: leaked {k['anthropic-key']}"}},
            {"tool": "http", "arguments": {"headers": {"Authorization": f"Bearer {k['bearer-token']}"}}},
        ]},
        {"index": 1, "reasoning": f"slack {k['slack-bot']}", "final": True,
         "calls": [{"tool": "notify", "arguments": {}, "result": {"ok": True, "text": f"posted with {k['slack-user']}"}}]},
    ]
    return doc


def fragments() -> list[str]:
    """What must appear nowhere: each key, and the parts of the private key block."""
    return [v for name, v in KEYS.items() if name != "private-key"] + [PRIVATE_KEY_BODY]


def build(data: Path, site: Path, *extra: str) -> str:
    result = CliRunner().invoke(main, ["build", str(data), str(site), "--no-validate", *extra])
    assert result.exit_code == 0, result.output
    return result.output


def test_twelve_keys_in_eleven_fields_are_gone_from_every_page_and_download(tmp_path: Path) -> None:
    write_trace(tmp_path / "data", "leaky", secret_trace())
    out = build(tmp_path / "data", tmp_path / "site")
    files = [p for p in (tmp_path / "site").rglob("*") if p.is_file()]
    assert any(p.suffix == ".py" for p in files)
    for p in files:
        text = p.read_bytes().decode("utf-8", errors="replace")
        leaked = [f[:12] for f in fragments() if f in text]
        assert not leaked, f"{p.name} shows {leaked}"
    run_page = next(p for p in files if p.name.endswith(".html") and "runs" in p.parts)
    # the turns' text is in the page's lazily loaded chunk beside it
    page = run_page.read_text(encoding="utf-8") + run_page.with_suffix(".turns.js").read_text(encoding="utf-8")
    assert "[redacted: openai-key]" in page and "[redacted: private-key]" in page and "4*24*96" in page
    assert "redacted 12 secrets in 1 run" in out


def test_the_validator_keeps_the_original_sources(tmp_path: Path) -> None:
    from reporter.core import cache
    from reporter.core.records import ValidationSettings
    from reporter.validate.recorder import make_items
    from reporter.validate.runner import _key
    write_trace(tmp_path, "leaky", secret_trace())
    (run,) = collect(tmp_path).runs
    assert run.trace.final_kernel is not None and KEYS["gho"] not in run.trace.final_kernel.source
    original = secret_trace()
    kernel, ref = original["final_kernel"]["source"], original["reference_source"]  # type: ignore[index]
    assert _key(run) == cache.content_key(kernel, ref)  # type: ignore[arg-type]
    (item,) = make_items([(run, _key(run) or "")], ValidationSettings(), "cpu", {}, tmp_path / "builds")
    assert item.job.kernel == kernel and item.job.reference == ref
    assert sum(run.redactions.values()) == 12 and run.redactions["github-token"] == 3
    # Redaction keeps line numbers: a finding's line on the page is the line in the real source.
    assert run.trace.turns[0].reasoning.count("\n") == original["turns"][0]["reasoning"].count("\n")  # type: ignore[index]


@pytest.mark.slow  # minutes of builds on two cores: CI runs it (-m slow), the README's command leaves it out
def test_cached_validation_text_is_redacted_too(sample_data: Path, tmp_path: Path) -> None:
    stored = sorted((sample_data / "validation").glob("*/*.json"))
    for res in stored:
        doc = json.loads(res.read_text(encoding="utf-8"))
        doc["log"] = f"Traceback: token {KEYS['ghp']}"
        doc["reason"] = f"failed with {KEYS['openai-key']}"
        res.write_text(json.dumps(doc), encoding="utf-8")
    out = build(sample_data, tmp_path / "site")
    pages = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "site").rglob("*.html"))
    assert KEYS["ghp"] not in pages and KEYS["openai-key"] not in pages
    assert "[redacted: github-token]" in pages
    assert f"redacted {2 * len(stored)} secrets in {len(stored)} runs" in out  # one result per run


def test_no_redact_publishes_as_written_and_says_so(tmp_path: Path) -> None:
    write_trace(tmp_path / "data", "leaky", secret_trace())
    out = build(tmp_path / "data", tmp_path / "site", "--no-redact")
    assert "NOT redacted" in out
    downloads = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "site").rglob("*.py"))
    assert KEYS["gho"] in downloads


def test_the_allow_list_keeps_literals_and_patterns(tmp_path: Path) -> None:
    write_trace(tmp_path, "leaky", secret_trace())
    (tmp_path / "redact-allow.txt").write_text(
        f"# known test fixtures\n{KEYS['aws-access-key']}\nre:xox[bp]-[0-9-]+-[A-Za-z]+\nre:([unclosed\n", encoding="utf-8")
    col = collect(tmp_path)
    (run,) = col.runs
    assert run.trace.harness_metadata["env"]["AWS_ACCESS_KEY_ID"] == KEYS["aws-access-key"]
    assert KEYS["slack-bot"] in run.trace.turns[1].reasoning
    assert sum(run.redactions.values()) == 9 and "aws-access-key" not in run.redactions
    (err,) = col.config_errors
    assert err.path.endswith("redact-allow.txt") and err.field == "line 4"


def test_sample_data_has_nothing_to_redact() -> None:
    col = collect(DATA)
    assert [r.redactions for r in col.runs] == [{}] * len(col.runs)
    examples = collect(DATA.parent / "examples" / "kernelbench")
    assert examples.runs and all(not r.redactions for r in examples.runs)


def test_each_key_shape_alone_is_found() -> None:
    allow, _ = load_allow_list(Path("/nonexistent"))
    redactor = Redactor(allow)
    for name, key in KEYS.items():
        counts: Counter[str] = Counter()
        text = f"x = {key!r}" if name != "bearer-token" else f"Authorization: Bearer {key}"
        out = redactor.text(text, counts)
        assert sum(counts.values()) == 1 and "[redacted: " in out, (name, out)
        assert not any(f in out for f in fragments()), name


def test_the_maintained_rule_sets_find_what_the_key_shapes_do_not() -> None:
    """Stripe's format comes from gitleaks' rule list, basic auth in a URL from a detect-secrets plugin."""
    redactor = Redactor()
    stripe = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
    counts: Counter[str] = Counter()
    out = redactor.text(f"stripe {stripe}\ntoken = '{jwt}'\nhttps://admin:hunter2secret@db.example.com/x", counts)
    assert stripe not in out and jwt not in out and "hunter2secret" not in out
    assert set(counts) == {"stripe-access-token", "json-web-token", "basic-auth-credentials"}
