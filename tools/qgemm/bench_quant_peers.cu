// The peers of `qgemm bench quant` (bench_quant_peers.cuh): PyTorch-eager
// style composites, one simple kernel per op, and the unfused amax + quantize
// pair. Elementwise kernels handle 4 elements per thread and grid-stride, as
// torch's vectorized elementwise kernels do; reductions use a warp per row.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>

#include "bench_quant_peers.cuh"
#include "cuda_bench.h"

namespace qgemm::tools::quant_peers {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) {
  return static_cast<unsigned>(std::clamp<int64_t>((n / 4 + kThreads - 1) / kThreads, 1, 132 * 32));
}

__device__ float bf16_to_float(uint16_t b) { return __uint_as_float(static_cast<uint32_t>(b) << 16); }
__device__ uint16_t float_to_bf16(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }

// out[i] = op(in[i], i): the one elementwise kernel every eager op is.
template <typename In, typename Out, typename Op>
__global__ void elementwise_kernel(const In* in, Out* out, int64_t n, Op op) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t base = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x); base < n; base += 4 * stride) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int64_t i = base + j * stride;
      if (i < n) out[i] = op(in[i], i);
    }
  }
}

template <typename In, typename Out, typename Op>
void elementwise(const In* in, Out* out, int64_t n, Op op, cudaStream_t stream) {
  elementwise_kernel<<<blocks_for(n), kThreads, 0, stream>>>(in, out, n, op);
  cuda::check(cudaGetLastError(), "eager elementwise");
}

// out[r] = max (kMax) or min of x[r, :] over rows of `length` bf16 elements,
// a warp per row.
template <bool kMax>
__global__ void row_reduce_kernel(const uint16_t* x, float* out, int64_t rows, int64_t length) {
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x / 32) + threadIdx.x / 32; r < rows; r += warps) {
    float m = kMax ? -INFINITY : INFINITY;
    for (int64_t i = threadIdx.x % 32; i < length; i += 32) {
      const float v = bf16_to_float(x[r * length + i]);
      m = kMax ? fmaxf(m, v) : fminf(m, v);
    }
    for (int o = 16; o > 0; o /= 2) {
      const float other = __shfl_xor_sync(0xffffffffu, m, o);
      m = kMax ? fmaxf(m, other) : fminf(m, other);
    }
    if (threadIdx.x % 32 == 0) out[r] = m;
  }
}

template <bool kMax>
void row_reduce(const uint16_t* x, float* out, int64_t rows, int64_t length, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>(std::clamp<int64_t>((rows + 7) / 8, 1, 132 * 16));
  row_reduce_kernel<kMax><<<blocks, kThreads, 0, stream>>>(x, out, rows, length);
  cuda::check(cudaGetLastError(), "eager reduce");
}

struct Abs {
  __device__ uint16_t operator()(uint16_t b, int64_t) const { return b & 0x7fff; }
};
struct DivideBy {
  float qmax;
  __device__ float operator()(float m, int64_t) const { return m / qmax; }
};
struct DivideRows {  // bf16 x / fp32 scale[row] → fp32 (torch type promotion)
  const float* scale;
  int64_t length;
  __device__ float operator()(uint16_t x, int64_t i) const { return bf16_to_float(x) / scale[i / length]; }
};
struct Round {
  __device__ float operator()(float v, int64_t) const { return rintf(v); }
};
struct AddRows {
  const float* zero_point;
  int64_t length;
  __device__ float operator()(float v, int64_t i) const { return v + zero_point[i / length]; }
};
struct Clamp {
  float lo, hi;
  __device__ float operator()(float v, int64_t) const { return fminf(fmaxf(v, lo), hi); }
};
struct ToInt8 {
  __device__ int8_t operator()(float v, int64_t) const { return static_cast<int8_t>(v); }
};
struct ToFp8 {
  __device__ __nv_fp8_e4m3 operator()(float v, int64_t) const { return __nv_fp8_e4m3(v); }
};
struct ToFloat {
  __device__ float operator()(int8_t v, int64_t) const { return static_cast<float>(v); }
};
struct MulRows {
  const float* scale;
  int64_t length;
  __device__ float operator()(float v, int64_t i) const { return v * scale[i / length]; }
};
struct ToBf16 {
  __device__ uint16_t operator()(float v, int64_t) const { return float_to_bf16(v); }
};

// Asymmetric scale and zero point per row from (min, max): two tiny torch ops
// fused into one here (in torch: sub, div, div, neg, add, round: six launches).
__global__ void asym_params_kernel(const float* lo, float* hi_to_scale, float* zero_point, int64_t rows) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < rows;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float s = (hi_to_scale[r] - lo[r]) / 255.0f;
    hi_to_scale[r] = s;
    zero_point[r] = rintf(-128.0f - lo[r] / s);
  }
}

// The unfused pair: amax per row (scale written), then elementwise quantize.
__global__ void pair_amax_kernel(const uint16_t* x, float* scale, int64_t hidden) {
  float m = 0.0f;
  for (int64_t i = threadIdx.x; i < hidden; i += blockDim.x) m = fmaxf(m, fabsf(bf16_to_float(x[blockIdx.x * hidden + i])));
  for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  __shared__ float part[32];
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (unsigned w = 1; w < blockDim.x / 32; ++w) m = fmaxf(m, part[w]);
    scale[blockIdx.x] = m / 127.0f;
  }
}
struct PairQuantize {
  const float* scale;
  int64_t hidden;
  __device__ int8_t operator()(uint16_t x, int64_t i) const {
    const float s = scale[i / hidden];
    return static_cast<int8_t>(fminf(fmaxf(rintf(bf16_to_float(x) / (s > 0 ? s : 1.0f)), -128.0f), 127.0f));
  }
};

}  // namespace

