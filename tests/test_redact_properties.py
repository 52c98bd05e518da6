"""Issue 32, item 5: redaction as properties (Hypothesis) over secret kinds x placements x neighbouring
characters, in free text, in a run folder's name (its id and page file name) and in a CSV cell.

Each kind draws a fresh random secret in its own format (a vendor prefix and a random body, or a value
behind a key that names a secret); the property is that no draw survives anywhere it can be put.
"""

from __future__ import annotations

import csv
import io
import random
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reporter.collect.read import run_ids
from reporter.collect.redact import Redactor
from reporter.render.urls import Urls

PROPS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"


def _random_body(seed: int, alphabet: str, n: int) -> str:
    rng = random.Random(seed)
    digits, letters = [c for c in alphabet if c.isdigit()], [c for c in alphabet if c.isalpha()]
    tail = rng.choice(digits) + (rng.choice(letters) if letters else rng.choice(digits))
    return "".join(rng.choice(alphabet) for _ in range(n - 2)) + tail


def body(alphabet: str, n: int) -> st.SearchStrategy[str]:
    """n random characters of `alphabet`, a digit and a letter among them: a key is random (its entropy is a
    key's, never `0000...`, which the rules rightly take for a placeholder), so the draw is a seed."""
    return st.integers(0, 2**32).map(lambda seed: _random_body(seed, alphabet, n))


def prefixed(prefix: str, alphabet: str, n: int, suffix: str = "") -> st.SearchStrategy[tuple[str, str]]:
    return body(alphabet, n).map(lambda b: (f"{prefix}{b}{suffix}", b))


def block(begin: str, end: str) -> st.SearchStrategy[tuple[str, str]]:
    return body(B64, 64).map(lambda b: (f"{begin}\n{b}\n{b[::-1]}\n{end}", b))


