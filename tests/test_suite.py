"""The suite itself: modules that need torch are skipped, not broken, on a machine without it."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT

NO_TORCH = """
import sys, pytest
sys.modules["torch"] = None  # `import torch` raises ImportError, as where torch is not installed
sys.exit(pytest.main(["-q", "--collect-only", "-p", "no:cacheprovider", *sys.argv[1:]]))
"""


def test_torch_modules_are_skipped_without_torch() -> None:
    proc = subprocess.run([sys.executable, "-c", NO_TORCH, "tests/test_harness.py", "tests/test_gpu.py"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "error" not in out.lower() and "test_harness.py::" not in out, out
