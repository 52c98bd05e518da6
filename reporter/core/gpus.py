"""GPU device names reduced to what matters for comparing timings: the model and the form factor.

Pure string work on names as torch, nvidia-smi or a harness wrote them; `checks.gpu_relation` is the rule
that compares two of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# What a device name says besides the model: vendor and brand words, memory size and type. The form
# factor is kept apart: an H100 PCIe and an H100 SXM differ materially in clocks and memory bandwidth.
_GPU_NOISE = re.compile(r"\b(NVIDIA|GEFORCE|TESLA|QUADRO|\d+\s?GB|HBM\d?E?|GDDR\d?X?)\b")
_GPU_FORM = re.compile(r"\b(SXM\d?|PCIE|NVL)\b")
_FORM_LABEL = {"SXM": "SXM", "PCIE": "PCIe", "NVL": "NVL"}


@dataclass(frozen=True)
class GpuName:
    """A device name reduced to what matters for comparing timings: `NVIDIA A100-SXM4-80GB` -> A100, SXM."""

    model: str  # "H100", "RTX 4090"
    form: str | None  # "SXM", "PCIe" or "NVL" when the name says; torch's name for an SXM H100 does not

    @property
    def label(self) -> str:
        return f"{self.model} {self.form}" if self.form else self.model


def gpu_name(name: str | None) -> GpuName | None:
    """The model and form factor in a device name (`torch.cuda.get_device_name`, `nvidia-smi`); None when empty."""
    if not name or not name.strip():
        return None
    text = re.sub(r"[-_]", " ", name.upper())
    forms = {re.sub(r"\d", "", f) for f in _GPU_FORM.findall(text)}
    words = _GPU_NOISE.sub(" ", _GPU_FORM.sub(" ", text)).split()
    if not words:
        return None
    return GpuName(" ".join(words), _FORM_LABEL[forms.pop()] if len(forms) == 1 else None)


def gpu_model(name: str | None) -> str | None:
    """The model in a GPU name: `NVIDIA H100 80GB HBM3` -> `H100`, `NVIDIA L40S` -> `L40S`."""
    parsed = gpu_name(name)
    return parsed.model if parsed else None
