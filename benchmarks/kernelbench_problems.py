"""26 KernelBench level-1/2 problems with a hand-written load_inline CUDA kernel each, for the throughput benchmark.

The problem files are written here in KernelBench's exact format (class Model, module-level sizes,
get_inputs(), get_init_inputs()) for real KernelBench problems, named by their KernelBench file, with
the sizes of KernelBench's first release; they are not copies of the repository's files. Every kernel
is a real, distinct extension (one build each): elementwise maps, dimension reductions, a row softmax,
two loss reductions and six level-2 GEMM epilogues.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    level: int
    problem_id: int
    file: str
    reference: str
    kernel: str


HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
KHEAD = "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"


def _problem(doc: str, init_sig: str, init_body: str, forward_sig: str, forward: str, sizes: str, inputs: str,
             init_inputs: str) -> str:
    init_body = init_body or "        pass\n"
    return (f"{HEAD}\n\nclass Model(nn.Module):\n    \"\"\"\n    {doc}\n    \"\"\"\n"
            f"    def __init__(self{init_sig}):\n        super(Model, self).__init__()\n{init_body}\n"
            f"    def forward(self, {forward_sig}) -> torch.Tensor:\n        return {forward}\n\n"
            f"{sizes}\n\n\ndef get_inputs():\n{inputs}\n\n\ndef get_init_inputs():\n    return {init_inputs}\n")


def _kernel(fn: str, cuda: str, decl: str, init_sig: str, init_body: str, forward_sig: str, forward: str) -> str:
    return (f"{KHEAD}\ncuda_source = r\"\"\"\n#include <torch/extension.h>\n#include <cuda_runtime.h>\n#include <c10/cuda/CUDAException.h>\n{cuda}\"\"\"\n\n"
            f"cpp_source = \"{decl}\"\n\n"
            f"{fn}_ext = load_inline(name=\"{fn}_ext\", cpp_sources=cpp_source, cuda_sources=cuda_source,\n"
            f"                      functions=[\"{fn}_forward\"], verbose=False)\n\n\n"
            f"class ModelNew(nn.Module):\n    def __init__(self{init_sig}):\n        super().__init__()\n"
            f"{init_body or '        pass' + chr(10)}\n    def forward(self, {forward_sig}):\n        return {forward}\n")


def _map_cuda(fn: str, expr: str, params: list[str]) -> str:
    """A grid-stride elementwise kernel y = expr(v) with float parameters."""
    pdecl = "".join(f", float {p}" for p in params)
    pargs = "".join(f", {p}" for p in params)
    return f"""
__global__ void {fn}_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n{pdecl}) {{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {{
        const float v = x[i];
        y[i] = {expr};
    }}
}}

