"""The isolated work counter: runs ONE reference `Model` on meta tensors and counts its FLOPs and bytes.

Run by the fork server in its own process (mode `work`, no GPU visible): the problem file is trace content,
and this is the validator, the only place it may run. It reads ``JOB_DIR/job.json`` (`core.work.WorkJob`)
and writes ``JOB_DIR/work.json`` (`core.work.WorkCount`). Standard library and torch only.

FLOPs: PyTorch's `FlopCounterMode` counts matmuls, convolutions and attention; a dispatch mode outside it
sees the same operators (after the counter's own decompositions) and counts the rest by the rules of
`core.work.RULE`, by dtype. Bytes: each input, parameter and buffer is read once, as much of it as an
operator touches (views are followed back to it), and each output written once.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import traceback
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402
from torch.utils._pytree import tree_flatten  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode, flop_registry  # noqa: E402

from ..core.atomic import replace_file  # noqa: E402
from ..core.work import (  # noqa: E402
    CPU_FALLBACK_BYTES,
    CPU_MEMORY_CAP,
    LOSS_FLOPS,
    META_BUDGET_S,
    NORM_FLOPS,
    SOFTMAX_FLOPS,
    WORK_FILE,
    Counting,
    Kind,
    OpCount,
    TensorIO,
    WorkCount,
    WorkJob,
    failed,
)
from .inputs import PopcornJitter, exec_reference  # noqa: E402

_DTYPES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16", torch.float64: "fp64"}
# Operators whose output is the input's data, moved or retyped: work on it is still work on the input.
COPIES = frozenset({"aten.clone", "aten._to_copy", "aten.contiguous", "aten.copy", "aten.lift_fresh_copy", "aten.detach",
                    "aten.alias", "aten.expand_copy", "aten.view_copy", "aten._unsafe_view"})
# Operators that create, select or move data and do no arithmetic.
MOVEMENT_PREFIXES = ("aten.empty", "aten.zeros", "aten.ones", "aten.full", "aten.rand", "aten.arange", "aten.linspace",
                     "aten.scalar_tensor", "aten.new_", "aten.cat", "aten.stack", "aten.index", "aten.gather", "aten.scatter",
                     "aten.select_scatter", "aten.slice_scatter", "aten.masked_select", "aten.nonzero", "aten.sort",
                     "aten.topk", "aten.argsort", "aten.constant_pad_nd", "aten.reflection_pad", "aten.replication_pad",
                     "aten.embedding", "aten.flip", "aten.roll", "aten.repeat", "aten.tril", "aten.triu", "aten.unsafe_split",
                     "aten.split", "aten.unbind", "aten.fill", "aten.zero_", "aten.eye", "aten.one_hot", "aten.bernoulli",
                     "aten.im2col", "aten.col2im", "aten.unfold", "aten.copy_", "aten.set_", "aten.resize", "aten.diag_embed",
                     "aten.diag", "aten.normal", "aten.uniform", "aten.exponential", "aten.random_", "aten.native_dropout",
                     "aten._local_scalar_dense", "aten.item", "aten.equal", "aten.is_nonzero")
BY_NAME = {"aten._softmax": Kind.SOFTMAX, "aten._log_softmax": Kind.SOFTMAX, "aten._safe_softmax": Kind.SOFTMAX,
           "aten.hardswish": Kind.POINTWISE, "aten.hardsigmoid": Kind.POINTWISE, "aten.nll_loss_forward": Kind.LOSS,
           "aten.nll_loss2d_forward": Kind.LOSS, "aten.native_batch_norm": Kind.NORM,
           "aten._native_batch_norm_legit": Kind.NORM, "aten._native_batch_norm_legit_no_training": Kind.NORM,
           "aten.native_group_norm": Kind.NORM, "aten.native_layer_norm": Kind.NORM, "aten.cumsum": Kind.SCAN,
           "aten.cumprod": Kind.SCAN, "aten.logcumsumexp": Kind.SCAN, "aten.cummax": Kind.SCAN, "aten.cummin": Kind.SCAN}
PER_ELEMENT = {Kind.SOFTMAX: SOFTMAX_FLOPS, Kind.NORM: NORM_FLOPS, Kind.LOSS: LOSS_FLOPS}
# An input multiplied or divided by a number is still that input for the floor (`FLOOR_FLOPS_RULE`): attention scales
# q (or k) before its first matmul.
SCALINGS = frozenset({"aten.mul", "aten.div"})
_REDUCTION = getattr(torch.Tag, "reduction", None)  # newer torch tags reductions; older ones are counted by name


def dtype_label(dtype: torch.dtype) -> str:
    if dtype in _DTYPES:
        return _DTYPES[dtype]
    return "fp8" if "float8" in str(dtype) else "int"


def nbytes(t: torch.Tensor) -> int:
    return int(t.numel()) * t.element_size()


def _is_view(func: Any) -> bool:
    if torch.Tag.inplace_view in func.tags:  # t_, unsqueeze_, as_strided_: a view made in place
        return True
    rets = func._schema.returns
    return bool(rets) and rets[0].alias_info is not None and not rets[0].alias_info.is_write


def _tensors(tree: Any) -> list[torch.Tensor]:
    return [t for t in tree_flatten(tree)[0] if isinstance(t, torch.Tensor)]


def classify(func: Any, name: str) -> Kind | None:
    """How an operator's FLOPs are counted; None for one that moves data and computes nothing."""
    if func.overloadpacket in flop_registry:
        return Kind.MATMUL
    if name in BY_NAME:
        return BY_NAME[name]
    if torch.Tag.pointwise in func.tags:
        return Kind.POINTWISE
    if (_REDUCTION is not None and _REDUCTION in func.tags) or name.split(".")[-1] in ("sum", "mean", "amax", "amin", "max", "min",
                                                                                       "prod", "var", "std", "argmax", "argmin"):
        return Kind.REDUCTION
    if "pool" in name:
        return Kind.POOL
    if name.endswith("_loss"):
        return Kind.LOSS
    if name.startswith(MOVEMENT_PREFIXES):
        return None
    return Kind.OTHER


