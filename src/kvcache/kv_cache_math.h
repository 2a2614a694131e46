// kv_cache_math.h — the scalar rules both backends of the KV cache ops share
// (host + device): which slot a token occupies, the per-token, per-head
// quantization of a head vector (quant/quant_math.h's dynamic symmetric
// formula), and whether a sequence's table row is usable.
#pragma once

#include <cstdint>

#include "core/numeric.h"
#include "kvcache/kv_cache_args.h"
#include "quant/quant_math.h"

namespace qgemm::detail::kv {

// The pool slot of token j of a sequence, or −1 when its block id is outside
// [0, num_blocks). 32-bit arithmetic (validation keeps the pool's slots and
// a sequence's tokens below 2^31; on the GPU a 64-bit division is a
// subroutine of ~70 instructions).
QGEMM_HD int32_t token_slot(const int32_t* table_row, uint32_t j, uint32_t block_size, uint32_t num_blocks) {
  const uint32_t index = j / block_size;
  const int32_t block = table_row[index];
  return static_cast<uint32_t>(block) >= num_blocks
             ? -1
             : static_cast<int32_t>(static_cast<uint32_t>(block) * block_size + (j - index * block_size));
}

// qmax of a quantized cache dtype: 127 (int8) or 448 (fp8 e4m3).
QGEMM_HD float cache_qmax(bool fp8) { return fp8 ? 448.0f : quant::kInt8Max; }

// One element's code: int8 sat(rne(x · (1/s))) over [−128, 127], or fp8
// e4m3 rne, saturating; as the cache's byte.
QGEMM_HD uint8_t quantize_code(float x, float inv_scale, bool fp8) {
  return fp8 ? quant::quantize_fp8(x, inv_scale)
             : static_cast<uint8_t>(static_cast<int8_t>(quant::quantize_int8_full_range(x, inv_scale)));
}

// A code's value before its scale: exact in fp32.
QGEMM_HD float code_value(uint8_t code, bool fp8) {
  return fp8 ? numeric::fp8e4m3_bits_to_float(code) : static_cast<float>(static_cast<int8_t>(code));
}

}  // namespace qgemm::detail::kv
