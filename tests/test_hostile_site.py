"""Issue 47, item 1: one hostile corpus, every page kind. Hostile runs (markup in every string a trace, a review or a
name can carry, secrets of each kind in every place an agent writes them, a confusable model name) beside the sample
data; the built site's every page is opened in headless Chromium, with its lazy turns, kernel versions and diffs
filled, and searched by run name and by full text. No script of theirs may run, no element of theirs may carry a
handler, and no secret may reach any file the build wrote."""

from __future__ import annotations

import functools
import gzip
import hashlib
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_browser import CHROMIUM, WAIT_MS, QuietHandler, QuietServer, build, open_page
from test_redact_kinds import MISSED

from conftest import DATA, write_trace
from test_render import HOSTILE, hostile_trace

playwright = pytest.importorskip("playwright.sync_api")
# slow: every page of a site in a browser (about a minute on one core); CI runs it in its slow step, so the README's
# command stays within its five minutes
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser"),
              pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")]

CONFUSABLE = "gpt-4о"  # a Cyrillic о: looks like the real model's name, must stay a different model
PLANTED = [planted for planted, _ in MISSED.values()]
SECRETS = sorted({secret for _, secret in MISSED.values()})
# What the injected markup would do if it ran or became an element: the test looks for each in the page and the log.
INJECTED = """Array.from(document.querySelectorAll('*'))
    .filter(e => !e.closest('.js-plotly-plot, #js-plotly-tester'))
    .filter(e => ['img', 'iframe', 'object', 'embed', 'svg'].includes(e.tagName.toLowerCase())
                 || Array.from(e.attributes).some(a => a.name.toLowerCase().startsWith('on')
                                                    || /^\\s*javascript:/i.test(a.value)))
    .map(e => e.outerHTML.slice(0, 120))"""


def _secrets_text(where: str) -> str:
    return f"{where}: " + " | ".join(PLANTED)


def hostile_runs() -> dict[str, dict]:
    """Two hostile runs of one hostile model (two kernel versions each, so version diffs exist) and a confusable one."""
    out = {}
    for name, problem in (("zz-xss-a", 1), ("zz-xss-b", 2)):
        doc = hostile_trace()
        doc["run"].update(problem_id=problem, problem_file=f"{problem}_{HOSTILE}.py")
        doc["prompt"] = f"Write a kernel. {HOSTILE} {_secrets_text('prompt')}"
        # the second version trips static rules, so their table quotes its hostile lines as code
        first = f"# v1 {HOSTILE}\nx = 1\n"
        second = (f"# v2 {HOSTILE}\nimport threading\nx = 2  # {PLANTED[0]}\n"
                  f"t = threading.Thread(target=print, args=('{HOSTILE}',))\n")
        doc["turns"] = [
            {"index": 0, "reasoning": f"{HOSTILE}\n\n{_secrets_text('reasoning')}\n\n[click](javascript:alert(4))\n\n"
                                      "```html\n</code></pre><script>alert(6)</script>\n```",
             "calls": [{"tool": "compile_kernel", "arguments": {"kernel_code": first, "note": "</script><script>alert(7)</script>"},
                        "result": {"ok": True, "text": _secrets_text("tool result")}}], "turn_s": 1.0, "llm_s": 1.0, "tool_s": 0.0},
            {"index": 1, "reasoning": f"again {HOSTILE}",
             "calls": [{"tool": "submit_kernel", "arguments": {"kernel_code": second},
                        "result": {"ok": True, "text": HOSTILE}}], "turn_s": 1.0, "llm_s": 1.0, "tool_s": 0.0}]
        doc["final_kernel"] = {"source": second}
        out[name] = doc
    twin = hostile_trace()
    twin["run"].update(model=CONFUSABLE, problem_id=3, problem_file="3_Conv.py")
    out["zz-confusable"] = twin
    return out


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    root = tmp_path_factory.mktemp("hostile")
    data = root / "data"
    shutil.copytree(DATA, data)
    docs = hostile_runs()
    for name, doc in docs.items():
        write_trace(data, name, doc)
    sha = hashlib.sha256(docs["zz-xss-a"]["final_kernel"]["source"].encode()).hexdigest()
    note = HOSTILE.replace('"', "'") + " " + PLANTED[1].replace("'", "")
    (data / "reviews.toml").write_text(f'[[review]]\nrun = "zz-xss-a"\nkernel_sha256 = "{sha}"\nreviewer = "{note[:40]}"\n'
                                       f'verdict = "interesting"\nquote = "turn 0"\nnote = "{note}"\n', encoding="utf-8")
    build(data, root / "site")
    handler = functools.partial(QuietHandler, directory=str(root))
    server = QuietServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/site/", root / "site"
    server.shutdown()


