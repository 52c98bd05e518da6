"""What a check runs on: the problem and kernel loaded KernelBench's way, the models and their inputs.

Standard library and torch only: imported by the isolated worker, the only place trace content runs.
"""

from __future__ import annotations

import hashlib
import math
import random
from typing import Any

import torch


class PopcornJitter:
    """The `popcorn_pri` object problems call inside get_inputs() to jitter their shapes.

    Trial 0 (and every nominal trial) returns values unchanged. A jittered trial returns an integer
    within ±fraction of `value`, rounded to a multiple of `align`, at least max(minimum, align), and
    the same answer for the same arguments within one trial, so related dimensions stay consistent.
    """

    def __init__(self, fraction: float = 0.25) -> None:
        self.fraction = fraction
        self.trial_seed: int | None = None
        self.calls = 0  # how often the problem asked: zero means it defines no jitter hook

    def set_trial(self, seed: int | None) -> None:
        self.trial_seed = seed

    def jitter_int(self, value: int, align: int = 1, minimum: int = 1) -> int:
        self.calls += 1
        if self.trial_seed is None:
            return value
        key = f"{self.trial_seed}:{value}:{align}:{minimum}".encode()
        rng = random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "little"))
        lo, hi = math.ceil(value * (1 - self.fraction)), math.floor(value * (1 + self.fraction))
        pick = rng.randint(min(lo, hi), max(lo, hi))
        pick = max(align, round(pick / align) * align)
        pick = max(pick, minimum, align)
        # rounding to `align` may leave the ±fraction band: step back inside it when possible
        while pick > value * (1 + self.fraction) and pick - align >= max(minimum, align):
            pick -= align
        return int(pick)


def _namespace(jitter: PopcornJitter) -> dict[str, Any]:
    return {"__name__": "reporter_problem", "__builtins__": __builtins__, "popcorn_pri": jitter, "torch": torch}


def exec_reference(reference: str, jitter: PopcornJitter) -> dict[str, Any]:
    """The problem file run KernelBench's way: its namespace, with the jitter hook and torch in it."""
    ns = _namespace(jitter)
    exec(compile(reference, "reference.py", "exec"), ns)  # noqa: S102 - isolated worker, by design
    return ns


