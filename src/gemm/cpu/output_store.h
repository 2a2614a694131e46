// output_store.h — reading and writing the 16/32-bit float dtypes an op emits,
// through the bit-exact conversions of core/numeric.h (CPU backend helpers).
#pragma once

#include <cstdint>

#include "core/numeric.h"
#include "qgemm/tensor.h"

namespace qgemm::detail {

inline float load_float(const void* base, int64_t index, DType dtype) {
  switch (dtype) {
    case DType::kBFloat16:
      return numeric::bf16_bits_to_float(static_cast<const uint16_t*>(base)[index]);
    case DType::kFloat16:
      return numeric::fp16_bits_to_float(static_cast<const uint16_t*>(base)[index]);
    case DType::kFloat32:
      return static_cast<const float*>(base)[index];
    case DType::kFloat8E4M3:
      return numeric::fp8e4m3_bits_to_float(static_cast<const uint8_t*>(base)[index]);
    default:
      return 0.0f;  // unreachable: callers validated the dtype
  }
}

inline void store_float(void* base, int64_t index, DType dtype, float value) {
  switch (dtype) {
    case DType::kBFloat16:
      static_cast<uint16_t*>(base)[index] = numeric::float_to_bf16_bits(value);
      break;
    case DType::kFloat16:
      static_cast<uint16_t*>(base)[index] = numeric::float_to_fp16_bits(value);
      break;
    case DType::kFloat32:
      static_cast<float*>(base)[index] = value;
      break;
    case DType::kFloat8E4M3:
      static_cast<uint8_t*>(base)[index] = numeric::float_to_fp8e4m3_bits(value);
      break;
    default:
      break;  // unreachable: callers validated the dtype
  }
}

}  // namespace qgemm::detail
