"""The golden-file helper: what it scrubs, what it keeps, and how it reports a difference."""

from __future__ import annotations

from pathlib import Path

import pytest

import goldtest


def test_scrubs_what_varies_and_keeps_what_is_ours() -> None:
    a = ('<footer>reporter 0.1.0 · generated 2026-09-21 14:13:20 UTC</footer><link href="static/site.0123abcd.css">'
         "<td>started 2026-05-02T19:26:01Z</td><pre>x = &#39;a&#39;<span class=\"w\"> </span>y</pre>"
         '<script type="application/json" id="fig-1">{"plotly": 5}</script>')
    b = ('<footer>reporter 1.2.3rc1 · generated 2031-01-01 00:00:00 UTC</footer><link href="static/site.ffff0000.css">'
         "<td>started 2026-05-02T19:26:01Z</td><pre>x = &#x27;a&#x27; y</pre>"
         '<script type="application/json" id="fig-1">{"plotly": 6}</script>')
    assert goldtest.scrub(a) == goldtest.scrub(b)
    assert "2026-05-02T19:26:01Z" in goldtest.scrub(a)  # a recorded time is data, not build noise
    assert goldtest.scrub(a) != goldtest.scrub(a.replace("started", "ended"))


def test_a_difference_fails_with_a_unified_diff(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(goldtest, "GOLD", tmp_path / "gold")
    monkeypatch.setattr(goldtest, "ACTUAL", tmp_path / "actual")
    with pytest.raises(pytest.fail.Exception, match="does not exist"):
        goldtest.check("page.html", "one\ntwo\n")
    goldtest.check("page.html", "one\ntwo\n", update=True)
    goldtest.check("page.html", "one\ntwo\n")
    with pytest.raises(pytest.fail.Exception) as exc:
        goldtest.check("page.html", "one\nthree\n")
    assert "-two\n+three" in str(exc.value)
    assert (tmp_path / "actual" / "page.html").read_text() == "one\nthree\n"
