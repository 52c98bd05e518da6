"""A kernel whose own code runs only outside training mode is named (issue 42: o1-preview L3 P15's fused
BatchNorm+ReLU runs only in eval(), and KernelBench runs models in training mode, so its recorded time was PyTorch's).
Read from the parsed source, never run."""

from __future__ import annotations

import pytest

from reporter.core.cheats import scan, training_branches

HEAD = "import torch\nfrom torch.utils.cpp_extension import load_inline\next = load_inline(name='e', cpp_sources='', cuda_sources='__global__ void k() {}')\n"


def src(forward: str) -> str:
    body = "\n".join("        " + line for line in forward.strip("\n").split("\n"))
    return HEAD + "\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n" + body + "\n"


IF_LINE = HEAD.count("\n") + 5  # the first line of the forward's body: two blank lines, class, def


@pytest.mark.parametrize("forward", [
    "if self.training:\n    return torch.nn.functional.relu(x)\nelse:\n    return ext.f(x)",
    "if not self.training:\n    return ext.f(x)\nreturn torch.relu(x)",
    "if self.training:\n    return torch.relu(x)\nreturn ext.f(x)",  # the eval path follows an if that returns
    "y = x * 2\nif self.training:\n    y = torch.relu(y)\nelse:\n    y = ext.f(y)\nreturn y",
])
def test_the_training_side_runs_pytorch_and_the_eval_side_the_kernel(forward: str) -> None:
    (f,) = training_branches(src(forward))
    assert (f.check, f.severity, f.line) == ("training_branch", "warn", IF_LINE + forward.split("\n").index(
        next(line for line in forward.split("\n") if "self.training" in line)))
    assert "self.training" in f.text and "KernelBench runs both models in training mode" in f.message
    assert f in scan(src(forward))  # part of the static scan every run page shows


@pytest.mark.parametrize("forward", [
    "if self.training:\n    return ext.f(x)\nreturn ext.g(x)",  # both sides run the kernel
    "if self.training:\n    mean = x.mean()\nelse:\n    mean = x.sum()\nreturn ext.f(x, mean)",  # the kernel runs after either
    "if self.training:\n    return ext.f(x)\nreturn torch.relu(x)",  # the kernel runs in training mode
    "if self.trained:\n    return torch.relu(x)\nreturn ext.f(x)",  # another flag
    "# if self.training: return torch.relu(x)\nreturn ext.f(x)",
])
def test_no_finding_where_training_mode_runs_the_kernel(forward: str) -> None:
    assert training_branches(src(forward)) == []


def test_a_file_that_builds_no_extension_or_does_not_parse() -> None:
    plain = src("if self.training:\n    return torch.relu(x)\nreturn x").replace("ext = load_inline", "other = make")
    assert training_branches(plain) == [] and training_branches("def (") == []


def test_a_source_nested_past_the_recursion_limit_is_no_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    from reporter.core import cheats

    def deep(*_: object) -> list[int]:
        raise RecursionError("maximum recursion depth exceeded")
    monkeypatch.setattr(cheats, "_branches", deep)
    assert training_branches(src("if self.training:\n    return torch.relu(x)\nreturn ext.f(x)")) == []