class Tally(TorchDispatchMode):
    """Every operator of one forward pass: FLOPs by kind and dtype, bytes read from each leaf tensor."""

    def __init__(self, leaves: list[torch.Tensor]) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.leaf_of = {id(t): i for i, t in enumerate(leaves)}
        self.size = [nbytes(t) for t in leaves]
        self.read = [0] * len(leaves)
        self.alive: list[torch.Tensor] = list(leaves)  # keeps every tracked tensor alive, so no id is reused
        # For the floor (`FLOOR_FLOPS_RULE`): tensors that stand for an input (a scaled one, attention's probabilities),
        # and the products of matmuls whose operands all do (a softmax of one is attention's probabilities).
        self.forced: set[int] = set()
        self.products: set[int] = set()
        self.ops: dict[tuple[Kind, str], list[int]] = {}
        self.estimated: Counter[str] = Counter()

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = str(func.overloadpacket)
        ins, outs = _tensors((args, kwargs)), _tensors(out)
        roots = [self.leaf_of.get(id(t)) for t in ins]
        if _is_view(func) or name in COPIES:
            if roots and roots[0] is not None:
                for o in outs:
                    self.leaf_of[id(o)] = roots[0]
                    self.alive.append(o)
            for marks in (self.forced, self.products):
                if ins and id(ins[0]) in marks:
                    self._mark(marks, outs)
            if not _is_view(func):
                self._reads(ins, roots)
            return out
        self._reads(ins, roots)
        kind = classify(func, name)
        if kind is not None:
            self._count(kind, func, name, (args, kwargs, out), ins, outs, roots)
        return out

    def _mark(self, marks: set[int], outs: list[torch.Tensor]) -> None:
        for o in outs:
            marks.add(id(o))
            self.alive.append(o)

    def _stands_for_input(self, t: torch.Tensor) -> bool:
        return id(t) in self.leaf_of or id(t) in self.forced

    def _floor_marks(self, kind: Kind, name: str, ins: list[torch.Tensor], outs: list[torch.Tensor]) -> None:
        """What a non-matmul operator's output stands for, for the floor of the matmuls after it."""
        scaled = kind is Kind.POINTWISE and name in SCALINGS and len(ins) == 1 and self._stands_for_input(ins[0]) \
            and all(o.shape == ins[0].shape for o in outs)
        probabilities = kind is Kind.SOFTMAX and bool(ins) and (id(ins[0]) in self.products or self._stands_for_input(ins[0]))
        if scaled or probabilities:
            self._mark(self.forced, outs)

    def _reads(self, ins: list[torch.Tensor], roots: list[int | None]) -> None:
        for t, leaf in zip(ins, roots):
            if leaf is not None:
                self.read[leaf] = max(self.read[leaf], min(nbytes(t), self.size[leaf]))

    def _count(self, kind: Kind, func: Any, name: str, call: tuple[Any, Any, Any], ins: list[torch.Tensor],
               outs: list[torch.Tensor], roots: list[int | None]) -> None:
        args, kwargs, out = call
        floats = [t for t in ins if t.is_floating_point()]
        dtype = dtype_label((floats or outs or ins)[0].dtype) if (floats or outs or ins) else "fp32"
        floor = 0
        if kind is Kind.MATMUL:
            flops = int(flop_registry[func.overloadpacket](*args, **kwargs, out_val=out))
            operands = [t for t in ins if t.is_floating_point()]
            floor = flops if operands and all(self._stands_for_input(t) for t in operands) else 0
            if floor:
                self._mark(self.products, outs)
        elif kind in (Kind.REDUCTION, Kind.POOL, Kind.NORM, Kind.SOFTMAX, Kind.LOSS):
            flops = PER_ELEMENT.get(kind, 1) * (int(ins[0].numel()) if ins else 0)
        else:
            flops = sum(int(o.numel()) for o in outs)
            if kind is Kind.OTHER:
                self.estimated[name] += 1
        self._floor_marks(kind, name, ins, outs)
        row = self.ops.setdefault((kind, dtype), [0, 0, 0])
        row[0] += flops
        row[1] += 1
        row[2] += floor


