// scaled_mm_args.h — the validated, backend-neutral description of one
// scaled_mm / scaled_mm_azp call. The host entry (gemm_api.cpp) builds it from
// TensorViews after validation; backends read only this struct.
#pragma once

#include <cstdint>

#include "qgemm/tensor.h"

namespace qgemm::detail {

struct ScaledMmArgs {
  int64_t m = 0, n = 0, k = 0;
  DType input_dtype = DType::kInt8;  // a and b: int8 or fp8 e4m3
  DType out_dtype = DType::kBFloat16;

  const void* a = nullptr;  // [M,K] row-major, row stride lda
  int64_t lda = 0;
  const void* b = nullptr;  // [K,N] column-major, column stride ldb
  int64_t ldb = 0;
  void* out = nullptr;  // [M,N] row-major, row stride ldo
  int64_t ldo = 0;

  const float* scale_a = nullptr;  // M elements when scale_a_per_token, else 1
  bool scale_a_per_token = false;
  const float* scale_b = nullptr;  // N elements when scale_b_per_channel, else 1
  bool scale_b_per_channel = false;

  const void* bias = nullptr;  // [N] in out_dtype, or null

  // fp8 inputs only (always false for int8): the caller allows the GPU's
  // fast fp8 accumulation (Fp8Accumulation::kFast). Backends without a fast
  // variant compute the precise result, which is always allowed.
  bool fp8_fast_accum = false;

  // Zero-point correction (int8 only). azp_adj null: symmetric. azp null with
  // azp_adj set: per-tensor zero point folded into azp_adj. Both set:
  // per-token zero points, subtract azp[m]·azp_adj[n].
  const int32_t* azp_adj = nullptr;
  const int32_t* azp = nullptr;

  // Scratch memory for stream-K (kSm90StreamK): null when the call brought
  // none; at least scaled_mm_workspace_bytes(device) bytes otherwise.
  void* workspace = nullptr;
  int64_t workspace_bytes = 0;

  Device device{};
  Stream stream = nullptr;
};

}  // namespace qgemm::detail
