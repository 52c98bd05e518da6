"""Whether a problem's correctness check can fail: wrong answers put through the very comparison a verdict uses.

A "correct" on a problem whose check accepts anything is not a result. At the nominal shapes, this module puts
answers that are wrong by construction through `allclose.judge` at the verdict's tolerance: zeros, the
reference's own output for other random inputs (an answer that ignores this input), the input itself where
its shape allows, and mutants of the reference's `forward` (a reduction over another axis, an operand
broadcast along another dimension, a transposed operand, a dropped term). A wrong answer the comparison
accepts makes the check **weak** (HingeLoss's mean over 1e9 random ±1 products, Softmax's 4e-6 outputs under
atol 1e-4, a matrix-vector product over uniform inputs).

For a weak check it then looks for inputs under which those answers fail (`TRANSFORMS`: structured, non-i.i.d.
inputs). The transforms that do so join the kernel's correctness trials (`worker`), with atol scaled by how
much the reference's output scaled, so a trial is as strict as at the nominal inputs. A mutant accepted under
every input tried computes the same function within tolerance (an `+ eps` dropped): it is listed as
equivalent and not counted; zeros, another input's answer and the input itself never are. What is still accepted is "weak check" on every "correct" of the problem.

Runs in its own worker process (mode "strength"), on the reference alone: no submitted kernel is loaded, so
no kernel can touch the result that other kernels of the problem are checked with. Standard library and torch.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import torch

from ..core.schema import CheckStrength
from .allclose import judge
from .inputs import PopcornJitter, _namespace, clone, make_inputs, tensors

MAX_MUTANTS = 24  # mutants tried per problem (first in source order): bounds a problem's cost to ~30 forward calls
OTHER_SEED_OFFSET = 7919  # "another input's answer" is the reference on the inputs of seed + this
REDUCERS = {"sum", "mean", "amax", "amin", "max", "min", "softmax", "log_softmax", "argmax", "argmin", "cumsum", "prod",
            "norm", "std", "var", "logsumexp", "cumprod", "all", "any"}
MATMULS = {"matmul", "mm", "bmm"}


def _rng(seed: int, device: str) -> torch.Generator:
    return torch.Generator(device=device).manual_seed(seed)


def _per_row(x: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    """Each slice along the first dimension scaled by its own 2^U(-3, 3): rows no longer look alike, so an answer
    paired with the wrong row shows."""
    scale = torch.exp2(torch.rand(x.shape[:1], generator=g, device=x.device) * 6 - 3).to(x.dtype)
    return x * scale.reshape(-1, *([1] * (x.dim() - 1)))


def _dominant_rows(x: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    """One row in 64 scaled by 8, the others by 1/8: a few rows dominate every mean, so sums over rows no longer
    concentrate on their expectation."""
    big = torch.rand(x.shape[:1], generator=g, device=x.device) < 1 / 64
    scale = torch.where(big, 8.0, 0.125).to(x.dtype)
    return x * scale.reshape(-1, *([1] * (x.dim() - 1)))


def _shifted(x: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    """The whole draw scaled by 2^U(-2, 2) and shifted by U(-2, 2) standard deviations: non-centred, and each
    draw's answer differs from another's."""
    a = torch.exp2(torch.rand((), generator=g, device=x.device, dtype=x.dtype) * 4 - 2)
    b = (torch.rand((), generator=g, device=x.device, dtype=x.dtype) * 4 - 2) * (x.float().std().to(x.dtype) if x.numel() > 1 else 1)
    return x * a + b


def _peaked(x: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    """+8 at one random position of each row (last dimension): one value dominates, as in a sharp softmax."""
    if x.dim() == 0:
        return x + 8
    rows = x.reshape(-1, x.shape[-1]).clone()
    at = torch.randint(0, x.shape[-1], (rows.shape[0],), generator=g, device=x.device)
    rows[torch.arange(rows.shape[0], device=x.device), at] += 8
    return rows.reshape(x.shape)


def _sparse(x: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    """Nine of ten values zeroed: sums no longer concentrate on their mean."""
    return x * (torch.rand(x.shape, generator=g, device=x.device) < 0.1).to(x.dtype)


# Magnitudes stay within 8x of the problem's own (as in the input-statistics trials): an honest float32 kernel (an
# unshifted softmax) stays inside float range. Tried in this order; the fewest that defeat every wrong answer are kept.
TRANSFORMS: dict[str, Callable[[torch.Tensor, torch.Generator], torch.Tensor]] = {
    "per-row scales": _per_row, "a few dominant rows": _dominant_rows, "shifted and scaled": _shifted,
    "peaked rows": _peaked, "sparse": _sparse}


def structure(x: torch.Tensor) -> tuple[str, ...]:
    """What the problem guarantees of an input, as far as its nominal draw shows: a kernel may rely on it, so a
    strengthened input must keep it (a symmetric-matrix problem's kernel may use the symmetry; HingeLoss's
    targets are +-1; KLDiv's inputs are distributions)."""
    out = []
    if bool((x == x.round()).all()):
        out.append("integer-valued")  # labels, +-1 targets, masks: never transformed
    if bool((x >= 0).all()):
        out.append("non-negative")
        if x.dim() >= 1 and x.shape[-1] > 1 and bool(torch.allclose(x.sum(-1), torch.ones((), device=x.device, dtype=x.dtype), atol=1e-3)):
            out.append("rows sum to 1")
    if x.dim() >= 2 and x.shape[-1] == x.shape[-2] and x.shape[-1] > 1:
        if bool(torch.equal(x, x.mT)):
            out.append("symmetric")
        elif bool(torch.equal(x, x.triu())) or bool(torch.equal(x, x.tril())):
            out.append("triangular")
    return tuple(out)


def keeps(kinds: tuple[str, ...], y: torch.Tensor) -> bool:
    """Whether a transformed input still has every property its nominal draw had (an integer-valued one is never
    transformed: scaling labels or +-1 targets makes them something else)."""
    return "integer-valued" not in kinds and set(kinds) <= set(structure(y))


def transformed(inputs: list[Any], name: str, seed: int, device: str) -> list[Any]:
    """The problem's inputs with floating-point tensors transformed, each only where the result keeps what its
    nominal draw guaranteed (`structure`); integer tensors and those it cannot transform safely as drawn."""
    g, fn = _rng(seed, device), TRANSFORMS[name]

    def one(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            if not (x.is_floating_point() and x.numel()):
                return x.clone()
            kinds, y = structure(x), fn(x, g)
            return y if keeps(kinds, y) else x.clone()
        if isinstance(x, (list, tuple)):
            return type(x)(one(v) for v in x)
        return x
    return [one(x) for x in inputs]


def mean_abs(xs: list[torch.Tensor]) -> float:
    floats = [t.detach().double() for t in xs if t.is_floating_point() and t.numel()]
    total = sum(t.numel() for t in floats)
    return sum(float(t.abs().sum()) for t in floats) / total if total else 0.0


def scaled_atol(atol: float, out: Any, nominal_out: Any) -> float:
    """atol scaled as the reference's output scaled (mean |x| ratio): a trial on transformed inputs is as strict as
    at the nominal ones. The mean, not the RMS: a few peaked values would otherwise loosen it for every element."""
    base, now = mean_abs(tensors(nominal_out)), mean_abs(tensors(out))
    return atol * (now / base) if base > 0 and now > 0 else atol


def usable(out: Any, nominal_out: Any) -> bool:
    """Whether the reference's output under a transform can judge anything: finite and not constant where it was not."""
    for t, n in zip(tensors(out), tensors(nominal_out)):
        if not (t.is_floating_point() and t.numel()):
            continue
        if bool((~torch.isfinite(t) & torch.isfinite(n)).any()) or (bool(t.max() == t.min()) and not bool(n.max() == n.min())):
            return False
    return True


# --- mutants of the reference ---------------------------------------------------------------------------------

def _int_value(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) is int:
        return -node.operand.value
    return None


def _const(v: int) -> ast.expr:
    return ast.Constant(v) if v >= 0 else ast.UnaryOp(ast.USub(), ast.Constant(-v))


def _method(value: ast.expr, name: str, *args: int) -> ast.expr:
    return ast.Call(ast.Attribute(value, name, ast.Load()), [_const(a) for a in args], [])


def _edits(forward: ast.FunctionDef) -> list[tuple[str, ast.AST, str, Any]]:
    """(label, node, field or index, replacement) for every mutation of `forward`, in source order."""
    out: list[tuple[str, ast.AST, str, Any]] = []
    for node in ast.walk(forward):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id if isinstance(node.func, ast.Name) else ""
            for kw in node.keywords:
                if kw.arg in ("dim", "axis") and (d := _int_value(kw.value)) is not None:
                    out += [(f"`{name}` over dim {e} instead of {d}", kw, "value", _const(e)) for e in (d - 1, d + 1)]
            if name in REDUCERS and node.args and isinstance(node.func, ast.Attribute) and (d := _int_value(node.args[0])) is not None:
                out += [(f"`{name}` over dim {e} instead of {d}", node, "args", [_const(e), *node.args[1:]]) for e in (d - 1, d + 1)]
            if name in MATMULS and len(node.args) >= 2:
                out.append((f"`{name}` with its second operand transposed", node, "args",
                            [node.args[0], _method(node.args[1], "transpose", -1, -2), *node.args[2:]]))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.MatMult)):
            text = ast.unparse(node)[:60]
            if isinstance(node.op, ast.MatMult):
                out.append((f"`{text}` with its right operand transposed", node, "right", _method(node.right, "transpose", -1, -2)))
                continue
            out += [(f"`{text}` without its right operand", node, "self", node.left),
                    (f"`{text}` without its left operand", node, "self", node.right)]
            for side in ("left", "right"):
                operand = getattr(node, side)
                if isinstance(operand, (ast.Name, ast.Attribute, ast.Subscript)):
                    out += [(f"`{text}` with `{ast.unparse(operand)[:30]}` broadcast along dim {d}", node, side,
                             _method(operand, "unsqueeze", d)) for d in (-1, 0)]
    return out


