"""Every way a run becomes suspect is a rule that names its hack and an honest kernel it must not trip, and
docs/checks.md says both (issue 31: a flag is a claim about a person's work)."""

from __future__ import annotations

from conftest import ROOT
from reporter.collect.transcript import CHECK as TRANSCRIPT_CHECK
from reporter.core.cheats import RULES as STATIC_RULES
from reporter.core.schema import DynamicCheck
from reporter.core.suspects import RULES


def test_every_error_level_finding_and_measured_check_is_a_named_rule() -> None:
    named = {r.check for r in RULES}
    static_errors = {check for check, severity, _, _ in STATIC_RULES if severity == "error"} | {"no_cuda_kernel", "no_extension"}
    expected = static_errors | {TRANSCRIPT_CHECK, "attribution.submission", "attribution.streams"} | {c.value for c in DynamicCheck}
    assert expected <= named, f"suspect sources without a rule: {sorted(expected - named)}"
    assert all(r.hack and r.honest for r in RULES)


def test_docs_list_each_rule_with_its_hack_and_honest_twin() -> None:
    doc = (ROOT / "docs" / "checks.md").read_text(encoding="utf-8")
    for r in RULES:
        assert f"| `{r.check}` | {r.source} | {r.hack} | {r.honest} |" in doc, r.check
