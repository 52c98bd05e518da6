"""Counting a reference's work (issue 33): FLOPs by rule and dtype, compulsory bytes, the floor's FLOPs, the CPU
fallback, failures, and the cache in DATA/validation/work. The counter runs in-process here (one forward pass on
meta tensors each); the fork server's own run of it is the slow test at the end."""

from __future__ import annotations

from pathlib import Path

import pytest

from reporter.core.cache import read_work, work_file
from reporter.core.records import sha256_text
from reporter.core.work import CPU_FALLBACK_BYTES, Counting, Kind, WorkCount, WorkJob

torch = pytest.importorskip("torch")
from reporter.validate import work as work_mod  # noqa: E402
from reporter.validate.workcount import count, main  # noqa: E402

REF = """
import torch
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(64, 32)
        self.unused = torch.nn.Linear(1000, 1000)  # never called: never read
    def forward(self, x, y):
        h = torch.relu(self.fc(x))
        return h.sum(dim=0), y[:, :4] * 2  # a quarter of y is read
def get_inputs():
    return [torch.rand(8, 64), torch.rand(16, 16)]
def get_init_inputs():
    return []
"""


def counted(source: str) -> WorkCount:
    return count(WorkJob(source, sha256_text(source)))


def test_flops_by_rule_and_bytes_by_what_the_forward_touches() -> None:
    w = counted(REF)
    assert w.how is Counting.META and w.dtype == "fp32" and not w.estimated
    by_kind = {o.kind: (o.flops, o.calls, o.floor_flops) for o in w.ops}
    assert by_kind == {Kind.MATMUL: (2 * 8 * 64 * 32, 1, 2 * 8 * 64 * 32),  # addmm, on an input and a parameter
                       Kind.POINTWISE: (8 * 32 + 16 * 4, 2, 0),  # relu, then y[:, :4] * 2
                       Kind.REDUCTION: (8 * 32, 1, 0)}  # the sum reads every element of h
    assert w.flop_counter_total == 2 * 8 * 64 * 32
    moved = {t.role: t.moved for t in w.tensors}
    assert moved == {"input 0": 8 * 64 * 4, "input 1": 16 * 4 * 4, "parameter fc.weight": 32 * 64 * 4, "parameter fc.bias": 32 * 4,
                     "parameter unused.weight": 0, "parameter unused.bias": 0, "output 0": 32 * 4, "output 1": 16 * 4 * 4}
    assert w.read_bytes == 2048 + 256 + 8192 + 128 and w.write_bytes == 128 + 256


def test_work_on_a_tensor_the_reference_builds_is_not_in_the_floor() -> None:
    w = counted(REF.replace("return h.sum(dim=0), y[:, :4] * 2", "return torch.diag(y[0]) @ y").replace("def get_inputs", "def _x"))
    assert w.how is Counting.FAILED  # get_inputs was renamed away: the problem is unusable, and says so
    fc, mm = 2 * 8 * 64 * 32, 2 * 16**3  # the addmm of self.fc, then a 16x16x16 matmul
    diag = counted(REF.replace("return h.sum(dim=0), y[:, :4] * 2", "return torch.diag(y[0]) @ y"))
    matmul = next(o for o in diag.ops if o.kind is Kind.MATMUL)
    assert (matmul.flops, matmul.calls, matmul.floor_flops) == (fc + mm, 2, fc)  # diag(a) @ b: a kernel may scale rows instead
    plain = counted(REF.replace("return h.sum(dim=0), y[:, :4] * 2", "return y.t().contiguous() @ y"))
    assert next(o for o in plain.ops if o.kind is Kind.MATMUL).floor_flops == fc + mm  # a copy of an input is still the input


def test_a_forward_that_needs_values_is_counted_on_small_cpu_tensors() -> None:
    w = counted(REF.replace("return h.sum(dim=0), y[:, :4] * 2", "return h * h.sum().item()"))
    assert w.how is Counting.CPU and "item()" in w.why and w.flops > 0
    big = REF.replace("return h.sum(dim=0), y[:, :4] * 2", "return y * y.sum().item()").replace(
        "torch.rand(16, 16)", f"torch.rand({CPU_FALLBACK_BYTES // 4 + 1})")
    w = counted(big)
    assert w.how is Counting.FAILED and "exceed CPU_FALLBACK_BYTES" in w.why and not w.counted


def test_a_problem_file_that_raises_is_a_failed_count_with_its_reason() -> None:
    w = counted("raise ValueError('boom')\n")
    assert w.how is Counting.FAILED and w.why == "the problem file raised ValueError: boom"


class InProcess:
    """The fork server's interface, running the counter's entry point here; `rc` None plays a timeout."""

    runs = 0

    def __init__(self, env: dict[str, str], rc: int | None = 0) -> None:
        self.rc = rc

    def run(self, mode: str, job_dir: Path, env: dict[str, str | None], timeout_s: float) -> tuple[int | None, float]:
        assert mode == "work" and env["CUDA_VISIBLE_DEVICES"] == ""  # no GPU for a problem file
        InProcess.runs += 1
        if self.rc is None:
            return None, 0.0
        main(job_dir)
        return self.rc, 0.0

    def close(self) -> None:
        pass


ATTENTION = """
import torch
class Model(torch.nn.Module):
    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)
def get_inputs():
    return [torch.rand(2, 4, 16, 8), torch.rand(2, 4, 16, 8), torch.rand(2, 4, 16, 8)]
def get_init_inputs():
    return []
"""


