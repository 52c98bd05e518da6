"""Harness for the blind round: make DATA, build, measure the four figures of issue 43."""
import copy, gzip, json, os, random, shutil, string, subprocess, sys, time, zlib
from pathlib import Path

ROOT = Path("/tmp/blind43-after")
GOOD = json.load(open("/work/main/data/kernelbench-sweep/kernelbench-level1_demo-alpha/l1-p92-s0/trace.json"))
MARK = ROOT / "MARKER_RAN"
rng = random.Random()


def rnd(n, alphabet=string.ascii_letters + string.digits):
    return "".join(rng.choice(alphabet) for _ in range(n))


def secrets(tag=""):
    """Fresh secrets (random each call)."""
    return {
        "openai": "sk-proj-" + rnd(48),
        "github": "ghp_" + rnd(36),
        "aws": "AKIA" + rnd(16, string.ascii_uppercase + string.digits),
        "dbpw": "DB_PASSWORD=hunter2-very-secret-9",
        "rsa": "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(rnd(64, string.ascii_letters + string.digits + "+/") for _ in range(6)) + "\n-----END RSA PRIVATE KEY-----",
    }


def secret_core(s):
    """The part of a planted secret whose 12-char substrings count (the value, not the key name)."""
    if s.startswith("DB_PASSWORD="):
        return "hunter2-very-secret-9"
    if s.startswith("-----BEGIN"):
        return "".join(s.splitlines()[1:-1])
    return s


def good_trace(**run):
    t = copy.deepcopy(GOOD)
    t["run"].update(run)
    return t


def write(path, obj_or_text, mode="json"):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(obj_or_text, bytes):
        path.write_bytes(obj_or_text)
    elif isinstance(obj_or_text, str):
        path.write_text(obj_or_text, encoding="utf-8", errors="surrogatepass")
    else:
        path.write_text(json.dumps(obj_or_text, indent=1), encoding="utf-8")


def new_data(name):
    d = ROOT / "cases" / name / "DATA"
    if d.parent.exists():
        shutil.rmtree(d.parent)
    d.mkdir(parents=True)
    # the well-formed other run: a copy of a sample run
    write(d / "good" / "trace.json", good_trace())
    return d


def build(data, site, extra=(), env=None, label="build"):
    e = {**os.environ, "PYTHONPATH": "/work/main", **(env or {})}
    t0 = time.time()
    p = subprocess.run(["nice", "-n", "10", sys.executable, "-m", "reporter.cli", "build", str(data), str(site), "--no-validate", *extra],
                       capture_output=True, text=True, errors="replace", cwd=ROOT, env=e, timeout=1200)
    out = p.stdout + p.stderr
    return {"label": label, "rc": p.returncode, "out": out, "secs": round(time.time() - t0, 1)}


def site_texts(site):
    """(relative path, text) of every file under SITE, gzip members decompressed (pagefind)."""
    site = Path(site)
    for f in sorted(site.rglob("*")):
        if f.is_symlink() or not f.is_file():
            continue
        raw = f.read_bytes()
        if raw[:2] == b"\x1f\x8b":
            try:
                raw = gzip.decompress(raw)
            except Exception:
                pass
        yield str(f.relative_to(site)), raw.decode("utf-8", "replace") + "\n" + raw.decode("latin-1")


def leaks(site, outputs, planted):
    """Where any planted secret, or any 12-char substring of it, appears in SITE or the terminal output."""
    found = []
    corpus = list(site_texts(site)) if Path(site).exists() else []
    corpus += [(f"<terminal:{i}>", o) for i, o in enumerate(outputs)]
    for s in planted:
        core = secret_core(s)
        subs = {core[i:i + 12] for i in range(len(core) - 11)}
        for rel, text in corpus:
            hit = next((x for x in subs if x in text), None)
            if hit:
                found.append((s[:16] + "…", rel, hit))
    return found


def page_of_good(site):
    return (Path(site) / "runs" / "good.html").is_file()


def serve(site, port):
    return subprocess.Popen([sys.executable, "-m", "http.server", str(port), "-d", str(site), "--bind", "127.0.0.1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def xss(site, port=8765, limit=60, extra_paths=()):
    """Open every HTML page (and the search page with a query) over http in Chromium; True when __xss was set."""
    from playwright.sync_api import sync_playwright
    site = Path(site)
    if not site.exists():
        return None, []
    srv = serve(site, port)
    time.sleep(0.8)
    hits, opened = [], []
    try:
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
            pg = b.new_page()
            pg.on("dialog", lambda d: (hits.append(("dialog", d.message)), d.dismiss()))
            pages = sorted(str(f.relative_to(site)) for f in site.rglob("*.html"))[:limit] + list(extra_paths)
            for rel in pages:
                try:
                    pg.goto(f"http://127.0.0.1:{port}/{rel}", wait_until="load", timeout=15000)
                    # open every lazy turn and details
                    pg.evaluate("document.querySelectorAll('details').forEach(d=>d.open=true)")
                    pg.wait_for_timeout(300)
                    if pg.evaluate("window.__xss") is not None:
                        hits.append(("__xss", rel))
                    opened.append(rel)
                except Exception as exc:
                    opened.append(rel + f" (error {type(exc).__name__})")
            b.close()
    finally:
        srv.terminate()
        srv.wait()
    return bool(hits), hits


def marker_ran():
    return MARK.exists()


def summary(case, place, builds, site, planted, xss_result=None, expect=""):
    outs = [b["out"] for b in builds]
    lk = leaks(site, outs, planted)
    res = {
        "case": case, "place": place,
        "builds": [{k: (v if k != "out" else v[-3000:]) for k, v in b.items()} for b in builds],
        "good_page": page_of_good(site),
        "leaks": lk, "marker": marker_ran(), "xss": xss_result,
    }
    (ROOT / "cases" / case / "result.json").write_text(json.dumps(res, indent=1, default=str))
    return res