def _to(x: Any, device: str) -> Any:
    if isinstance(x, torch.Tensor):
        return x.to(device)
    if isinstance(x, list | tuple):
        return type(x)(_to(v, device) for v in x)
    return x


def build(ns: dict[str, Any], device: str) -> tuple[Any, list[Any], list[tuple[str, torch.Tensor]]]:
    """The reference `Model` and its nominal inputs on `device`, and every leaf tensor with its role."""
    with torch.device(device):
        init = ns["get_init_inputs"]()
        torch.manual_seed(0)
        model = ns["Model"](*init).to(device).eval()
        torch.manual_seed(0)
        inputs = _to(list(ns["get_inputs"]()), device)
    leaves: list[tuple[str, torch.Tensor]] = [(f"input {i}", t) for i, t in enumerate(_tensors(inputs))]
    leaves += [(f"parameter {n}", p) for n, p in model.named_parameters()]
    leaves += [(f"buffer {n}", b) for n, b in model.named_buffers()]
    seen: set[int] = set()
    unique = [(role, t) for role, t in leaves if not (id(t) in seen or seen.add(id(t)))]  # type: ignore[func-returns-value]
    return model, inputs, unique


def measure(model: Any, inputs: list[Any], leaves: list[tuple[str, torch.Tensor]], sha: str, how: Counting) -> WorkCount:
    """One forward pass under the counters."""
    tally = Tally([t for _, t in leaves])
    counter = FlopCounterMode(display=False)
    # On CPU tensors oneDNN runs an RNN as one fused operator no counter knows (mkldnn_rnn_layer): without it,
    # PyTorch runs the matmuls FlopCounterMode counts, as on meta tensors.
    off = torch.backends.mkldnn.flags(enabled=False) if how is Counting.CPU else contextlib.nullcontext()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # oneDNN's note about TF32 on Intel GPUs, and the reference's own warnings
        with off, torch.no_grad(), tally, counter:  # the tally outside: it sees what the counter counted, after its decompositions
            out = model(*inputs)
    tensors = [TensorIO(role, tuple(int(d) for d in t.shape), dtype_label(t.dtype), nbytes(t), tally.read[i])
               for i, (role, t) in enumerate(leaves)]
    # An output that is an input (or a view of one) was written by nobody.
    tensors += [TensorIO(f"output {i}", tuple(int(d) for d in t.shape), dtype_label(t.dtype), nbytes(t),
                         0 if id(t) in tally.leaf_of else nbytes(t)) for i, t in enumerate(_tensors(out))]
    by_dtype: Counter[str] = Counter()
    for _, t in leaves:
        if t.is_floating_point():
            by_dtype[dtype_label(t.dtype)] += nbytes(t)
    ops = tuple(OpCount(kind, dtype, f, n, floor) for (kind, dtype), (f, n, floor) in sorted(tally.ops.items()))
    return WorkCount(sha, how, torch=torch.__version__, dtype=by_dtype.most_common(1)[0][0] if by_dtype else None,
                     flop_counter_total=int(counter.get_total_flops()), ops=ops, tensors=tuple(tensors),
                     estimated=tuple(f"{name} x{n}" for name, n in sorted(tally.estimated.items())))