EagerWorkspace EagerWorkspace::carve(void* base, int64_t tokens, int64_t hidden) {
  auto* p = static_cast<uint8_t*>(base);
  const auto n = static_cast<size_t>(tokens * hidden);
  auto take = [&](size_t bytes) {
    void* here = p;
    p += (bytes + 255) / 256 * 256;
    return here;
  };
  EagerWorkspace ws;
  ws.f32_a = static_cast<float*>(take(n * 4));
  ws.f32_b = static_cast<float*>(take(n * 4));
  ws.bf16 = static_cast<uint16_t*>(take(n * 2));
  ws.row_a = static_cast<float*>(take(row_floats(tokens, hidden) * 4));
  ws.row_b = static_cast<float*>(take(row_floats(tokens, hidden) * 4));
  return ws;
}

void eager_composite(EagerOp op, const void* x_in, void* q, float* scale, int64_t tokens, int64_t hidden,
                     int64_t group, const EagerWorkspace& ws, cudaStream_t stream) {
  const auto* x = static_cast<const uint16_t*>(x_in);
  const int64_t n = tokens * hidden, rows = n / group;
  switch (op) {
    case EagerOp::kTokenInt8:
    case EagerOp::kGroupInt8:
    case EagerOp::kTokenFp8: {
      const bool fp8 = op == EagerOp::kTokenFp8;
      elementwise(x, ws.bf16, n, Abs{}, stream);                                  // a = x.abs()
      row_reduce<true>(ws.bf16, ws.row_a, rows, group, stream);                    // m = a.amax(-1)
      elementwise(ws.row_a, scale, rows, DivideBy{fp8 ? 448.0f : 127.0f}, stream);  // s = m / qmax
      elementwise(x, ws.f32_a, n, DivideRows{scale, group}, stream);               // y = x / s
      if (fp8) {
        elementwise(ws.f32_a, ws.f32_b, n, Clamp{-448.0f, 448.0f}, stream);        // y.clamp(±448)
        elementwise(ws.f32_b, static_cast<__nv_fp8_e4m3*>(q), n, ToFp8{}, stream);  // .to(fp8)
      } else {
        elementwise(ws.f32_a, ws.f32_b, n, Round{}, stream);                       // y.round()
        elementwise(ws.f32_b, ws.f32_a, n, Clamp{-128.0f, 127.0f}, stream);        // .clamp()
        elementwise(ws.f32_a, static_cast<int8_t*>(q), n, ToInt8{}, stream);       // .to(int8)
      }
      return;
    }
    case EagerOp::kTokenInt8Asym:
      row_reduce<false>(x, ws.row_a, rows, group, stream);  // lo = x.amin(-1)
      row_reduce<true>(x, scale, rows, group, stream);      // hi = x.amax(-1)
      asym_params_kernel<<<blocks_for(rows * 4), kThreads, 0, stream>>>(ws.row_a, scale, ws.row_b, rows);
      elementwise(x, ws.f32_a, n, DivideRows{scale, group}, stream);
      elementwise(ws.f32_a, ws.f32_b, n, Round{}, stream);
      elementwise(ws.f32_b, ws.f32_a, n, AddRows{ws.row_b, group}, stream);
      elementwise(ws.f32_a, ws.f32_b, n, Clamp{-128.0f, 127.0f}, stream);
      elementwise(ws.f32_b, static_cast<int8_t*>(q), n, ToInt8{}, stream);
      return;
    case EagerOp::kStaticInt8:
      elementwise(x, ws.f32_a, n, DivideRows{scale, n}, stream);  // x / s (one scale)
      elementwise(ws.f32_a, ws.f32_b, n, Round{}, stream);
      elementwise(ws.f32_b, ws.f32_a, n, Clamp{-128.0f, 127.0f}, stream);
      elementwise(ws.f32_a, static_cast<int8_t*>(q), n, ToInt8{}, stream);
      return;
    case EagerOp::kDequantInt8:
      elementwise(static_cast<const int8_t*>(q), ws.f32_a, n, ToFloat{}, stream);  // q.float()
      elementwise(ws.f32_a, ws.f32_b, n, MulRows{scale, group}, stream);           // * s
      elementwise(ws.f32_b, static_cast<uint16_t*>(const_cast<void*>(x_in)), n, ToBf16{}, stream);  // .to(bf16)
      return;
  }
}

void unfused_pair(const void* x, void* q, float* scale, int64_t tokens, int64_t hidden, cudaStream_t stream) {
  pair_amax_kernel<<<static_cast<unsigned>(tokens), kThreads, 0, stream>>>(static_cast<const uint16_t*>(x), scale, hidden);
  elementwise(static_cast<const uint16_t*>(x), static_cast<int8_t*>(q), tokens * hidden,
              PairQuantize{scale, hidden}, stream);
}

}  // namespace qgemm::tools::quant_peers
