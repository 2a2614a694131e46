// CUDA dequantize: x̂ = float(q − z)·s into fp32 / fp16 / bf16, one block per
// row, the scalar math of quant/quant_math.h (bit-identical to the CPU).
//
// dequantize_vectors_kernel (the float side in 16-byte vectors): a thread
// reads kVec codes (4 or 8 bytes) and writes one 16-byte vector per step;
// kUnroll steps are loaded before any is converted, so several loads are in
// flight per thread. A vector never straddles two scale groups
// (group_size % kVec == 0), so each takes one scale.
// dequantize_scalar_kernel: any H, stride or alignment, one element per step.
#include <cstdint>
#include <type_traits>

#include "core/cuda_check.h"
#include "core/cuda_launch.cuh"
#include "quant/cuda/float_access.cuh"
#include "quant/cuda/quant_cuda.h"
#include "quant/quant_math.h"

namespace qgemm::detail {
namespace {

// ---- Launch configurations -------------------------------------------------
// Steps loaded ahead per thread: 4 × (8 B codes in, 16 B out). (2, as in
// quantize, was measured 9 % slower on the H100 at 16384×8192.)
constexpr int kUnroll = 4;
// Block: ceil(vectors / kUnroll) threads rounded up to a warp, in [32, 512];
// the scalar kernel takes 256 threads.
constexpr int kMinThreads = 32, kMaxThreads = 512, kScalarThreads = 256;
// -----------------------------------------------------------------------------

template <bool kFp8>
__device__ __forceinline__ float dequantize_one(uint8_t q, float scale, int32_t zero_point) {
  if constexpr (kFp8) {
    return quant::dequantize_fp8(q, scale);
  } else {
    return quant::dequantize_int8(static_cast<int8_t>(q), scale, zero_point);
  }
}

// The scale index of element i of `row`.
__device__ __forceinline__ int64_t scale_index(const QuantArgs& a, int64_t row, int i) {
  return row * a.scale_row_stride + static_cast<int64_t>(i / static_cast<int>(a.group_size)) * a.scale_group_stride;
}

template <DType kOut, bool kFp8>
__global__ void __launch_bounds__(kMaxThreads) dequantize_vectors_kernel(const QuantArgs a) {
  wait_for_preceding_grids();
  allow_dependent_launch();
  using Access = FloatAccess<kOut>;
  constexpr int kVec = Access::kVec;
  using Codes = std::conditional_t<kVec == 8, uint2, uint32_t>;  // kVec bytes
  const int64_t row = blockIdx.x;
  const auto* in = static_cast<const uint8_t*>(a.in) + row * a.in_stride;
  auto* out = static_cast<typename Access::Storage*>(a.out) + row * a.out_stride;
  const int vectors = static_cast<int>(a.hidden / kVec);
  const int t = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
  const bool zero_points = !kFp8 && a.azp != nullptr;
  // One scale group per row (per-tensor, per-token): its scale is read once,
  // not found by an integer division per vector.
  const bool one_group = a.group_size >= a.hidden;
  const float row_scale = one_group ? a.scale[scale_index(a, row, 0)] : 0.0f;
  const int32_t row_zero_point = one_group && zero_points ? a.azp[scale_index(a, row, 0)] : 0;

  for (int base = 0; base < vectors; base += threads * kUnroll) {
    Codes codes[kUnroll];
#pragma unroll
    for (int j = 0; j < kUnroll; ++j) {
      const int v = base + t + j * threads;
      codes[j] = v < vectors ? __ldg(reinterpret_cast<const Codes*>(in + static_cast<int64_t>(v) * kVec)) : Codes{};
    }
#pragma unroll
    for (int j = 0; j < kUnroll; ++j) {
      const int v = base + t + j * threads;
      if (v >= vectors) continue;
      float scale = row_scale;
      int32_t zero_point = row_zero_point;
      if (!one_group) {
        const int64_t s = scale_index(a, row, v * kVec);
        scale = a.scale[s];
        zero_point = zero_points ? a.azp[s] : 0;
      }
      const auto* bytes = reinterpret_cast<const uint8_t*>(&codes[j]);
      alignas(16) typename Access::Storage x[kVec];
#pragma unroll
      for (int e = 0; e < kVec; ++e) x[e] = Access::from_float(dequantize_one<kFp8>(bytes[e], scale, zero_point));
      *reinterpret_cast<RawVector*>(out + static_cast<int64_t>(v) * kVec) = *reinterpret_cast<const RawVector*>(x);
    }
  }
}

template <DType kOut, bool kFp8>
__global__ void dequantize_scalar_kernel(const QuantArgs a) {
  wait_for_preceding_grids();
  allow_dependent_launch();
  using Access = FloatAccess<kOut>;
  const int64_t row = blockIdx.x;
  const auto* in = static_cast<const uint8_t*>(a.in) + row * a.in_stride;
  auto* out = static_cast<typename Access::Storage*>(a.out) + row * a.out_stride;
  const bool zero_points = !kFp8 && a.azp != nullptr;
  for (int i = static_cast<int>(threadIdx.x); i < a.hidden; i += static_cast<int>(blockDim.x)) {
    const int64_t s = scale_index(a, row, i);
    out[i] = Access::from_float(dequantize_one<kFp8>(in[i], a.scale[s], zero_points ? a.azp[s] : 0));
  }
}

template <DType kOut, bool kFp8>
void launch(const QuantArgs& a, cudaStream_t stream) {
  constexpr int vec = FloatAccess<kOut>::kVec;
  const int64_t out_row_bytes = a.out_stride * static_cast<int64_t>(sizeof(typename FloatAccess<kOut>::Storage));
  const bool vectorizable = a.hidden % vec == 0 && a.group_size % vec == 0 && is_aligned(a.out, 16) &&
                            out_row_bytes % 16 == 0 && is_aligned(a.in, vec) && a.in_stride % vec == 0;
  const auto grid = static_cast<unsigned>(a.tokens);
  if (vectorizable) {
    const int64_t vectors = a.hidden / vec;
    const int64_t threads = ((vectors + kUnroll - 1) / kUnroll + 31) / 32 * 32;
    const int block = static_cast<int>(threads < kMinThreads ? kMinThreads : threads > kMaxThreads ? kMaxThreads : threads);
    launch_pdl_kernel(dequantize_vectors_kernel<kOut, kFp8>, dim3(grid), dim3(static_cast<unsigned>(block)), 0, stream,
                      a.device.index, a);
  } else {
    launch_pdl_kernel(dequantize_scalar_kernel<kOut, kFp8>, dim3(grid), dim3(kScalarThreads), 0, stream, a.device.index,
                      a);
  }
}

template <bool kFp8>
void dispatch_dtype(const QuantArgs& a, cudaStream_t stream) {
  switch (a.float_dtype) {
    case DType::kFloat32: return launch<DType::kFloat32, kFp8>(a, stream);
    case DType::kFloat16: return launch<DType::kFloat16, kFp8>(a, stream);
    default: return launch<DType::kBFloat16, kFp8>(a, stream);
  }
}

}  // namespace

void dequantize_cuda(const QuantArgs& a) {
  check_cuda_limits(a, "dequantize");
  CudaDeviceGuard guard(a.device);
  const auto stream = as_cuda_stream(a.stream);
  if (a.quant_dtype == DType::kFloat8E4M3) dispatch_dtype<true>(a, stream);
  else dispatch_dtype<false>(a, stream);
  QGEMM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace qgemm::detail
