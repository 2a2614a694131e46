// quant_args.h — the validated description of one quantize / dequantize call
// that the host entry (quant_api.cpp) hands to a backend.
#pragma once

#include <cstdint>

#include "qgemm/quant.h"
#include "qgemm/tensor.h"

namespace qgemm::detail {

struct QuantArgs {
  int64_t tokens = 0, hidden = 0;  // T, H
  QuantMode mode = QuantMode::kDynamicPerToken;
  bool asymmetric = false;  // a zero point is read (static) or written (dynamic)
  bool narrow_range = false;
  int64_t group_size = 0;  // elements per scale along H (H for per-token, H·T for per-tensor)
  int64_t groups = 1;      // scales per row: H / group_size (1 unless per-group)

  DType float_dtype = DType::kFloat32;  // the fp32/fp16/bf16 side
  DType quant_dtype = DType::kInt8;     // int8 or fp8 e4m3
  const void* in = nullptr;             // quantize: float; dequantize: quantized
  int64_t in_stride = 0;                // row stride of `in`, elements
  void* out = nullptr;
  int64_t out_stride = 0;

  // Scale / zero point of row t, group g at index t·scale_row_stride + g·scale_group_stride
  // (both 0 for per-tensor).
  float* scale = nullptr;
  int32_t* azp = nullptr;
  int64_t scale_row_stride = 0, scale_group_stride = 0;

  Device device{};
  Stream stream = nullptr;
};

}  // namespace qgemm::detail
