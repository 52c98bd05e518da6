"""Issue 43, item 3, measured: fresh secrets of every kind a reviewer got published (and the 33 kinds of round 3)
planted in the texts a trace holds, each passed through the redactor as the build passes a field; a plant is
published when its secret, or any 12 characters of it, is still in the text. Target: at most 1% of the plants.

    nice -n 19 python benchmarks/planted_secrets_issue43.py [--seed 43] [--rounds 3]

Output committed beside this file: planted_secrets_issue43.txt.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import string
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
Plant = Callable[[random.Random], tuple[str, str]]  # rng -> (text as written, the secret that must not be published)


def rand(rng: random.Random, alphabet: str, n: int) -> str:
    digits, letters = [c for c in alphabet if c.isdigit()], [c for c in alphabet if c.isalpha()]
    return "".join(rng.choice(alphabet) for _ in range(n - 2)) + rng.choice(digits) + rng.choice(letters or digits)


def password(rng: random.Random) -> str:
    """A value as people write them: words and digits (`hunter2-very-secret`), random letters and digits, or
    random letters alone (as often as 12 random letters and digits hold no digit)."""
    words = ["hunter", "correct", "horse", "very", "secret", "staple", "blue", "falcon", "prod", "admin"]
    pick = rng.random()
    if pick < 0.45:
        return f"{rng.choice(words)}{rng.randrange(10, 99)}-{rng.choice(words)}-{rng.choice(words)}"
    if pick < 0.9:
        return rand(rng, ALNUM, rng.randrange(12, 24))
    return "".join(rng.choice(string.ascii_letters) for _ in range(rng.randrange(12, 24)))


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _split(key: str, rng: random.Random, how: str) -> str:
    cut = rng.randrange(6, len(key) - 6)
    return {"backslash": f"export TOKEN={key[:cut]}\\\n{key[cut:]}",
            "concat": f'key = ("{key[:cut]}"\n       "{key[cut:]}")',
            "plus": f"key = '{key[:cut]}' + '{key[cut:]}'"}[how]


def _with(make: Callable[[random.Random], str], form: Callable[[str, random.Random], str]) -> Plant:
    def plant(rng: random.Random) -> tuple[str, str]:
        secret = make(rng)
        return form(secret, rng), secret
    return plant


OPENAI = lambda r: f"sk-proj-{rand(r, ALNUM + '_-', 48)}"  # noqa: E731
GHP = lambda r: f"ghp_{rand(r, ALNUM, 36)}"  # noqa: E731
SAS = ("https://acct.blob.core.windows.net/c/f.bin?sv=2022-11-02&ss=b&srt=sco&sp=rwdlacupiytfx&se=2025-01-01T00:00:00Z"
       "&st=2024-01-01T00:00:00Z&spr=https&sig=")
ISSUE_43: dict[str, Plant] = {
    "environ-subscript": _with(password, lambda s, r: f"os.environ['{r.choice(['X_API_KEY', 'DB_PASSWORD', 'HF_TOKEN'])}'] = '{s}'"),
    "environ-subscript-double": _with(password, lambda s, r: f'os.environ["OPENAI_API_KEY"] = "{s}"'),
    "environ-setdefault": _with(password, lambda s, r: f"os.environ.setdefault('X_TOKEN', '{s}')"),
    "putenv": _with(password, lambda s, r: f'os.putenv("SERVICE_SECRET", "{s}")'),
    "key-colon-after-text": _with(password, lambda s, r: f"INFO config: {r.choice(['db_password', 'api_token', 'client_secret'])}: {s}"),
    "key-equals-after-text": _with(password, lambda s, r: f"2024-05-01 12:00:01 WARN settings {r.choice(['db_password', 'API_KEY'])}={s} ok"),
    "groq": _with(lambda r: f"gsk_{rand(r, ALNUM, 52)}", lambda s, r: f"client = Groq(api_key=k)  # {s}"),
    "replicate": _with(lambda r: f"r8_{rand(r, ALNUM, 37)}", lambda s, r: f"replicate token {s} set"),
    "mailgun-bare": _with(lambda r: f"key-{rand(r, HEX, 32)}", lambda s, r: f"auth=('api', '{s}')"),
    "azure-sas": _with(lambda r: rand(r, ALNUM, 40) + r.choice(["%2F", "%2B"]) + rand(r, ALNUM, 3) + "%3D",
                       lambda s, r: f"GET {SAS}{s} 200"),
    "digitalocean": _with(lambda r: f"{r.choice(['dop', 'doo', 'dor'])}_v1_{rand(r, HEX, 64)}", lambda s, r: f"doctl auth init -t {s}"),
    "digitalocean-upper": _with(lambda r: f"{r.choice(['dop', 'doo', 'dor'])}_v1_{rand(r, HEX, 64).upper()}",
                                lambda s, r: f"token {s}"),
    "docker-auth": _with(lambda r: b64(f"robot:{password(r)}"),
                         lambda s, r: f'{{"auths": {{"https://index.docker.io/v1/": {{"auth": "{s}"}}}}}}'),
    "base64-openai": _with(lambda r: b64(OPENAI(r)), lambda s, r: f"aws {s} end"),
    "base64-github": _with(lambda r: b64(f"GITHUB_TOKEN={GHP(r)}"), lambda s, r: f'{{"data": "{s}"}}'),
    "split-backslash": _with(GHP, lambda s, r: _split(s, r, "backslash")),
    "split-concat": _with(OPENAI, lambda s, r: _split(s, r, "concat")),
    "split-plus": _with(GHP, lambda s, r: _split(s, r, "plus")),
}
ROUND_3: dict[str, Plant] = {
    "openai": _with(OPENAI, lambda s, r: s),
    "anthropic": _with(lambda r: f"sk-ant-api03-{rand(r, ALNUM, 40)}", lambda s, r: s),
    "github-pat": _with(GHP, lambda s, r: s),
    "github-fine-grained": _with(lambda r: f"github_pat_{rand(r, ALNUM + '_', 82)}", lambda s, r: s),
    "github-legacy-url": _with(lambda r: rand(r, HEX, 40), lambda s, r: f"https://{s}@github.com/o/r.git"),
    "github-legacy-header": _with(lambda r: rand(r, HEX, 40), lambda s, r: f"Authorization: token {s}"),
    "aws": _with(lambda r: f"AKIA{rand(r, string.ascii_uppercase + '234567', 16)}", lambda s, r: s),
    "huggingface": _with(lambda r: f"hf_{rand(r, ALNUM, 34)}", lambda s, r: s),
    "slack": _with(lambda r: f"xoxb-{rand(r, string.digits, 12)}-{rand(r, string.digits, 13)}-{rand(r, ALNUM, 24)}", lambda s, r: s),
    "google": _with(lambda r: f"AIza{rand(r, ALNUM + '_-', 35)}", lambda s, r: s),
    "npm": _with(lambda r: f"npm_{rand(r, ALNUM, 36)}", lambda s, r: s),
    "stripe": _with(lambda r: f"sk_live_{rand(r, ALNUM, 24)}", lambda s, r: s),
    "databricks": _with(lambda r: f"dapi{rand(r, HEX, 32)}", lambda s, r: s),
    "gitlab": _with(lambda r: f"glpat-{rand(r, ALNUM, 20)}", lambda s, r: s),
    "sendgrid": _with(lambda r: f"SG.{rand(r, ALNUM, 22)}.{rand(r, ALNUM, 43)}", lambda s, r: s),
    "shopify": _with(lambda r: f"shpat_{rand(r, HEX, 32)}", lambda s, r: s),
    "sentry-user": _with(lambda r: f"sntryu_{rand(r, HEX, 64)}", lambda s, r: s),
    "sentry-dsn": _with(lambda r: rand(r, HEX, 32), lambda s, r: f"https://{s}@o4504.ingest.sentry.io/42"),
    "vault": _with(lambda r: f"hvs.{rand(r, ALNUM, 95)}", lambda s, r: s),
    "jwt": _with(lambda r: f"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOi{rand(r, ALNUM, 20)}.{rand(r, ALNUM + '_-', 43)}", lambda s, r: s),
    "mysql-pwd": _with(password, lambda s, r: f"env MYSQL_PWD={s} mysql"),
    "signing-key": _with(password, lambda s, r: f"SIGNING_KEY={s}"),
    "password-flag": _with(password, lambda s, r: f"pg_dump --password={s} db"),
    "basic-header": _with(lambda r: b64(f"u:{rand(r, ALNUM, 12)}").rstrip("="), lambda s, r: f"Authorization: Basic {s}"),
    "api-key-mid-line": _with(password, lambda s, r: f'c = Client(api_key="{s}", timeout=3)'),
    "compact-json": _with(password, lambda s, r: f'{{"user":"bob","password":"{s}"}}'),
    "assignment-mid-line": _with(password, lambda s, r: f"cd /app && PGPASSWORD={s} psql"),
    "assignment-in-comment": _with(password, lambda s, r: f"# DB_PASSWORD={s}"),
    "key-glued-to-word": _with(lambda r: f"sk-proj-{rand(r, ALNUM, 40)}", lambda s, r: f"run_{s}"),
    "rsa-private-key": _with(lambda r: rand(r, ALNUM, 64),
                             lambda s, r: f"-----BEGIN RSA PRIVATE KEY-----\n{s}\n-----END RSA PRIVATE KEY-----"),
    "pgp-private-key": _with(lambda r: rand(r, ALNUM, 64),
                             lambda s, r: f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{s}\n-----END PGP PRIVATE KEY BLOCK-----"),
    "putty-private-key": _with(lambda r: rand(r, ALNUM, 44),
                               lambda s, r: f"PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-Lines: 1\n{s}\nPrivate-MAC: 5f3a9c0b"),
}
# Where a plant stands in a field: its own line of reasoning, a log line, a code comment, a markdown fence, a
# JSON document as a tool returns it (the text escaped), a CSV cell.
PLACES: dict[str, Callable[[str], str]] = {
    "reasoning": lambda t: f"Let me check the setup first.\n{t}\nThen the kernel.",
    "log": lambda t: f"[12:00:01] step 3/7: {t} (ok)",
    "comment": lambda t: "// " + t.replace("\n", "\n// ") + "\n__global__ void k(float* x) { x[0] = 1.f; }",
    "markdown": lambda t: f"Output:\n```\n{t}\n```\n",
    "json": lambda t: json.dumps({"ok": True, "stdout": t, "code": 0}),
    "csv": lambda t: 'run,note\nr1,"' + t.replace('"', '""') + '"\n',
}


def published(out: str, secret: str) -> bool:
    """The secret, or any 12 characters of it, is still there (as written, or as JSON escaped it)."""
    shown = {secret, json.dumps(secret)[1:-1]}
    return any(s[i:i + 12] in out for s in shown for i in range(max(1, len(s) - 11)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=43)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    from reporter.collect.redact import Redactor
    rng, redactor = random.Random(args.seed), Redactor()
    kinds = {**ISSUE_43, **ROUND_3}
    planted, missed, cpu = Counter[str](), Counter[str](), 0.0
    examples: dict[str, str] = {}
    for _ in range(args.rounds):
        for kind, plant in kinds.items():
            for place, put in PLACES.items():
                text, secret = plant(rng)
                field = put(text)
                t0 = time.process_time()
                out = redactor.text(field, Counter())
                cpu += time.process_time() - t0
                planted[kind] += 1
                if published(out, secret):
                    missed[kind] += 1
                    examples.setdefault(f"{kind} in {place}", out[:160])
    total, lost = sum(planted.values()), sum(missed.values())
    print(f"secrets: {total} plants of {len(kinds)} kinds ({len(ISSUE_43)} the issue's, {len(ROUND_3)} round 3's) "
          f"in {len(PLACES)} places, {args.rounds} rounds, seed {args.seed}")
    print(f"  published {lost:>29} ({100 * lost / total:.2f}%)")
    print(f"  of the issue's kinds {sum(missed[k] for k in ISSUE_43):>18} of {sum(planted[k] for k in ISSUE_43)}")
    for kind, n in sorted(missed.items()):
        print(f"  {kind:<30} {n} of {planted[kind]}")
    for where, out in sorted(examples.items()):
        print(f"    e.g. {where}: {out!r}")
    print(f"redaction CPU: {cpu:.2f} s for {total} fields")
    throughput(rng)


def throughput(rng: random.Random) -> None:
    """CPU seconds of one redaction of large texts (the best of three), as `Redactor.text` runs on a long field."""
    from reporter.collect.redact import AllowList, _redact
    words = ["the", "kernel", "uses", "shared", "memory", "tiles", "of", "128", "by", "64", "and", "each", "warp", "computes", "a", "fragment", "with", "mma", "sync"]
    dense = ["the", "token", "per", "key", "value", "blockIdx.x", "0xffffffff", "key-value", "sig=", "auth", "a1b2c3d4e5f6a7b8c9d0"]
    texts = {
        "sample traces and kernels x4": "\n".join(p.read_text(errors="replace") for p in sorted((ROOT / "data").rglob("*.json"))) * 4,
        "20 MB of prose": "\n".join(" ".join(rng.choice(words) for _ in range(14)) for _ in range(250_000))[:20_000_000],
        "2 MB of key-like text": "".join(rng.choice(ALNUM) for _ in range(2_000_000)),
        "20,000 links on one line": " ".join(f"https://example.com/p/{i}" for i in range(20_000)),
        "5 MB dense with keywords": "\n".join(" ".join(rng.choice(dense) for _ in range(12)) for _ in range(50_000)),
    }
    print("throughput (CPU-s, best of 3):")
    for name, text in texts.items():
        best = float("inf")
        for _ in range(3):
            t0 = time.process_time()
            _redact(AllowList(), text)
            best = min(best, time.process_time() - t0)
        print(f"  {name:<30} {len(text) / 1e6:5.1f} MB {best:6.2f}")


if __name__ == "__main__":
    main()
