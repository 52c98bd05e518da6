"""What each GPU can do at most: the datasheet peaks a speed-of-light bound divides by, named once.

Every figure is dense (no 2:4 sparsity: datasheets quote tensor rates "with sparsity", twice these) and
at the clock the vendor rates it at: `boost_mhz` for the CUDA cores and L2, `tensor_mhz` for the tensor
cores, which Hopper's datasheets rate at a lower clock than the boost (their dense rate / (SMs x 4,096
FLOP per SM per clock, the Hopper whitepaper's width): 1,830 MHz on the SXM parts, 1,620 on the PCIe
card, 1,545 on NVL, against boosts of 1,980, 1,755 and 1,785). `Peaks.at_clock` scales each figure by
a recorded SM clock below the clock it is rated at; DRAM bandwidth has its own clock and is never scaled. A GPU not
in the table gets no bound: `peaks_for` says why instead of guessing.

Sources (each row's `source` names its own):
- [h100] NVIDIA H100 Tensor Core GPU datasheet (SXM5 and PCIe columns) and the Hopper architecture
  whitepaper: FP32 = SMs x 128 lanes x 2 x boost clock; tensor rates are the "with sparsity" figures / 2.
- [h200] NVIDIA H200 Tensor Core GPU datasheet: the GH100 die and clocks of the H100 SXM, HBM3e 4.8 TB/s.
- [nvl] NVIDIA H100 NVL and H200 NVL product briefs (per GPU).
- [a100] NVIDIA A100 Tensor Core GPU datasheet (40/80 GB, SXM4 and PCIe) and the Ampere (GA100) whitepaper.
- [l40s] NVIDIA L40S datasheet; L2 from NVIDIA's Ada Lovelace architecture whitepaper (AD102).
- [ada] NVIDIA Ada Lovelace architecture whitepaper, appendix table for the GeForce RTX 4090.
- [b200] NVIDIA HGX B200 datasheet (eight GPUs; per GPU here: FP32 600/8 TF, TF32 18/8/2 PF, FP16/BF16
  36/8/2 PF, FP8 72/8/2 PF, HBM3e 64/8 TB/s).
- L2 size: the same documents where they give it; ⚠ where they do not, the note says what was used.
- L2 bandwidth: no datasheet gives it. The A100 whitepaper gives 5,120 bytes per clock for GA100's L2;
  every part here is assumed no wider per die, times its boost clock (⚠ an estimate that errs high, so a
  floor drawn from it errs low: microbenchmarks measure 5-7 TB/s on H100).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from .gpus import gpu_name

L2_BYTES_PER_CLOCK = 5120  # A100 whitepaper: GA100's L2 read bandwidth per clock (see the module's sources)
TB = 1e12  # the tables are decimal, as vendors write them: TB/s, TFLOP/s


@dataclass(frozen=True)
class Peaks:
    """One GPU's peaks, in FLOP/s and bytes/s; None where the part has no such unit (an A100 has no FP8)."""

    name: str  # "H100 SXM5 80GB"
    boost_mhz: int  # the clock the compute figures are rated at
    fp32: float  # CUDA cores, FMA = 2 FLOP
    tf32: float  # tensor cores, dense
    bf16: float  # tensor cores, dense, FP32 accumulate
    fp16: float
    fp8: float | None
    dram: float  # bytes/s
    l2_bytes: int
    l2_bw: float  # bytes/s (an estimate: see the module's sources)
    source: str
    fp16_acc16: float | None = None  # GeForce parts run FP16 with FP16 accumulate at twice the FP32-accumulate rate
    dies: int = 1
    tensor_mhz: int | None = None  # the clock the tensor rates are rated at, where lower than `boost_mhz`
    note: str = ""  # what was assumed where a source is silent

    def tensor(self, dtype: str) -> float | None:
        """The dense tensor-core rate for one input precision ("tf32", "bf16", "fp16", "fp8")."""
        return {"tf32": self.tf32, "bf16": self.bf16, "fp16": self.fp16, "fp8": self.fp8}.get(dtype)

    @property
    def fastest_16bit(self) -> float:
        """The fastest dense tensor rate at 16 bits or more: what no honest kernel of a 16/32-bit problem beats
        (8-bit inputs cannot pass a 1e-2 tolerance; sparsity needs zeros the inputs do not have)."""
        return max(x for x in (self.tf32, self.bf16, self.fp16, self.fp16_acc16) if x is not None)

    def at_clock(self, sm_mhz: int | None) -> Peaks:
        """These peaks at a recorded SM clock: the CUDA cores and L2 scale by it below `boost_mhz`, the tensor cores
        below `tensor_mhz` (their own rated clock); DRAM does not. A figure is never scaled above its rated value
        (a datasheet's rate is the most the part sustains), and an unknown clock leaves all of them rated."""
        if sm_mhz is None or sm_mhz <= 0 or sm_mhz >= self.boost_mhz:
            return self
        f = sm_mhz / self.boost_mhz
        t = min(1.0, sm_mhz / (self.tensor_mhz or self.boost_mhz))

        def s(x: float | None) -> float | None:
            return None if x is None else x * t
        return replace(self, fp32=self.fp32 * f, tf32=self.tf32 * t, bf16=self.bf16 * t, fp16=self.fp16 * t, fp8=s(self.fp8),
                       fp16_acc16=s(self.fp16_acc16), l2_bw=self.l2_bw * f)


