// fused_args.h — the validated, backend-neutral description of one fused op
// call. The host entry (fused_api.cpp) builds it from TensorViews after
// validation; the CPU and CUDA backends read only this struct.
#pragma once

#include <cstdint>

#include "qgemm/tensor.h"

namespace qgemm::detail {

enum class FusedOp : uint8_t {
  kRmsNorm,      // y = RMSNorm(x or residual + x) · weight
  kLayerNorm,    // y = LayerNorm(x + bias + residual) · gamma + beta
  kSiluMul,      // y = silu(gate) · up, x = [gate | up]
  kGelu,         // y = gelu(x + bias)
};

struct FusedArgs {
  FusedOp op = FusedOp::kRmsNorm;
  int64_t tokens = 0;  // T
  int64_t hidden = 0;  // N: the width of y and q (x is [T, 2N] for kSiluMul)

  // The input: x in a float dtype, or (x_dtype == kInt32) an int8 GEMM's
  // accumulator dequantized with scale_a (1 or T) and scale_w (1 or N).
  DType x_dtype = DType::kBFloat16;
  const void* x = nullptr;
  int64_t ldx = 0;
  const float* scale_a = nullptr;
  bool scale_a_per_token = false;
  const float* scale_w = nullptr;
  bool scale_w_per_channel = false;

  // Residual [T, N]. kRmsNorm: read and updated in place (x's dtype).
  // kLayerNorm: read only — x's dtype, or int8 with residual_scale (1 or T)
  // when x is int32.
  void* residual = nullptr;
  int64_t ld_residual = 0;
  const float* residual_scale = nullptr;
  bool residual_scale_per_token = false;

  // Per-hidden parameters, all of param_dtype (fp32 / fp16 / bf16), or null.
  DType param_dtype = DType::kBFloat16;
  const void* weight = nullptr;  // RMSNorm weight, LayerNorm gamma
  const void* beta = nullptr;
  const void* bias = nullptr;
  float eps = 0.0f;
  bool gelu_tanh = false;

  // The quantized output [T, N] and its scale / zero point (1 or T elements).
  bool q_fp8 = false;
  void* q = nullptr;
  int64_t ldq = 0;
  float* scale = nullptr;
  int32_t* azp = nullptr;  // null: symmetric
  bool dynamic = true;
  bool narrow_range = false;

  Device device{};
  Stream stream = nullptr;
};

}  // namespace qgemm::detail
