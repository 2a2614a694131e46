// CPU backend of quantize / dequantize: per row (OpenMP across rows), per
// scale group, the statistics pass then the quantize pass, with the scalar
// formulas of quant/quant_math.h.
#include "quant/cpu/quant_cpu.h"

#include "gemm/cpu/output_store.h"
#include "quant/quant_math.h"

namespace qgemm::detail {
namespace {

using namespace quant;

int64_t scale_index(const QuantArgs& a, int64_t row, int64_t group) {
  return row * a.scale_row_stride + group * a.scale_group_stride;
}

// Statistics of elements [begin, end) of one row.
Stats stats_of(const QuantArgs& a, int64_t row, int64_t begin, int64_t end) {
  Stats s;
  for (int64_t i = begin; i < end; ++i) s.add(load_float(a.in, row * a.in_stride + i, a.float_dtype));
  return s;
}

void quantize_span(const QuantArgs& a, int64_t row, int64_t begin, int64_t end, float scale,
                   int32_t zero_point, Range range) {
  for (int64_t i = begin; i < end; ++i) {
    const float x = load_float(a.in, row * a.in_stride + i, a.float_dtype);
    if (a.quant_dtype == DType::kInt8) {
      static_cast<int8_t*>(a.out)[row * a.out_stride + i] = quantize_int8(x, scale, zero_point, range);
    } else {
      static_cast<uint8_t*>(a.out)[row * a.out_stride + i] = quantize_fp8(x, scale);
    }
  }
}

}  // namespace

void quantize_cpu(const QuantArgs& a) {
  const Range range = range_of(a.quant_dtype, a.narrow_range);
  if (a.mode == QuantMode::kStaticPerTensor) {
    const float scale = a.scale[0];
    const int32_t zero_point = a.azp != nullptr ? a.azp[0] : 0;
#pragma omp parallel for schedule(static)
    for (int64_t row = 0; row < a.tokens; ++row) quantize_span(a, row, 0, a.hidden, scale, zero_point, range);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t row = 0; row < a.tokens; ++row) {
    for (int64_t g = 0; g < a.groups; ++g) {
      const int64_t begin = g * a.group_size, end = begin + a.group_size;
      const Stats stats = stats_of(a, row, begin, end);
      const float scale = a.asymmetric ? asymmetric_scale(stats) : symmetric_scale(stats, range);
      const int32_t zero_point = a.asymmetric ? asymmetric_zero_point(stats, scale) : 0;
      a.scale[scale_index(a, row, g)] = scale;
      if (a.asymmetric) a.azp[scale_index(a, row, g)] = zero_point;
      quantize_span(a, row, begin, end, scale, zero_point, range);
    }
  }
}

void dequantize_cpu(const QuantArgs& a) {
#pragma omp parallel for schedule(static)
  for (int64_t row = 0; row < a.tokens; ++row) {
    for (int64_t i = 0; i < a.hidden; ++i) {
      const int64_t s = scale_index(a, row, i / a.group_size);
      const float scale = a.scale[s];
      float x;
      if (a.quant_dtype == DType::kInt8) {
        const int32_t zero_point = a.azp != nullptr ? a.azp[s] : 0;
        x = dequantize_int8(static_cast<const int8_t*>(a.in)[row * a.in_stride + i], scale, zero_point);
      } else {
        x = dequantize_fp8(static_cast<const uint8_t*>(a.in)[row * a.in_stride + i], scale);
      }
      store_float(a.out, row * a.out_stride + i, a.float_dtype, x);
    }
  }
}

}  // namespace qgemm::detail
