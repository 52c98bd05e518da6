import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// One block per row: each thread sums a contiguous chunk, the block scans the chunk sums, then each
// thread writes its chunk's exclusive prefix sums.
__global__ void scan_rows(const float* __restrict__ x, float* __restrict__ y, int cols) {
    extern __shared__ float sums[];
    const float* xr = x + (long long)blockIdx.x * cols;
    float* yr = y + (long long)blockIdx.x * cols;
    int per = (cols + blockDim.x - 1) / blockDim.x;
    int start = threadIdx.x * per;
    int end = min(start + per, cols);
    float local = 0.0f;
    for (int j = start; j < end; ++j) local += xr[j];
    sums[threadIdx.x] = local;
    __syncthreads();
    for (int off = 1; off < blockDim.x; off <<= 1) {
        float v = threadIdx.x >= off ? sums[threadIdx.x - off] : 0.0f;
        __syncthreads();
        sums[threadIdx.x] += v;
        __syncthreads();
    }
    float run = threadIdx.x ? sums[threadIdx.x - 1] : 0.0f;
    for (int j = start; j < end; ++j) {
        run += xr[j];
        yr[j] = run;
    }
}

torch::Tensor exclusive_cumsum(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(dim == x.dim() - 1, "only the last dimension is supported");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    int cols = xc.size(-1);
    int rows = xc.numel() / cols;
    int threads = 1024;
    scan_rows<<<rows, threads, threads * sizeof(float)>>>(xc.data_ptr<float>(), y.data_ptr<float>(), cols);
    TORCH_CHECK(cudaGetLastError() == cudaSuccess, "kernel launch failed");
    return y;
}
"""

cpp_source = "torch::Tensor exclusive_cumsum(torch::Tensor x, int64_t dim);"

alpha_cumsum_ext = load_inline(name="alpha_cumsum", cpp_sources=cpp_source, cuda_sources=cuda_source, functions=["exclusive_cumsum"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super(ModelNew, self).__init__()
        self.dim = dim

    def forward(self, x):
        return alpha_cumsum_ext.exclusive_cumsum(x, self.dim)
