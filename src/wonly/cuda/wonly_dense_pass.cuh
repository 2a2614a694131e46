// wonly_dense_pass.cuh — the dequantization pass of weight_only_mm's dense
// prefill path (wonly_dense.cuh on sm_90, wonly_dense_sm80.cu elsewhere):
// the whole weight, once, into the workspace,
//
//   ŵ [N, K] in T, row-major      ŵ = round_T(q·s_T + o_T)  (wonly_math.h)
//
// bit-identical to the CPU twin's ŵ (the decode kernels' HFMA2
// dequantization, wonly_device.cuh).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "core/cuda_check.h"
#include "core/cuda_launch.cuh"
#include "cutlass/cutlass.h"
#include "wonly/cuda/wonly_device.cuh"

namespace qgemm::detail::wonly_dense {

using namespace wonly;

// One block per weight row; each thread makes 16-byte vectors of ŵ (8
// elements, from one 4-byte int4 word or 8 int8 bytes of a 16-byte chunk,
// inside one group: groups are multiples of 32 elements, or K) with the
// decode kernels' HFMA2 dequantization (wonly_device.cuh), kUnroll of them
// at a time so that their loads are in flight together; a warp stores 512
// contiguous bytes per instruction. Bandwidth-bound: reads N·K/2 (int4) or
// N·K bytes and the parameters, writes N·K·2.
constexpr int kDequantThreads = 256, kDequantUnroll = 4;

template <bool kBf16, bool kInt4, bool kParams16>
__global__ void __launch_bounds__(kDequantThreads) dequantize_weight_kernel(const WeightOnlyArgs args,
                                                                            uint4* w_hat) {
  wait_for_preceding_grids();
  allow_dependent_launch();
  using Param = std::conditional_t<kParams16, uint16_t, float>;
  constexpr int kVectorsPerChunk = kInt4 ? 4 : 2, kVectorBytes = 16 / kVectorsPerChunk;
  const int64_t row = blockIdx.x;
  const int vectors = static_cast<int>(args.k / 8), group = static_cast<int>(args.group_size);
  const auto* scales = static_cast<const Param*>(args.scales) + row * args.ld_scales;
  const auto* offsets = static_cast<const Param*>(args.offsets) + row * args.ld_offsets;
  uint4* out = w_hat + row * vectors;
  for (int v0 = threadIdx.x; v0 < vectors; v0 += kDequantUnroll * kDequantThreads) {
    uint2 raw[kDequantUnroll];
    float s[kDequantUnroll], o[kDequantUnroll];
#pragma unroll
    for (int u = 0; u < kDequantUnroll; ++u) {
      const int v = v0 + u * kDequantThreads;
      if (v >= vectors) break;
      const uint8_t* p = args.w + args.w_addr.chunk_offset(row, v / kVectorsPerChunk) +
                         (v % kVectorsPerChunk) * kVectorBytes;
      raw[u] = kInt4 ? make_uint2(__ldg(reinterpret_cast<const uint32_t*>(p)), 0u)
                     : __ldg(reinterpret_cast<const uint2*>(p));
      const int g = v * 8 / group;
      s[u] = load_param<kBf16>(scales + g * args.params_group_stride);
      o[u] = args.offsets == nullptr ? 0.0f : load_param<kBf16>(offsets + g * args.params_group_stride);
    }
#pragma unroll
    for (int u = 0; u < kDequantUnroll; ++u) {
      const int v = v0 + u * kDequantThreads;
      if (v >= vectors) break;
      const uint32_t s2 = param2<kBf16>(s[u]), o2 = param2<kBf16>(o[u]);
      uint32_t pairs[4];
      if constexpr (kInt4) {
        dequant_int4_word<kBf16>(raw[u].x, s2, o2, pairs);
      } else {
        dequant_int8_word<kBf16>(raw[u].x, s2, o2, pairs);
        dequant_int8_word<kBf16>(raw[u].y, s2, o2, pairs + 2);
      }
      out[v] = make_uint4(pairs[0], pairs[1], pairs[2], pairs[3]);
    }
  }
}

template <bool kBf16, bool kInt4, bool kParams16>
void dequantize_weight(const WeightOnlyArgs& args, void* w_hat, cudaStream_t stream) {
  launch_pdl_kernel(dequantize_weight_kernel<kBf16, kInt4, kParams16>, dim3(static_cast<unsigned>(args.n)),
                    dim3(kDequantThreads), 0, stream, args.device.index, args, static_cast<uint4*>(w_hat));
}

// The pass for one activation dtype, by weight type and parameter dtype.
template <bool kBf16>
void run_dequantize_pass(const WeightOnlyArgs& args, void* w_hat, cudaStream_t stream) {
  if (args.int4) {
    if (args.params16) dequantize_weight<kBf16, true, true>(args, w_hat, stream);
    else dequantize_weight<kBf16, true, false>(args, w_hat, stream);
  } else {
    if (args.params16) dequantize_weight<kBf16, false, true>(args, w_hat, stream);
    else dequantize_weight<kBf16, false, false>(args, w_hat, stream);
  }
}

// What both dense GEMMs need besides what CUTLASS checks itself: N and the
// rows of a and out multiples of 8 elements (16 bytes; K is a multiple of 32
// by validation) and a 16-byte aligned bias (its row broadcast loads 16-byte
// vectors).
inline bool dense_operands_aligned(const WeightOnlyArgs& args) {
  return args.n % 8 == 0 && args.ldo % 8 == 0 && args.lda % 8 == 0 && reinterpret_cast<uintptr_t>(args.bias) % 16 == 0;
}

// The dense path around a CUTLASS device GEMM `Gemm` whose `arguments` read
// ŵ from the workspace: false, with nothing launched, when the operands do
// not suit it (the caller runs the fused kernels); else the pass, then the
// GEMM. A failure after the checks is a backend error, named `what`.
// kPdl: `Gemm` is a CUTLASS 3.x GEMM, launched with PDL where it is on (its
// waits compiled in by CUTLASS_ENABLE_GDC_FOR_SM90, src/CMakeLists.txt);
// CUTLASS 2.x kernels have no waits and launch the ordinary way.
template <bool kBf16, bool kPdl, class Gemm>
bool run_dense_path(const WeightOnlyArgs& args, const typename Gemm::Arguments& arguments, const char* what) {
  if (!dense_operands_aligned(args) || Gemm::can_implement(arguments) != cutlass::Status::kSuccess ||
      Gemm::get_workspace_size(arguments) != 0) {
    return false;
  }
  const cudaStream_t stream = as_cuda_stream(args.stream);
  run_dequantize_pass<kBf16>(args, args.workspace, stream);
  Gemm gemm;
  if (gemm.initialize(arguments, nullptr, stream) != cutlass::Status::kSuccess) {
    throw Error(ErrorKind::kBackend, std::string("weight_only_mm: ") + what + " initialization failed");
  }
  cutlass::Status status;
  if constexpr (kPdl) {
    status = gemm.run(stream, nullptr, device_launches_programmatically(args.device.index));
  } else {
    status = gemm.run(stream);
  }
  QGEMM_CUDA_CHECK(cudaGetLastError());
  if (status != cutlass::Status::kSuccess) {
    throw Error(ErrorKind::kBackend, std::string("weight_only_mm: ") + what + " launch failed");
  }
  return true;
}

}  // namespace qgemm::detail::wonly_dense
