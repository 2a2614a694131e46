// bench_fused_peers.cuh — the "unfused" peer of `qgemm bench fused`: the
// separate simple kernels an eager framework launches for the same composite
// (the normalization or activation writes a bf16 tensor, a row-amax kernel
// reads it back for the scale, an elementwise kernel reads it again to
// quantize). Plain, one-element-per-thread kernels, as eager PyTorch's are
// before its vectorization; torch eager / torch.compile peers come from the
// Python bench (docs/fused.md).
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "core/numeric.h"

namespace qgemm::tools::peers {

__device__ __forceinline__ float bf(const __nv_bfloat16 v) { return __bfloat162float(v); }

__device__ __forceinline__ float block_sum(float v) {
  __shared__ float partial[32];
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0.0f;
  for (unsigned w = 0; w < blockDim.x / 32; ++w) total += partial[w];
  __syncthreads();
  return total;
}

// residual = residual + x (bf16), elementwise.
__global__ void add_kernel(__nv_bfloat16* residual, const __nv_bfloat16* x, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    residual[i] = __float2bfloat16(bf(residual[i]) + bf(x[i]));
  }
}

// y = x·rsqrt(mean(x²) + eps)·w, one block per row, the row read twice.
__global__ void rms_norm_kernel(__nv_bfloat16* y, const __nv_bfloat16* x, const __nv_bfloat16* w, int64_t h, float eps) {
  const int64_t base = blockIdx.x * h;
  float s = 0.0f;
  for (int64_t i = threadIdx.x; i < h; i += blockDim.x) s += bf(x[base + i]) * bf(x[base + i]);
  const float inv = rsqrtf(block_sum(s) / h + eps);
  for (int64_t i = threadIdx.x; i < h; i += blockDim.x) y[base + i] = __float2bfloat16(bf(x[base + i]) * inv * bf(w[i]));
}

// y = LN(x + bias + residual)·γ + β (bias, residual optional), one block per row.
__global__ void layer_norm_kernel(__nv_bfloat16* y, const __nv_bfloat16* x, const __nv_bfloat16* residual,
                                  const __nv_bfloat16* bias, const __nv_bfloat16* gamma,
                                  const __nv_bfloat16* beta, int64_t h, float eps) {
  const int64_t base = blockIdx.x * h;
  auto v = [&](int64_t i) {  // bias and residual may be null
    return bf(x[base + i]) + (bias ? bf(bias[i]) : 0.0f) + (residual ? bf(residual[base + i]) : 0.0f);
  };
  float s = 0.0f;
  for (int64_t i = threadIdx.x; i < h; i += blockDim.x) s += v(i);
  const float mean = block_sum(s) / h;
  float c = 0.0f;
  for (int64_t i = threadIdx.x; i < h; i += blockDim.x) c += (v(i) - mean) * (v(i) - mean);
  const float inv = rsqrtf(block_sum(c) / h + eps);
  for (int64_t i = threadIdx.x; i < h; i += blockDim.x) {
    y[base + i] = __float2bfloat16((v(i) - mean) * inv * bf(gamma[i]) + bf(beta[i]));
  }
}

// y = dequant(acc) (+ int8 residual): the fp16/bf16 output of the GEMM epilogue.
__global__ void dequant_kernel(__nv_bfloat16* y, const int32_t* acc, const float* scale_a, const float* scale_w,
                               const __nv_bfloat16* bias, const int8_t* residual, float residual_scale,
                               int64_t h, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = i / h, c = i % h;
    float v = scale_a[t] * scale_w[c] * acc[i] + bf(bias[c]);
    if (residual != nullptr) v += residual_scale * residual[i];
    y[i] = __float2bfloat16(v);
  }
}

// y = silu(gate)·up from x [T, 2H].
__global__ void silu_mul_kernel(__nv_bfloat16* y, const __nv_bfloat16* x, int64_t h, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = i / h, c = i % h;
    const float g = bf(x[t * 2 * h + c]), u = bf(x[t * 2 * h + h + c]);
    y[i] = __float2bfloat16(g / (1.0f + __expf(-g)) * u);
  }
}

// y = gelu(x + bias) (bias optional).
__global__ void bias_gelu_kernel(__nv_bfloat16* y, const __nv_bfloat16* x, const __nv_bfloat16* bias, int64_t h,
                                 int64_t count, bool tanh_form) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    const float v = bf(x[i]) + (bias ? bf(bias[i % h]) : 0.0f);
    const float g = tanh_form ? 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)))
                              : 0.5f * v * (1.0f + erff(v * 0.7071067812f));
    y[i] = __float2bfloat16(g);
  }
}

// scale[t] = amax(|y[t,:]|) / qmax.
__global__ void row_scale_kernel(float* scale, const __nv_bfloat16* y, int64_t h, float qmax) {
  float m = 0.0f;
  for (int64_t i = threadIdx.x; i < h; i += blockDim.x) m = fmaxf(m, fabsf(bf(y[blockIdx.x * h + i])));
  for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  __shared__ float part[32];
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (unsigned w = 1; w < blockDim.x / 32; ++w) m = fmaxf(m, part[w]);
    scale[blockIdx.x] = m > 0.0f ? m / qmax : 1.0f;
  }
}

// q = sat(rne(y / s)) with s per row (per_token) or s[0].
__global__ void quantize_kernel(uint8_t* q, const __nv_bfloat16* y, const float* scale, bool per_token, bool fp8,
                                int64_t h, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    const float v = bf(y[i]) / scale[per_token ? i / h : 0];
    q[i] = fp8 ? numeric::float_to_fp8e4m3_bits(v)
               : static_cast<uint8_t>(static_cast<int8_t>(fminf(fmaxf(rintf(v), -128.0f), 127.0f)));
  }
}

}  // namespace qgemm::tools::peers