# kind -> (text that holds the secret, the secret part that must not be published)
TOKENS: dict[str, st.SearchStrategy[tuple[str, str]]] = {
    "openai": prefixed("sk-proj-", ALNUM + "_-", 48),
    "anthropic": prefixed("sk-ant-api03-", ALNUM, 40),
    "github-pat": prefixed("ghp_", ALNUM, 36),
    "github-oauth": prefixed("gho_", ALNUM, 36),
    "github-fine-grained": prefixed("github_pat_", ALNUM + "_", 82),
    "aws": prefixed("AKIA", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
    "huggingface": prefixed("hf_", ALNUM, 34),
    "slack": body("0123456789", 12).map(lambda d: (f"xoxb-{d}-{d[::-1]}-AbCdEfGhIjKlMnOp", d + "-" + d[::-1])),
    "google": prefixed("AIza", ALNUM + "_-", 35),
    "npm": prefixed("npm_", ALNUM, 36),
    "stripe": prefixed("sk_live_", ALNUM, 24),
    "digitalocean": prefixed("dop_v1_", HEX, 64),
    "databricks": prefixed("dapi", HEX, 32),
    "gitlab": prefixed("glpat-", ALNUM, 20),
    "sendgrid": body(ALNUM, 22).map(lambda a: (f"SG.{a}.{a[::-1]}{a[:21]}", a)),
    "twilio": prefixed("SK", HEX, 32),
    "shopify": prefixed("shpat_", HEX, 32),
    "sentry-user": prefixed("sntryu_", HEX, 64),
    "vault": prefixed("hvs.", ALNUM, 95),
    "pypi": prefixed("pypi-AgEIcHlwaS5vcmc", ALNUM, 60),
    "jwt": body(ALNUM, 30).map(lambda s: (f"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOi{s}.{s[::-1]}", s[::-1])),
    "url-token": prefixed("https://", HEX, 40, "@github.com/org/repo.git"),
    "sentry-dsn": prefixed("https://", HEX, 32, "@o4504.ingest.sentry.io/42"),
    "basic-auth-url": body(ALNUM, 16).map(lambda p: (f"postgres://admin:{p}@db.internal:5432/x", p)),
    "basic-header": st.sampled_from(["YWRtaW46czNjcjN0UGFzcw==", "dXNlcjpwYXNzd29yZDEyMw==", "cm9vdDpUcjB1YjRkb3I="])
    .map(lambda b: (f"Authorization: Basic {b}", b.rstrip("="))),
    "bearer": prefixed("Authorization: Bearer ", ALNUM, 32),
    "rsa-key": block("-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----"),
    "pgp-key": block("-----BEGIN PGP PRIVATE KEY BLOCK-----", "-----END PGP PRIVATE KEY BLOCK-----"),
    "putty-key": block("PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-Lines: 2", "Private-MAC: 5f3a9c0b7e2d4f6a"),
}
# Values found by the name they are given: the name and the value are drawn apart.
ASSIGNMENTS: dict[str, st.SearchStrategy[tuple[str, str]]] = {
    "env": st.tuples(st.sampled_from(["DB_PASSWORD", "MYSQL_PWD", "SIGNING_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY",
                                      "SMTP_PASS", "SENTRY_DSN", "CLIENT_SECRET"]), body(ALNUM, 14))
    .map(lambda kv: (f"{kv[0]}={kv[1]}", kv[1])),
    "quoted": st.tuples(st.sampled_from(["api_key", "password", "client_secret", "access_token"]), body(ALNUM, 14))
    .map(lambda kv: (f'{kv[0]} = "{kv[1]}"', kv[1])),
    "json": st.tuples(st.sampled_from(["api_key", "password", "token", "privateKey"]), body(ALNUM, 14))
    .map(lambda kv: (f'{{"{kv[0]}":"{kv[1]}"}}', kv[1])),
    "flag": st.tuples(st.sampled_from(["--password", "--db-password", "--api-key", "--token"]), st.sampled_from(["=", " "]),
                      body(ALNUM, 14)).map(lambda f: (f"{f[0]}{f[1]}{f[2]}", f[2])),
    "header": prefixed("Authorization: token ", HEX, 40),
}
KINDS = st.sampled_from(sorted(TOKENS)).flatmap(lambda k: TOKENS[k]) | st.sampled_from(sorted(ASSIGNMENTS)).flatmap(lambda k: ASSIGNMENTS[k])
PLACEMENTS = st.sampled_from(["{}", "'{}'", '"{}"', "({})", "[{}]", "<{}>", "`{}`", "{}.", "{},", "{};", "x={}", "key: {}",
                              '{{"k": "{}"}}', "**{}**", "# {}", "echo {} | sh", "{}\\n", "\n{}\n"])
NEIGHBOURS = st.sampled_from(["", " ", "\n", "\t", "_", "-", ".", ",", ";", ":", "=", "/", "\\", "(", ")", "'", '"', "a", "Z",
                              "0", "é", "中", "\u200b", "&&", "$"])
PROSE = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


@PROPS
@given(KINDS, PLACEMENTS, NEIGHBOURS, NEIGHBOURS, PROSE, PROSE)
def test_no_secret_survives_in_any_placement_between_any_neighbours(kind: tuple[str, str], placement: str, before: str,
                                                                      after: str, head: str, tail: str) -> None:
    text, secret = kind
    written = f"{head} {before}{placement.format(text)}{after} {tail}"
    counts: Counter[str] = Counter()
    out = Redactor().text(written, counts)
    assert secret not in out and sum(counts.values()) >= 1, (written, out)
    assert out.count("\n") == written.count("\n")


@PROPS
@given(st.sampled_from(sorted(set(TOKENS) - {"url-token", "sentry-dsn", "basic-auth-url"})).flatmap(lambda k: TOKENS[k]),  # no `/` in a name
       NEIGHBOURS, NEIGHBOURS)
def test_a_secret_in_a_run_folders_name_is_in_neither_its_id_nor_its_page_name(kind: tuple[str, str], before: str, after: str) -> None:
    text, secret = kind
    folder = f"run{before}{text}{after}".replace("/", "_").replace("\n", "_")
    data = Path("/data")
    (run_id,) = run_ids(data, [data / folder / "trace.json"], Redactor()).values()
    page = Urls.build([run_id], [], [], []).run(run_id)
    assert secret not in run_id and secret not in page and secret.lower() not in page.lower(), (run_id, page)


@PROPS
@given(KINDS, NEIGHBOURS, PROSE)
def test_a_secret_in_a_csv_cell_is_redacted_in_the_written_table(kind: tuple[str, str], before: str, other: str) -> None:
    """The writer's last pass redacts each written file's text whole: a CSV quotes and doubles what it must."""
    text, secret = kind
    out = io.StringIO()
    csv.writer(out).writerows([["run_id", "model", "note"], ["r1", f"{before}{text}", other], ["r2", "m", "plain"]])
    table = out.getvalue()
    redacted = Redactor().text(table, Counter())
    assert secret not in redacted and secret not in redacted.replace('""', '"'), (table, redacted)
    assert len(list(csv.reader(io.StringIO(redacted)))) == 3  # still a table of three rows