def problem_names_used(reference: str, kernel: str) -> list[str]:
    """Names the kernel reads but never defines, that only the problem file defines (e.g. `batch_size`)."""
    import ast
    import builtins

    def defined(tree: ast.Module) -> set[str]:
        names: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
        return names

    try:
        ktree, rtree = ast.parse(kernel), ast.parse(reference)
    except SyntaxError:
        return []
    loads = {n.id for n in ast.walk(ktree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    free = loads - defined(ktree) - set(dir(builtins)) - {"popcorn_pri", "torch"}
    return sorted(free & defined(rtree))


# What the harness takes from the problem file: the kernel's file may rebind these names (a copy of the problem,
# a different `bias_shape`, a smaller `batch_size`), and they must still mean what the problem file says.
PROBLEM_ENTRY_POINTS = ("Model", "get_inputs", "get_init_inputs")


def load(reference: str, kernel: str, jitter: PopcornJitter) -> tuple[dict[str, Any], list[str]]:
    """KernelBench semantics: the kernel runs in a namespace holding the problem file's names.

    The problem file runs twice: once for the kernel's namespace (it can read `batch_size`, as KernelBench
    allows) and once for the harness, whose `Model`, `get_inputs` and `get_init_inputs` are returned in a
    dict of their own. So neither rebinding a name (a file that set `bias_shape = out_channels` made the
    reference fail; `batch_size = 1` would shrink every trial and timed call) nor changing a shared object
    (`Model.forward`, a module-level list of dimensions, the jitter hook) reaches the harness's problem, and
    the kernel's own helper named `Model` stays its own. Also returns the problem-file names the kernel
    depends on: KernelBench accepts such kernels, and the page says so.
    """
    problem = exec_reference(reference, jitter)
    own = exec_reference(reference, PopcornJitter(jitter.fraction))
    own.pop("ModelNew", None)
    exec(compile(kernel, "kernel.py", "exec"), own)  # noqa: S102
    if own.get("ModelNew") is None:
        raise RuntimeError("the kernel defines no ModelNew class")
    harness = {**own, **{name: problem[name] for name in PROBLEM_ENTRY_POINTS if name in problem}}
    return harness, problem_names_used(reference, kernel)


def build_models(ns: dict[str, Any], device: str, seed: int) -> tuple[Any, Any, str]:
    init = ns["get_init_inputs"]()
    torch.manual_seed(seed)
    ref = ns["Model"](*init)
    torch.manual_seed(seed)
    new = ns["ModelNew"](*init)
    ref_sd, new_sd = ref.state_dict(), new.state_dict()
    same = [k for k in new_sd if k in ref_sd and ref_sd[k].shape == new_sd[k].shape]
    if same:
        new.load_state_dict({k: ref_sd[k] for k in same}, strict=False)
    missing = sorted(set(new_sd) - set(same))
    if not new_sd and not ref_sd:
        note = "neither model has parameters"
    elif not missing and len(same) == len(ref_sd):
        note = f"all {len(same)} tensors copied from Model by name"
    else:
        note = (f"{len(same)} of {len(new_sd)} ModelNew tensors copied from Model by name; not matched: "
                f"{', '.join(missing[:8]) or 'none'}; both built from seed {seed}")
    return ref.to(device).eval(), new.to(device).eval(), note


def reference_model(reference: str, jitter: PopcornJitter, device: str, seed: int) -> tuple[dict[str, Any], Any]:
    """The problem's namespace and its reference Model alone, built as `build_models` builds it: for a worker
    that loads no submission (`reftiming`)."""
    ns = exec_reference(reference, jitter)
    init = ns["get_init_inputs"]()
    torch.manual_seed(seed)
    return ns, ns["Model"](*init).to(device).eval()


def to_device(x: Any, device: str) -> Any:
    if isinstance(x, torch.Tensor):
        return x.to(device)
    if isinstance(x, (list, tuple)):
        return type(x)(to_device(v, device) for v in x)
    return x


def clone(x: Any) -> Any:
    if isinstance(x, torch.Tensor):
        return x.clone()
    if isinstance(x, (list, tuple)):
        return type(x)(clone(v) for v in x)
    return x


def tensors(x: Any) -> list[torch.Tensor]:
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in tensors(v)]
    return []


def shape_of(x: Any) -> str:
    if isinstance(x, torch.Tensor):
        return "x".join(str(d) for d in x.shape) or "scalar"
    return type(x).__name__


def make_inputs(ns: dict[str, Any], jitter: PopcornJitter, seed: int, jittered: bool, device: str) -> list[Any]:
    jitter.set_trial(seed if jittered else None)
    torch.manual_seed(seed)
    try:
        # Factory calls in get_inputs() make their tensors on the device: filling KernelBench-sized
        # inputs on the host took longer than everything else in a check.
        with torch.device(device):
            return [to_device(v, device) for v in ns["get_inputs"]()]
    finally:
        jitter.set_trial(None)


def poison_allocator(like: list[torch.Tensor], device: str) -> None:
    """Fill freed blocks of the caching allocator with NaN so outputs the kernel never writes show up."""
    if device != "cuda":
        return
    blocks = []
    for t in like:
        for _ in range(2):
            b = torch.empty(t.numel() * t.element_size() // 4 + 1, dtype=torch.float32, device=device)
            b.fill_(float("nan"))
            blocks.append(b)
    del blocks


def _state_tensors(model: Any) -> list[tuple[Any, str, torch.Tensor]]:
    """(module, name, tensor) for every buffer and plain tensor attribute of every submodule: where a model keeps
    state between calls (VanillaRNN's `self.hidden`). Parameters are left out: eval-mode models do not change them,
    and copying them would double a large model's memory."""
    if not isinstance(model, torch.nn.Module):
        return []
    out = []
    for mod in model.modules():
        out += [(mod, name, t) for name, t in mod._buffers.items() if t is not None]
        out += [(mod, name, t) for name, t in vars(mod).items() if isinstance(t, torch.Tensor)]
    return out


class ModelState:
    """A copy of a model's state tensors, to tell whether a call changed them and to put them back."""

    def __init__(self, model: Any) -> None:
        self.saved = [(mod, name, t.detach().clone()) for mod, name, t in _state_tensors(model)]
        self.keys = {(id(mod), name) for mod, name, _ in self.saved}

    def changed(self, model: Any) -> list[str]:
        """Names of the state tensors a call replaced, resized or rewrote, and of tensors it added."""
        out = [name for mod, name, t in self.saved
               if not isinstance(now := getattr(mod, name, None), torch.Tensor) or now.shape != t.shape
               or now.device != t.device or not torch.equal(now, t)]
        out += [name for mod, name, _ in _state_tensors(model) if (id(mod), name) not in self.keys]
        return sorted(set(out))

    def restore(self, model: Any) -> None:
        """Every state tensor back as saved: buffers in place, plain attributes as fresh copies."""
        for mod, name, t in self.saved:
            now = mod._buffers.get(name) if name in mod._buffers else None
            if now is not None and now.shape == t.shape and now.dtype == t.dtype and now.device == t.device:
                now.copy_(t)  # in place: a kernel may hold on to its buffers' storage
            elif name in mod._buffers:
                mod._buffers[name] = t.clone()
            else:
                mod.__dict__[name] = t.clone()
        for mod, name, _ in _state_tensors(model):
            if (id(mod), name) not in self.keys:
                mod.__dict__.pop(name, None)


class FromState:
    """A model that starts every call from the same state: both sides of a comparison of a stateful problem see the
    state the reference started from, however often each was called before (the dynamic checks call the kernel
    more often than the reference)."""

    def __init__(self, model: Any, state: ModelState) -> None:
        self.model, self.state = model, state

    def __call__(self, *args: Any) -> Any:
        self.state.restore(self.model)
        return self.model(*args)


def stateful(ref: Any, new: Any, inputs: list[Any]) -> tuple[list[str], Any, Any]:
    """Which state tensors the reference changes in one call (empty: none), and the two models to compare: each
    started from its state as built, when the reference keeps state across calls; as they are otherwise."""
    before = ModelState(ref)
    try:
        ref(*clone(inputs))
    except Exception:  # noqa: BLE001 - a reference that fails says so in the first trial, as "the reference itself fails"
        return [], ref, new
    names = before.changed(ref)
    before.restore(ref)
    if not names:
        return [], ref, new
    return names, FromState(ref, before), FromState(new, ModelState(new))