torch::Tensor {fn}_forward(torch::Tensor x{pdecl}) {{
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat, "{fn}_forward: x must be a float32 CUDA tensor");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t n = xc.numel();
    if (n == 0) return y;
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 65535);
    {fn}_kernel<<<blocks, threads>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n{pargs});
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}}
"""


def _decl(fn: str, params: list[str], extra: str = "") -> str:
    return f"torch::Tensor {fn}_forward(torch::Tensor x{extra}{''.join(f', float {p}' for p in params)});"


ACT_SIZES = "batch_size = 16\ndim = 16384"
ACT_INPUTS = "    x = torch.randn(batch_size, dim)\n    return [x]"

# (id, file, doc, init params with defaults, reference expression, CUDA expression)
ACTIVATIONS = [
    (19, "19_ReLU.py", "Simple model that performs a ReLU activation.", {}, "torch.relu(x)", "fmaxf(v, 0.f)"),
    (20, "20_LeakyReLU.py", "Simple model that performs a LeakyReLU activation.", {"negative_slope": "0.01"},
     "F.leaky_relu(x, negative_slope=self.negative_slope)", "v > 0.f ? v : v * negative_slope"),
    (21, "21_Sigmoid.py", "Simple model that performs a Sigmoid activation.", {}, "torch.sigmoid(x)",
     "1.f / (1.f + expf(-v))"),
    (22, "22_Tanh.py", "Simple model that performs a Tanh activation.", {}, "torch.tanh(x)", "tanhf(v)"),
    (25, "25_Swish.py", "Simple model that performs a Swish activation.", {}, "x * torch.sigmoid(x)",
     "v / (1.f + expf(-v))"),
    (26, "26_GELU_.py", "Simple model that performs a GELU activation.", {}, "F.gelu(x)",
     "0.5f * v * (1.f + erff(v * 0.70710678118654752f))"),
    (27, "27_SELU_.py", "Simple model that performs a SELU activation.", {}, "torch.selu(x)",
     "1.0507009873554805f * (v > 0.f ? v : 1.6732632423543772f * expm1f(v))"),
    (28, "28_HardSigmoid.py", "Simple model that performs a HardSigmoid activation.", {}, "F.hardsigmoid(x)",
     "fminf(fmaxf((v + 3.f) / 6.f, 0.f), 1.f)"),
    (29, "29_Softplus.py", "Simple model that performs a Softplus activation.", {}, "F.softplus(x)",
     "v > 20.f ? v : log1pf(expf(v))"),
    (30, "30_Softsign.py", "Simple model that performs a Softsign activation.", {}, "x / (1 + torch.abs(x))",
     "v / (1.f + fabsf(v))"),
    (31, "31_ELU.py", "Simple model that performs an ELU activation.", {"alpha": "1.0"},
     "F.elu(x, alpha=self.alpha)", "v > 0.f ? v : alpha * expm1f(v)"),
    (32, "32_HardTanh.py", "Simple model that performs a HardTanh activation.", {},
     "F.hardtanh(x, min_val=-1., max_val=1.)", "fminf(fmaxf(v, -1.f), 1.f)"),
]


def activation(pid: int, file: str, doc: str, params: dict[str, str], ref: str, expr: str) -> Problem:
    fn = "kb_" + file[:-3].lower().rstrip("_")
    sig = "".join(f", {p}: float = {d}" for p, d in params.items())
    body = "".join(f"        self.{p} = {p}\n" for p in params)
    ref_src = _problem(doc, sig, body, "x: torch.Tensor", ref, ACT_SIZES, ACT_INPUTS, "[]")
    call = f"{fn}_ext.{fn}_forward(x{''.join(f', self.{p}' for p in params)})"
    ker = _kernel(fn, _map_cuda(fn, expr, list(params)), _decl(fn, list(params)), sig, body, "x", call)
    return Problem(1, pid, file, ref_src, ker)


def gelu_mingpt() -> Problem:
    fn = "kb_88_mingptnewgelu"
    ref = _problem("Implementation of the GELU activation function currently in Google BERT repo (identical to OpenAI GPT).",
                   "", "", "x", "0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))",
                   "batch_size = 2000\ndim = 2000", "    return [torch.randn(batch_size, dim)]", "[]")
    ref = "import math\n" + ref
    expr = "0.5f * v * (1.f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)))"
    return Problem(1, 88, "88_MinGPTNewGelu.py", ref,
                   _kernel(fn, _map_cuda(fn, expr, []), _decl(fn, []), "", "", "x", f"{fn}_ext.{fn}_forward(x)"))


def scalar_multiply() -> Problem:
    fn = "kb_5_matrix_scalar"
    ref = _problem("Simple model that performs a matrix-scalar multiplication (C = A * s)", "", "",
                   "A: torch.Tensor, s: float", "A * s", "M = 16384\nN = 4096",
                   "    A = torch.randn(M, N)\n    s = 3.14\n    return [A, s]", "[]")
    return Problem(1, 5, "5_Matrix_scalar_multiplication.py", ref,
                   _kernel(fn, _map_cuda(fn, "v * s", ["s"]), _decl(fn, ["s"]), "", "", "A, s",
                           f"{fn}_ext.{fn}_forward(A, float(s))"))


REDUCE_CUDA = """
__global__ void {fn}_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t outer, int64_t r, int64_t inner) {{
    const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= outer * inner) return;
    const int64_t o = idx / inner, i = idx % inner;
    const float* p = x + o * r * inner + i;
    float acc = {init};
    for (int64_t k = 0; k < r; ++k) {{
        const float v = p[k * inner];
        acc = {step};
    }}
    y[idx] = {final};
}}

torch::Tensor {fn}_forward(torch::Tensor x, int64_t dim) {{
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat, "{fn}_forward: x must be a float32 CUDA tensor");
    auto xc = x.contiguous();
    if (dim < 0) dim += xc.dim();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= xc.size(d);
    for (int64_t d = dim + 1; d < xc.dim(); ++d) inner *= xc.size(d);
    const int64_t r = xc.size(dim);
    auto sizes = xc.sizes().vec();
    {shape}
    auto y = torch::empty(sizes, xc.options());
    if (outer * inner == 0) return y;
    const int threads = 256;
    {fn}_kernel<<<(unsigned)((outer * inner + threads - 1) / threads), threads>>>(xc.data_ptr<float>(), y.data_ptr<float>(), outer, r, inner);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}}