def cap_memory(extra: int) -> None:
    """Let this process map at most `extra` more bytes (Linux: RLIMIT_AS); an allocation beyond it raises."""
    try:
        import resource
        with open("/proc/self/status", encoding="ascii") as f:
            now = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
        resource.setrlimit(resource.RLIMIT_AS, (now + extra, now + extra))
    except (ImportError, OSError, StopIteration, ValueError):
        pass  # not Linux: the size check before the CPU run is the only bound


class OverBudget(Exception):
    pass


@contextlib.contextmanager
def budget(seconds: float | None) -> Iterator[None]:
    """Raise OverBudget in this (main) thread after `seconds`; no limit elsewhere, or for None."""
    if seconds is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(*_: object) -> None:
        raise OverBudget(f"it took over META_BUDGET_S ({seconds:g} s): many small operators, each slow on meta tensors")
    old = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _why(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300] if text else ''}".rstrip(": ")


def count(job: WorkJob) -> WorkCount:
    """The reference's work: on meta tensors, else (small enough) on CPU tensors, else why not."""
    # Argument checks of torch.distributions read values (`.item()`), which meta tensors do not have.
    checks = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(False)
    try:
        return _count(job)
    finally:
        torch.distributions.Distribution.set_default_validate_args(checks)


def _count(job: WorkJob) -> WorkCount:
    sha = job.reference_sha256
    try:
        ns = exec_reference(job.reference, PopcornJitter())
    except Exception as exc:  # noqa: BLE001 - the problem file is untrusted: its failure is the answer
        return failed(sha, f"the problem file raised {_why(exc)}", torch.__version__)
    size: int | None = None
    try:
        model, inputs, leaves = build(ns, "meta")
        size = sum(nbytes(t) for _, t in leaves)
        with budget(META_BUDGET_S if size <= CPU_FALLBACK_BYTES else None):  # a large one has no faster way
            return measure(model, inputs, leaves, sha, Counting.META)
    except Exception as exc:  # noqa: BLE001
        on_meta = _why(exc)
    if size is not None and size > CPU_FALLBACK_BYTES:
        why = f"its {size:,} bytes of inputs and parameters exceed CPU_FALLBACK_BYTES"
        return failed(sha, f"on meta tensors: {on_meta}; not run on CPU tensors: {why}", torch.__version__)
    try:
        model, inputs, leaves = build(ns, "cpu")
        counted = measure(model, inputs, leaves, sha, Counting.CPU)
    except Exception as exc:  # noqa: BLE001
        return failed(sha, f"on meta tensors: {on_meta}; on CPU tensors: {_why(exc)}", torch.__version__)
    return replace(counted, why=f"counted on CPU tensors: on meta tensors, {on_meta}")


WARM_UP = """
import torch
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
    def forward(self, x):
        return torch.softmax(self.fc(x).relu(), dim=-1).sum()
def get_inputs():
    return [torch.rand(2, 8)]
def get_init_inputs():
    return []
"""


def warm() -> None:
    """Count a small reference once, so that forked children start with every lazy import done."""
    count(WorkJob(WARM_UP, "warm-up"))


def main(job_dir: Path) -> int:
    job = WorkJob.from_json((job_dir / "job.json").read_text(encoding="utf-8"))
    torch.set_num_threads(1)
    cap_memory(CPU_MEMORY_CAP)  # a CPU run of a model whose size the meta run could not learn must not take the machine
    try:
        result = count(job)
    except BaseException as exc:  # noqa: BLE001 - even a SystemExit from the problem file is an answer
        result = failed(job.reference_sha256, f"the counter failed: {_why(exc)}", torch.__version__)
        traceback.print_exc()
    replace_file(job_dir / WORK_FILE, result.to_json())
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