def test_attention_on_its_inputs_is_in_the_floor() -> None:
    # q @ k^T (q scaled by 1/sqrt(8)) and softmax(...) @ v: 2 x (2*4 heads x 16x16x8 x 2 FLOP) = 65,536 FLOP, all forced
    w = counted(ATTENTION)
    mm = next(o for o in w.ops if o.kind is Kind.MATMUL)
    assert (mm.flops, mm.calls, mm.floor_flops) == (65536, 2, 65536)
    scaled = counted(REF.replace("return h.sum(dim=0), y[:, :4] * 2", "return (y / 4.0) @ y"))
    assert next(o for o in scaled.ops if o.kind is Kind.MATMUL).floor_flops == 2 * 8 * 64 * 32 + 2 * 16**3
    # a product fed to another matmul is not an input: (y @ y) @ y may be re-associated, so only the first counts
    chained = counted(REF.replace("return h.sum(dim=0), y[:, :4] * 2", "return (y @ y) @ y"))
    assert next(o for o in chained.ops if o.kind is Kind.MATMUL).floor_flops == 2 * 8 * 64 * 32 + 2 * 16**3
    # a sum of two inputs is not a scaling: its matmul is left out, as a tensor the reference built
    summed = counted(REF.replace("return h.sum(dim=0), y[:, :4] * 2", "return (y + y) @ y"))
    assert next(o for o in summed.ops if o.kind is Kind.MATMUL).floor_flops == 2 * 8 * 64 * 32


def test_a_count_under_older_rules_is_no_count_and_is_counted_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses
    monkeypatch.setattr(work_mod, "ForkServer", InProcess)
    monkeypatch.setattr(f"{main.__module__}.cap_memory", lambda extra: None)
    old = dataclasses.replace(counted(REF), format=1)
    work_mod.store_work(tmp_path, old)
    assert read_work(tmp_path, REF) is None  # a build shows "not counted yet", not a count made by older rules
    InProcess.runs = 0
    done = work_mod.count_work(tmp_path, [REF], jobs=1)
    assert (len(done.counts), done.cached, InProcess.runs) == (1, 0, 1) and read_work(tmp_path, REF) == counted(REF)
    work_file(tmp_path, sha256_text(REF)).write_text("{not json", encoding="utf-8")
    assert work_mod.count_work(tmp_path, [REF], jobs=1).counts == ()  # a file that is no count is left to the build to name


def test_count_work_stores_each_reference_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(work_mod, "ForkServer", InProcess)
    # The entry point caps its own address space, soft and hard (in a worker process of its own, normally): run here,
    # it would cap this test process for good, and every later Chromium of this xdist worker died at launch.
    monkeypatch.setattr(f"{main.__module__}.cap_memory", lambda extra: None)
    InProcess.runs = 0
    done = work_mod.count_work(tmp_path, [REF, REF, "raise ValueError('boom')\n"], jobs=1)
    assert (len(done.counts), done.cached, InProcess.runs) == (2, 0, 2)
    assert read_work(tmp_path, REF) == counted(REF)
    again = work_mod.count_work(tmp_path, [REF], jobs=1)
    assert (again.counts, again.cached, InProcess.runs) == ((), 1, 2)  # kept: nothing ran
    monkeypatch.setattr(work_mod, "ForkServer", lambda env: InProcess(env, rc=None))
    timed_out = work_mod.count_work(tmp_path, [REF], force=True, jobs=1, timeout_s=7)
    assert timed_out.counts[0].why == "the counter did not finish within 7 s (WORK_TIMEOUT_S)"
    assert "did not finish" in read_work(tmp_path, REF).why  # type: ignore[union-attr]


def test_an_unusable_count_file_is_a_problem_not_a_count(tmp_path: Path) -> None:
    path = work_file(tmp_path, sha256_text(REF))
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    problems: list = []  # type: ignore[type-arg]
    assert read_work(tmp_path, REF, problems) is None and "work.json" in problems[0].path
    path.write_text(counted("import torch\n").to_json(), encoding="utf-8")  # another reference's count
    problems.clear()
    assert read_work(tmp_path, REF, problems) is None and problems[0].field == "reference_sha256"
    assert read_work(tmp_path, "never counted\n") is None


@pytest.mark.slow
def test_the_fork_server_counts_in_a_child_without_a_gpu(tmp_path: Path) -> None:
    done = work_mod.count_work(tmp_path, [REF, "import os\nos._exit(3)\n"], jobs=2)
    by_sha = {w.reference_sha256: w for w in done.counts}
    assert by_sha[sha256_text(REF)] == counted(REF)
    assert by_sha[sha256_text("import os\nos._exit(3)\n")].why.startswith("the counter died (exit code 3)")


def test_an_rnn_on_cpu_tensors_is_counted_by_its_matmuls() -> None:
    """oneDNN would run the LSTM as one fused operator that no counter knows; the count turns it off."""
    w = counted(RNN)
    matmul = sum(o.flops for o in w.ops if o.kind is Kind.MATMUL)
    # 5 steps of a batch of 2: the input (8 wide) and the hidden state (16) against 4 gates of 16
    assert w.how is Counting.CPU and not w.estimated and matmul == 5 * (2 * 2 * 8 * 64 + 2 * 2 * 16 * 64)


RNN = """
import torch
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM(8, 16, batch_first=True)
    def forward(self, x):
        y, _ = self.rnn(x)
        return y * y.sum().item()  # a value: the meta run cannot, so the count runs on CPU tensors
def get_inputs():
    return [torch.rand(2, 5, 8)]
def get_init_inputs():
    return []
"""