"""

# (id, file, doc, reference expression, init, step, final, keepdim)
REDUCTIONS = [
    (47, "47_Sum_reduction_over_a_dimension.py", "Simple model that performs sum reduction over a specified dimension.",
     "torch.sum(x, dim=self.dim, keepdim=True)", "0.f", "acc + v", "acc", True),
    (48, "48_Mean_reduction_over_a_dimension.py", "Simple model that performs mean reduction over a specific dimension.",
     "torch.mean(x, dim=self.dim)", "0.f", "acc + v", "acc / (float)r", False),
    (49, "49_Max_reduction_over_a_dimension.py", "Simple model that performs Max reduction over a specific dimension.",
     "torch.max(x, dim=self.dim)[0]", "-INFINITY", "fmaxf(acc, v)", "acc", False),
]


def reduction(pid: int, file: str, doc: str, ref: str, init: str, step: str, final: str, keepdim: bool) -> Problem:
    fn = f"kb_{pid}_reduce"
    ref_src = _problem(doc, ", dim: int", "        self.dim = dim\n", "x: torch.Tensor", ref,
                       "batch_size = 16\ndim1 = 256\ndim2 = 256", "    x = torch.randn(batch_size, dim1, dim2)\n    return [x]",
                       "[1]")
    shape = "sizes[dim] = 1;" if keepdim else "sizes.erase(sizes.begin() + dim);"
    cuda = REDUCE_CUDA.format(fn=fn, init=init, step=step, final=final, shape=shape)
    ker = _kernel(fn, cuda, f"torch::Tensor {fn}_forward(torch::Tensor x, int64_t dim);", ", dim: int",
                  "        self.dim = dim\n", "x", f"{fn}_ext.{fn}_forward(x, self.dim)")
    return Problem(1, pid, file, ref_src, ker)


SOFTMAX_CUDA = """
__device__ float block_reduce(float v, float* shared, bool is_max) {
    for (int off = 16; off > 0; off >>= 1) {
        const float o = __shfl_down_sync(0xffffffff, v, off);
        v = is_max ? fmaxf(v, o) : v + o;
    }
    if ((threadIdx.x & 31) == 0) shared[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        float acc = shared[0];
        for (int w = 1; w < (int)(blockDim.x >> 5); ++w) acc = is_max ? fmaxf(acc, shared[w]) : acc + shared[w];
        shared[0] = acc;
    }
    __syncthreads();
    const float out = shared[0];
    __syncthreads();
    return out;
}

__global__ void kb_23_softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    __shared__ float shared[32];
    const float* row = x + blockIdx.x * cols;
    float* out = y + blockIdx.x * cols;
    float m = -INFINITY;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
    m = block_reduce(m, shared, true);
    float s = 0.f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += expf(row[c] - m);
    s = block_reduce(s, shared, false);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) out[c] = expf(row[c] - m) / s;
}

torch::Tensor kb_23_softmax_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kFloat && x.dim() == 2, "softmax: 2-D float32 CUDA tensor expected");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    if (xc.numel() == 0) return y;
    kb_23_softmax_kernel<<<(unsigned)xc.size(0), 512>>>(xc.data_ptr<float>(), y.data_ptr<float>(), xc.size(1));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""


def softmax() -> Problem:
    ref = _problem("Simple model that performs a Softmax activation.", "", "", "x: torch.Tensor",
                   "torch.softmax(x, dim=1)", ACT_SIZES, ACT_INPUTS, "[]")
    ker = _kernel("kb_23_softmax", SOFTMAX_CUDA, "torch::Tensor kb_23_softmax_forward(torch::Tensor x);", "", "", "x",
                  "kb_23_softmax_ext.kb_23_softmax_forward(x)")
    return Problem(1, 23, "23_Softmax.py", ref, ker)