class _Swap(ast.NodeTransformer):
    """Replaces one node (a whole BinOp, by `self`) of a copy of the tree."""

    def __init__(self, target: ast.AST, replacement: ast.expr) -> None:
        self.target, self.replacement = target, replacement

    def visit(self, node: ast.AST) -> Any:
        return self.replacement if node is self.target else self.generic_visit(node)


def mutants(reference: str) -> list[tuple[str, str]]:
    """(label, source) of mutated copies of the reference, each with one change in `Model.forward`."""
    import copy
    try:
        tree = ast.parse(reference)
    except SyntaxError:
        return []
    model = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"), None)
    forward = next((n for n in model.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None) if model else None
    if forward is None:
        return []
    out = []
    for i, (label, _, _, _) in enumerate(_edits(forward)[:MAX_MUTANTS]):
        mutated = copy.deepcopy(tree)
        m_model = next(n for n in mutated.body if isinstance(n, ast.ClassDef) and n.name == "Model")
        m_forward = next(n for n in m_model.body if isinstance(n, ast.FunctionDef) and n.name == "forward")
        _, node, where, new = _edits(m_forward)[i]
        if where == "self":
            _Swap(node, new).visit(m_forward)
        else:
            setattr(node, where, new)
        try:
            out.append((f"mutant: {label}", ast.unparse(ast.fix_missing_locations(mutated))))
        except Exception:  # noqa: BLE001 - an edit ast cannot print is not a mutant
            continue
    return out


def _build(source: str, state: dict[str, torch.Tensor], device: str, seed: int) -> Any:
    """Model of `source` with the reference's weights (a mutant computes with the same parameters)."""
    _, m = _reference(source, device, seed)
    m.load_state_dict(state, strict=False)
    return m


def _reference(reference: str, device: str, seed: int) -> tuple[dict[str, Any], Any]:
    """The problem's namespace and its Model, built as the worker builds the reference (`inputs.build_models`)."""
    ns = _namespace(PopcornJitter())
    exec(compile(reference, "reference.py", "exec"), ns)  # noqa: S102 - isolated worker, by design
    torch.manual_seed(seed)
    return ns, ns["Model"](*ns["get_init_inputs"]()).to(device).eval()


class _Answers:
    """The wrong answers to put through the comparison, computed on demand for a set of inputs."""

    def __init__(self, reference: str, ref: Any, device: str, seed: int) -> None:
        self.ref, self.device, self.seed = ref, device, seed
        self.state = {k: v.detach() for k, v in ref.state_dict().items()}
        self.sources = dict(mutants(reference))
        self.models: dict[str, Any] = {}  # only the mutants still in play are kept (each holds a copy of the weights)

    def labels(self) -> list[str]:
        return ["zeros", "another input's answer", "the input itself", *self.sources]

    def get(self, label: str, inputs: list[Any], others: list[Any], out: Any) -> Any:
        if label == "zeros":
            return [torch.zeros_like(t) for t in tensors(out)]
        if label == "another input's answer":
            return self.ref(*clone(others))
        if label == "the input itself":
            return _input_as_output(inputs, out)
        if label not in self.models:
            self.models[label] = _build(self.sources[label], self.state, self.device, self.seed)
        return self.models[label](*clone(inputs))

    def accepted(self, label: str, inputs: list[Any], others: list[Any], out: Any, atol: float, rtol: float) -> bool:
        try:
            got = self.get(label, inputs, others, out)
        except Exception:  # noqa: BLE001 - a wrong answer that cannot be computed (a mutant that fails) is not accepted
            return False
        return got is not None and judge(out, got, atol, rtol)[0]

    def keep_only(self, labels: list[str]) -> None:
        self.models = {k: v for k, v in self.models.items() if k in labels}


def strength_entry(reference: str, device: str, seed: int, atol: float, rtol: float) -> CheckStrength:
    """The problem's check strength (see the module's docstring)."""
    ns, ref = _reference(reference, device, seed)
    with torch.no_grad():
        nominal = make_inputs(ns, PopcornJitter(), seed, False, device)
        other = make_inputs(ns, PopcornJitter(), seed + OTHER_SEED_OFFSET, False, device)
        ref_out = ref(*clone(nominal))
        answers = _Answers(reference, ref, device, seed)
        passes = []
        for lab in answers.labels():
            if answers.accepted(lab, nominal, other, ref_out, atol, rtol):
                passes.append(lab)
            answers.keep_only(passes)
        if not passes:
            return CheckStrength()
        killed: dict[str, set[str]] = {}
        for name in TRANSFORMS:
            inputs, others = transformed(nominal, name, seed, device), transformed(other, name, seed + 1, device)
            out = ref(*clone(inputs))
            if usable(out, ref_out):
                tol = scaled_atol(atol, out, ref_out)
                killed[name] = {lab for lab in passes if not answers.accepted(lab, inputs, others, out, tol, rtol)}
    # A mutant accepted under every input tried is the same function within tolerance (a dropped `+ eps`), not a wrong
    # answer. Zeros, another input's answer and the input itself are wrong by construction whatever passes them: still
    # accepted, they leave the check weak (L1Norm's ~1e-4 outputs under atol 1e-2 accept zeros on any input).
    equivalent = [lab for lab in passes if lab in answers.sources and killed and not any(lab in k for k in killed.values())]
    wrong = [lab for lab in passes if lab not in equivalent]
    chosen: list[str] = []
    left = set(wrong)
    while left and (best := max(killed, key=lambda n: len(killed[n] & left), default=None)) and killed[best] & left:
        chosen.append(best)
        left -= killed[best]
    return CheckStrength(passes=tuple(wrong), equivalent=tuple(equivalent), strengthen=tuple(chosen),
                         still_pass=tuple(lab for lab in wrong if lab in left))


def _input_as_output(inputs: list[Any], out: Any) -> list[torch.Tensor] | None:
    """The first input tensor shaped like each output tensor; None when some output has no such input."""
    flat = tensors(inputs)
    got = []
    for t in tensors(out):
        match = next((x for x in flat if x.shape == t.shape and x.dtype == t.dtype), None)
        if match is None:
            return None
        got.append(match.clone())
    return got