def test_no_secret_reaches_any_file_the_build_wrote(hostile_site: tuple[str, Path]) -> None:
    _, site = hostile_site
    assert (site / "runs" / "zz-xss-a.html").is_file() and (site / "runs" / "zz-confusable.html").is_file()
    leaks = []
    for path in sorted(p for p in site.rglob("*") if p.is_file()):
        raw = path.read_bytes()
        if path.suffix == ".gz" or raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        text = raw.decode("utf-8", errors="replace")
        leaks += [f"{path.relative_to(site)}: {s}" for s in SECRETS if s in text]
    assert leaks == []


def test_the_confusable_model_is_its_own_model(hostile_site: tuple[str, Path]) -> None:
    _, site = hostile_site
    pages = {p.name for p in (site / "models").glob("*.html")}
    assert len([p for p in pages if "gpt-4" in p]) >= 1
    text = (site / "runs" / "zz-confusable.html").read_text(encoding="utf-8")
    assert CONFUSABLE in text


def _pages(site: Path) -> list[str]:
    """Every page the writer wrote (so a new page kind is visited the day it exists), as paths under the site."""
    return sorted(str(p.relative_to(site)) for p in site.rglob("*.html"))


def test_every_page_the_build_wrote_runs_no_script_of_theirs(hostile_site: tuple[str, Path], browser: object) -> None:
    base, site = hostile_site
    pages = _pages(site)
    kinds = {p.split("/")[0] if "/" in p else p for p in pages}
    assert {"runs", "problems", "models", "leaderboards", "grids", "variants", "index.html", "search.html"} <= kinds, kinds
    bad: dict[str, list[str]] = {}
    for name in pages:
        page, problems = open_page(browser, base + name, charts=False)
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")  # turns, versions, diffs
        page.wait_for_selector(".lazy-body:not([data-filled]), .version-body:not([data-filled])", state="detached",
                               timeout=WAIT_MS)
        found = problems + page.evaluate(INJECTED)
        if found:
            bad[name] = found
        page.close()
    assert bad == {}


def test_searches_that_return_the_hostile_runs_keep_them_text(hostile_site: tuple[str, Path], browser: object) -> None:
    base, _ = hostile_site
    page, problems = open_page(browser, base + "search.html", charts=False)
    page.wait_for_selector("#runindex tbody tr", timeout=WAIT_MS)
    page.fill("#runindex input[type=search]", "onerror")
    page.wait_for_timeout(300)
    names = page.locator("#runindex tbody tr:visible").all_inner_texts()
    assert len(names) >= 2 and all("<img src=x onerror=alert(1)>" in n for n in names), names
    page.wait_for_selector("#fulltext input:not([disabled])", timeout=WAIT_MS)
    page.fill("#fulltext input", "again onerror")  # words of the hostile runs' second turns
    hits = page.locator(".ft-results a.ft-run[href*='zz-xss']")
    hits.first.wait_for(timeout=WAIT_MS)
    assert hits.count() == 2 and all("<img" in t for t in hits.all_inner_texts())
    assert page.evaluate(INJECTED) == [] and problems == [], problems
    page.close()