LOSS_CUDA = """
__global__ void {fn}_kernel(const float* __restrict__ p, const float* __restrict__ t, double* __restrict__ acc, int64_t n) {{
    __shared__ double partial[256];
    double s = 0.0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {{
        const float a = p[i], b = t[i];
        s += (double)({expr});
    }}
    partial[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {{
        if ((int)threadIdx.x < w) partial[threadIdx.x] += partial[threadIdx.x + w];
        __syncthreads();
    }}
    if (threadIdx.x == 0) atomicAdd(acc, partial[0]);
}}

torch::Tensor {fn}_forward(torch::Tensor predictions, torch::Tensor targets) {{
    TORCH_CHECK(predictions.is_cuda() && predictions.scalar_type() == at::kFloat, "{fn}: float32 CUDA predictions expected");
    TORCH_CHECK(predictions.sizes() == targets.sizes(), "{fn}: predictions and targets differ in shape");
    auto p = predictions.contiguous();
    auto t = targets.to(at::kFloat).contiguous();
    auto acc = torch::zeros({{1}}, p.options().dtype(at::kDouble));
    const int64_t n = p.numel();
    const int blocks = (int)std::min<int64_t>((n + 255) / 256, 1024);
    if (n > 0) {{
        {fn}_kernel<<<blocks, 256>>>(p.data_ptr<float>(), t.data_ptr<float>(), acc.data_ptr<double>(), n);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }}
    return (acc / (double)n).to(at::kFloat).squeeze(0);
}}
"""


def loss(pid: int, file: str, doc: str, ref: str, expr: str, shape: str, targets: str) -> Problem:
    fn = f"kb_{pid}_loss"
    ref_src = _problem(doc, "", "", "predictions, targets", ref, f"batch_size = 128\ninput_shape = {shape}\ndim = 1",
                       f"    return [torch.randn(batch_size, *input_shape), {targets}]", "[]")
    ker = _kernel(fn, LOSS_CUDA.format(fn=fn, expr=expr),
                  f"torch::Tensor {fn}_forward(torch::Tensor predictions, torch::Tensor targets);", "", "",
                  "predictions, targets", f"{fn}_ext.{fn}_forward(predictions, targets)")
    return Problem(1, pid, file, ref_src, ker)


LOSSES = [
    (94, "94_MSELoss.py", "A model that computes the Mean Squared Error loss for regression tasks.",
     "torch.mean((predictions - targets) ** 2)", "(a - b) * (a - b)", "(4096, )", "torch.randn(batch_size, *input_shape)"),
    (100, "100_HingeLoss.py", "A model that computes Hinge Loss for binary classification tasks.",
     "torch.mean(torch.clamp(1 - predictions * targets, min=0))", "fmaxf(1.f - a * b, 0.f)", "(1,)",
     "torch.randint(0, 2, (batch_size, 1)).float() * 2 - 1"),
]

# Level 2: torch's GEMM, then the rest of the problem fused into one elementwise kernel.
# (id, file, doc, init params (name, value), linear attribute, torch steps after the GEMM, CUDA expression, sizes)
EPILOGUES = [
    (12, "12_Gemm_Multiply_LeakyReLU.py", "Simple model that performs a Gemm, multiplies the result, and applies LeakyReLU.",
     [("multiplier", "2.0"), ("negative_slope", "0.1")], "gemm",
     "F.leaky_relu(self.gemm(x) * self.multiplier, self.negative_slope)",
     "(v * multiplier) > 0.f ? v * multiplier : v * multiplier * negative_slope", (128, 1024, 512)),
    (9, "9_Matmul_Subtract_Multiply_ReLU.py", "Model that performs a matrix multiplication, subtraction, multiplication, and ReLU activation.",
     [("subtract_value", "2.0"), ("multiply_value", "1.5")], "linear",
     "torch.relu((self.linear(x) - self.subtract_value) * self.multiply_value)",
     "fmaxf((v - subtract_value) * multiply_value, 0.f)", (128, 10, 5)),
    (63, "63_Gemm_ReLU_Divide.py", "Simple model that performs a matrix multiplication, applies ReLU, and divides by a constant.",
     [("divisor", "2.0")], "linear", "torch.relu(self.linear(x)) / self.divisor", "fmaxf(v, 0.f) / divisor",
     (128, 1024, 512)),
    (29, "29_Matmul_Mish_Mish.py", "Simple model that performs a matrix multiplication, applies Mish, and applies Mish again.",
     [], "linear", "F.mish(F.mish(self.linear(x)))", "mish(mish(v))", (128, 10, 20)),
    (40, "40_Matmul_Scaling_ResidualAdd.py", "A model that performs a matrix multiplication, scaling, and residual addition.",
     [("scaling_factor", "0.5")], "matmul", "self.matmul(x) * self.scaling_factor + self.matmul(x).detach()",
     "v * scaling_factor + v", (128, 64, 128)),
]

