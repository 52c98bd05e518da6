"""The work one problem asks for: floating-point operations and compulsory memory traffic, counted once.

`validate.workcount` counts it (the reference `Model` is trace content, so only the isolated validator may
run it: on meta tensors, shapes only, or on small CPU tensors when a meta run cannot be done) and writes a
`WorkCount`; `core.cache.read_work` reads it back for a build that has no torch. Standard library only:
the counter imports this on machines without pydantic. The counting rules are named here, once, so the
problem page can quote the one each count used.

Where it is kept: ``DATA/validation/work/<first 20 hex of the reference's sha256>/work.json``, committed
with the other validation results, one folder per reference (a build notices a count that appears).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from enum import StrEnum

from .decode import from_doc

WORK_FORMAT = 2  # bumped when a rule changes what is counted (older counts are then counted again)
WORK_DIR = "work"  # under DATA/validation/
WORK_FILE = "work.json"
WORK_KEY_CHARS = 20
WORK_TIMEOUT_S = 300.0  # one reference's count, in its own process; a count that takes longer is recorded as failed
# Past this many bytes of inputs and parameters a reference is never run on real CPU tensors.
CPU_FALLBACK_BYTES = 1 << 30
# A meta run pays Python for every operator (meta kernels are Python references): a reference of many small
# operators (an RNN unrolled over 512 steps: ~10^5 of them) that is small enough runs on CPU tensors after this.
META_BUDGET_S = 30.0
CPU_MEMORY_CAP = 4 << 30  # what a CPU run may map beyond the counter itself (a model of unknown size included)
SOFTMAX_FLOPS = 5  # per element: max, subtract, exp, sum, divide
NORM_FLOPS = 5  # per element: mean, variance, normalise, scale, shift
LOSS_FLOPS = 3  # per input element: the difference, its penalty, the sum


class Kind(StrEnum):
    """How a class of operators is counted; `RULE` says it in words."""

    MATMUL = "matmul"
    POINTWISE = "pointwise"
    REDUCTION = "reduction"
    SOFTMAX = "softmax"
    NORM = "norm"
    POOL = "pool"
    SCAN = "scan"
    LOSS = "loss"
    OTHER = "other"


RULE: dict[Kind, str] = {
    Kind.MATMUL: "torch.utils.flop_counter.FlopCounterMode: 2 FLOP per multiply-add of every matmul, convolution and attention",
    Kind.POINTWISE: "1 FLOP per output element (ATen operators tagged pointwise)",
    Kind.REDUCTION: "1 FLOP per input element (ATen operators tagged reduction: sum, mean, max, ...)",
    Kind.SOFTMAX: f"{SOFTMAX_FLOPS} FLOP per element (max, subtract, exp, sum, divide)",
    Kind.NORM: f"{NORM_FLOPS} FLOP per element (batch, group, layer and instance norm: mean, variance, normalise, scale, shift)",
    Kind.POOL: "1 FLOP per input element (max and average pooling)",
    Kind.SCAN: "1 FLOP per output element (cumulative sums and products)",
    Kind.LOSS: f"{LOSS_FLOPS} FLOP per input element (fused loss operators: mse, l1, smooth l1, huber, ...)",
    Kind.OTHER: "1 FLOP per output element, an estimate for an operator no rule names (listed as estimated)",
}
BYTES_RULE = ("every input and parameter the forward pass reads, once (the part an operator "
              "touches, at most its size), and every output written once, each at its own dtype; intermediates "
              "are not counted (a fused kernel need not write them)")
FLOOR_FLOPS_RULE = ("only the matmul, convolution and attention FLOPs whose operands are inputs or "
                    "parameters as given (or views and copies of them, or them multiplied or divided by a number; a "
                    "softmax of such a product, as attention's probabilities, counts as one) count, at the fastest 16-bit "
                    "tensor rate: work on tensors the reference builds itself can sometimes be skipped by an equivalent "
                    "kernel (diag(a) @ b is a row scaling)")


class Counting(StrEnum):
    META = "meta"  # on meta tensors: shapes only, nothing allocated
    CPU = "cpu"  # on real CPU tensors, because the meta run failed and the tensors are small
    FAILED = "failed"


@dataclass(frozen=True)
class OpCount:
    """The FLOPs of one class of operators at one dtype."""

    kind: Kind
    dtype: str  # "fp32", "fp16", "bf16", "fp8", "fp64", "int"
    flops: int
    calls: int
    floor_flops: int = 0  # of those, on the problem's own inputs and parameters (`FLOOR_FLOPS_RULE`)


@dataclass(frozen=True)
class TensorIO:
    """One input, parameter, buffer or output and the bytes the count moves for it."""

    role: str  # "input 0", "parameter fuse.0.weight", "output 0"
    shape: tuple[int, ...]
    dtype: str
    nbytes: int
    moved: int  # read (inputs, parameters) or written (outputs)


@dataclass(frozen=True)
class WorkCount:
    reference_sha256: str
    how: Counting
    format: int = WORK_FORMAT
    why: str = ""  # why it failed, or why it ran on CPU tensors
    torch: str = ""
    dtype: str | None = None  # the problem's precision: the floating dtype holding most input and parameter bytes
    flop_counter_total: int = 0  # FlopCounterMode.get_total_flops(): the MATMUL rows, summed by PyTorch itself
    ops: tuple[OpCount, ...] = ()
    tensors: tuple[TensorIO, ...] = ()
    estimated: tuple[str, ...] = ()  # operators counted by Kind.OTHER, with their calls: "aten.hardswish x1"

    @property
    def counted(self) -> bool:
        return self.how is not Counting.FAILED

    @property
    def flops(self) -> int:
        return sum(o.flops for o in self.ops)

    def flops_of(self, *kinds: Kind) -> int:
        return sum(o.flops for o in self.ops if o.kind in kinds)

    @property
    def floor_flops(self) -> int:
        return sum(o.floor_flops for o in self.ops)

    @property
    def read_bytes(self) -> int:
        return sum(t.moved for t in self.tensors if not t.role.startswith("output"))

    @property
    def write_bytes(self) -> int:
        return sum(t.moved for t in self.tensors if t.role.startswith("output"))

    @property
    def bytes(self) -> int:
        return self.read_bytes + self.write_bytes

    @property
    def intensity(self) -> float | None:
        """Arithmetic intensity, FLOP per compulsory byte."""
        return self.flops / self.bytes if self.bytes else None

    def line(self) -> str:
        """One line for a command's output."""
        if not self.counted:
            return f"{self.reference_sha256[:12]}: not counted: {self.why}"
        return (f"{self.reference_sha256[:12]}: {self.flops:,} FLOP, {self.bytes:,} bytes ({self.dtype or 'no float'} "
                f"inputs, on {self.how} tensors)")

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> WorkCount:
        return from_doc(cls, json.loads(text))


def work_key(reference_sha256: str) -> str:
    return reference_sha256[:WORK_KEY_CHARS]


def failed(reference_sha256: str, why: str, torch_version: str = "") -> WorkCount:
    return WorkCount(reference_sha256, Counting.FAILED, why=why, torch=torch_version)


WORK_MODE = "work"  # the fork server's mode for a count (`validate.forkserver`)


@dataclass(frozen=True)
class WorkJob:
    """One reference to count, as the parent hands it to the counting child (`job.json`)."""

    reference: str
    reference_sha256: str

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> WorkJob:
        return from_doc(cls, json.loads(text))
