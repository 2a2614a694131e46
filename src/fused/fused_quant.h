// fused_quant.h — how a fused op quantizes its result row y: with exactly the
// formulas of qgemm::quantize() (quant/quant_math.h), so rms_norm_quant(x)
// gives the bits quantize() would give for the normalized row y, on both
// backends:
//
//   symmetric       s = amax / qmax                  q = sat(rne(y · (1/s)))
//   asymmetric int8 s = (hi − lo) / 255, z = rne(−128 − lo · (1/s))
//                                                    q = sat(rne(y · (1/s)) + z)
//   fp8 e4m3        s = amax / 448                   q = fp8_rne_sat(y · (1/s))
//   static          s, z given                       the same codes with 1/s
//
// amax, lo = min(0, min y), hi = max(0, max y) over the finite values of the
// row; fmaxf / fminf are order-independent, so every reduction tree gives the
// same statistics. A scale that would be 0 becomes 1 (quant_math.h).
#pragma once

#include <cstdint>

#include "core/numeric.h"
#include "quant/quant_math.h"

namespace qgemm::detail::fused {

// What every element of one row needs: the scale written out, 1/s, the
// zero point and the int8 clamp bounds (quant::Int8Code).
struct RowCode {
  float scale = 1.0f;
  quant::Int8Code int8{1.0f, 0, -128, 127};
  // The int8 codes take the full range [−128, 127] with z = 0 (symmetric
  // without narrow_range): quant::quantize_int8_full_range applies.
  QGEMM_HD bool int8_full_range() const { return int8.zero_point == 0 && int8.lo == -128; }
};

QGEMM_HD RowCode row_code(const quant::GroupCode& c, bool narrow_range) {
  return {c.scale, quant::int8_code(c.inv_scale, c.zero_point, narrow_range)};
}

// A static scale (and zero point), as quantize()'s static per-tensor mode.
QGEMM_HD RowCode static_code(float scale, int32_t zero_point, bool narrow_range) {
  return row_code({scale, quant::reciprocal(scale), zero_point}, narrow_range);
}

// Dynamic symmetric: s = amax / qmax (127 for int8, 448 for fp8).
QGEMM_HD RowCode symmetric_code(const quant::AbsMax& stats, bool fp8, bool narrow_range) {
  return row_code(quant::code_of(stats, fp8 ? numeric::kFp8E4M3Max : quant::kInt8Max), narrow_range);
}

// Dynamic asymmetric int8: s = (hi − lo) / 255 and its zero point.
QGEMM_HD RowCode asymmetric_code(const quant::MinMax& stats, bool narrow_range) {
  return row_code(quant::code_of(stats), narrow_range);
}

// The output codes: fp8, int8 with a zero point or narrow range, or int8
// over the full range with z = 0 (RowCode::int8_full_range()) — the same bits
// as kInt8 there, in fewer GPU instructions.
enum class QuantOut { kInt8, kInt8FullRange, kFp8 };

// One element of the output: the bits of q in the output dtype.
template <QuantOut kOut>
QGEMM_HD uint8_t quantize_as(float y, const RowCode& c) {
  if constexpr (kOut == QuantOut::kFp8) return quant::quantize_fp8(y, c.int8.inv_scale);
  else if constexpr (kOut == QuantOut::kInt8FullRange) return static_cast<uint8_t>(quant::quantize_int8_full_range(y, c.int8.inv_scale));
  else return static_cast<uint8_t>(quant::quantize_int8(y, c.int8));
}
// The same code in the low byte of a word, the upper bytes undefined: what
// the GPU packs four at a time with byte permutes (the full-range int8 code
// straight from its conversion, without a mask).
template <QuantOut kOut>
QGEMM_HD uint32_t code_in_low_byte(float y, const RowCode& c) {
  if constexpr (kOut == QuantOut::kInt8FullRange) return static_cast<uint32_t>(quant::quantize_int8_full_range(y, c.int8.inv_scale));
  else return quantize_as<kOut>(y, c);
}
QGEMM_HD uint8_t quantize_bits(float y, const RowCode& c, bool fp8) {
  return fp8 ? quantize_as<QuantOut::kFp8>(y, c) : quantize_as<QuantOut::kInt8>(y, c);
}

}  // namespace qgemm::detail::fused