MISH = """
__device__ __forceinline__ float mish(float v) {
    const float sp = v > 20.f ? v : log1pf(expf(v));
    return v * tanhf(sp);
}
"""


def epilogue(pid: int, file: str, doc: str, params: list[tuple[str, str]], attr: str, ref: str, expr: str,
             sizes: tuple[int, int, int]) -> Problem:
    fn = f"kb_l2_{pid}_epilogue"
    names = [p for p, _ in params]
    sig = ", in_features, out_features" + "".join(f", {p}" for p in names)
    body = f"        self.{attr} = nn.Linear(in_features, out_features)\n" + "".join(f"        self.{p} = {p}\n" for p in names)
    size_src = f"batch_size = {sizes[0]}\nin_features = {sizes[1]}\nout_features = {sizes[2]}\n" + \
        "".join(f"{p} = {v}\n" for p, v in params)
    ref_src = _problem(doc, sig, body, "x", ref, size_src.rstrip(), "    return [torch.randn(batch_size, in_features)]",
                       "[" + ", ".join(["in_features", "out_features", *names]) + "]")
    cuda = (MISH if "mish" in expr else "") + _map_cuda(fn, expr, names)
    call = f"{fn}_ext.{fn}_forward(self.{attr}(x){''.join(f', float(self.{p})' for p in names)})"
    return Problem(2, pid, file, ref_src, _kernel(fn, cuda, _decl(fn, names), sig, body, "x", call))


GEMM_SUM_CUDA = """
// out[b] = scaling / 2 * sum_h sum_k x[b, k] * w[h, k]: the GEMM, divide, row sum and scaling in one pass.
__global__ void kb_l2_14_kernel(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ out,
                                int64_t batch, int64_t in, int64_t hidden, float scaling) {
    const int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= batch) return;
    float total = 0.f;
    for (int64_t h = 0; h < hidden; ++h) {
        float dot = 0.f;
        for (int64_t k = 0; k < in; ++k) dot += x[b * in + k] * w[h * in + k];
        total += dot / 2.f;
    }
    out[b] = total * scaling;
}

torch::Tensor kb_l2_14_forward(torch::Tensor x, torch::Tensor w, float scaling) {
    TORCH_CHECK(x.is_cuda() && w.is_cuda() && x.scalar_type() == at::kFloat, "kb_l2_14: float32 CUDA tensors expected");
    auto xc = x.contiguous();
    auto wc = w.contiguous();
    auto out = torch::empty({xc.size(0), 1}, xc.options());
    if (xc.size(0) == 0) return out;
    kb_l2_14_kernel<<<(unsigned)((xc.size(0) + 127) / 128), 128>>>(xc.data_ptr<float>(), wc.data_ptr<float>(),
        out.data_ptr<float>(), xc.size(0), xc.size(1), wc.size(0), scaling);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""


def gemm_divide_sum() -> Problem:
    sig = ", input_size, hidden_size, scaling_factor"
    body = ("        self.weight = nn.Parameter(torch.randn(hidden_size, input_size))\n"
            "        self.scaling_factor = scaling_factor\n")
    ref = _problem("Model that performs a matrix multiplication, division, summation, and scaling.", sig, body, "x",
                   "torch.sum(torch.matmul(x, self.weight.T) / 2, dim=1, keepdim=True) * self.scaling_factor",
                   "batch_size = 128\ninput_size = 10\nhidden_size = 20\nscaling_factor = 1.5",
                   "    return [torch.randn(batch_size, input_size)]", "[input_size, hidden_size, scaling_factor]")
    ker = _kernel("kb_l2_14", GEMM_SUM_CUDA, "torch::Tensor kb_l2_14_forward(torch::Tensor x, torch::Tensor w, float scaling);",
                  sig, body, "x", "kb_l2_14_ext.kb_l2_14_forward(x, self.weight, float(self.scaling_factor))")
    return Problem(2, 14, "14_Gemm_Divide_Sum_Scaling.py", ref, ker)


def problems() -> list[Problem]:
    out = [activation(*a) for a in ACTIVATIONS] + [gelu_mingpt(), scalar_multiply(), softmax()]
    out += [reduction(*r) for r in REDUCTIONS] + [loss(*x) for x in LOSSES]
    out += [epilogue(*e) for e in EPILOGUES] + [gemm_divide_sum()]
    return out