def _l2(mhz: int, dies: int = 1) -> float:
    return L2_BYTES_PER_CLOCK * mhz * 1e6 * dies


def _gpu(name: str, mhz: int, fp32: float, tf32: float, b16: float, fp8: float | None, dram_tb: float, l2_mb: float,
         source: str, **more: object) -> Peaks:
    dies = int(more.pop("dies", 1))  # type: ignore[call-overload]
    return Peaks(name, mhz, fp32 * TB, tf32 * TB, b16 * TB, b16 * TB, None if fp8 is None else fp8 * TB, dram_tb * TB,
                 int(l2_mb * 1024 * 1024), _l2(mhz, dies), source, dies=dies, **more)  # type: ignore[arg-type]


_H100 = _gpu("H100 SXM5 80GB", 1980, 66.9, 494.7, 989.4, 1978.9, 3.35, 50, "[h100] SXM5 column", tensor_mhz=1830)
TABLE: dict[str, Peaks] = {
    "H100 SXM": _H100,
    "H100 PCIe": _gpu("H100 PCIe 80GB", 1755, 51.2, 378.0, 756.0, 1513.0, 2.0, 50, "[h100] PCIe column", tensor_mhz=1620),
    "H100 NVL": _gpu("H100 NVL 94GB", 1785, 60.0, 417.5, 835.5, 1670.5, 3.9, 50, "[nvl] H100 NVL", tensor_mhz=1545),
    "H200 SXM": replace(_H100, name="H200 SXM 141GB", dram=4.8 * TB, source="[h200] H200 SXM column"),
    "H200 NVL": _gpu("H200 NVL 141GB", 1785, 60.0, 417.5, 835.5, 1670.5, 4.8, 50, "[nvl] H200 NVL", tensor_mhz=1545),
    "A100 SXM 80": _gpu("A100 SXM4 80GB", 1410, 19.5, 156.0, 312.0, None, 2.039, 40, "[a100] 80GB SXM column"),
    "A100 SXM 40": _gpu("A100 SXM4 40GB", 1410, 19.5, 156.0, 312.0, None, 1.555, 40, "[a100] 40GB SXM column"),
    "A100 PCIe 80": _gpu("A100 PCIe 80GB", 1410, 19.5, 156.0, 312.0, None, 1.935, 40, "[a100] 80GB PCIe column"),
    "A100 PCIe 40": _gpu("A100 PCIe 40GB", 1410, 19.5, 156.0, 312.0, None, 1.555, 40, "[a100] 40GB PCIe column"),
    "L40S": _gpu("L40S", 2520, 91.6, 183.0, 362.05, 733.0, 0.864, 96, "[l40s]",
                 note="L2: the datasheet gives none; 96 MB, the AD102 figure of NVIDIA's Ada whitepaper (⚠ assumed for the L40S)"),
    "RTX 4090": _gpu("GeForce RTX 4090", 2520, 82.6, 82.6, 165.2, 330.3, 1.008, 72, "[ada] RTX 4090 column",
                     fp16_acc16=330.3 * TB),
    "B200": _gpu("B200", 1980, 75.0, 1125.0, 2250.0, 4500.0, 8.0, 126, "[b200] per GPU", dies=2,
                 note="HGX B200 figures. L2: NVIDIA publishes none; third parties give 65.5 to 126 MB, and the larger is used (⚠ unconfirmed)"),
}

_MEM_GB = re.compile(r"(\d+)\s?GB", re.IGNORECASE)


@dataclass(frozen=True)
class Match:
    """A device name resolved to a row of the table, or why it was not: `peaks` is None exactly then."""

    peaks: Peaks | None
    why: str  # what was assumed for a name that does not say everything, or why there is no row


def peaks_for(device: str | None) -> Match:
    """The table's row for a device name as torch, nvidia-smi or a harness wrote it."""
    parsed = gpu_name(device)
    if parsed is None:
        return Match(None, "the GPU was not recorded, so there is no hardware bound")
    model, form = parsed.model, parsed.form
    sizes = [int(m) for m in _MEM_GB.findall(device or "")]
    if model == "A100":
        size = sizes[0] if sizes and sizes[0] in (40, 80) else None
        key = f"A100 {form or 'SXM'} {size or 80}"
        said = [] if form else ["SXM4 (the name gives no form factor)"]
        said += [] if size else ["80 GB (the name gives no memory size)"]
        return Match(TABLE.get(key), f"assumed {' and '.join(said)}" if said else "")
    if model in ("H100", "H200"):
        if form is None:  # torch names the SXM parts "NVIDIA H100 80GB HBM3", "NVIDIA H200"; PCIe and NVL cards say so
            return Match(TABLE[f"{model} SXM"], "")
        found = TABLE.get(f"{model} {form}")
        return Match(found, "" if found else f"no peaks known for the {model} {form}")
    if model in TABLE:
        return Match(TABLE[model], "")
    return Match(None, f"no peaks known for {parsed.label}: the table in reporter/core/peaks.py lists "
                       f"{', '.join(sorted({p.name for p in TABLE.values()}))}")
