// CPU backend of quantize / dequantize (the reference): per row (OpenMP
// across rows), per scale group, the statistics pass then the quantize pass,
// with the scalar formulas of quant/quant_math.h.
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
template <typename Stats>
Stats stats_of(const QuantArgs& a, int64_t row, int64_t begin, int64_t end) {
  Stats s;
  for (int64_t i = begin; i < end; ++i) s.add(load_float(a.in, row * a.in_stride + i, a.float_dtype));
  return s;
}

// Quantizes elements [begin, end) of one row with scale 1/inv_scale and zero point z.
void quantize_span(const QuantArgs& a, int64_t row, int64_t begin, int64_t end, float inv_scale,
                   int32_t zero_point) {
  const Int8Code code = int8_code(inv_scale, zero_point, a.narrow_range);
  for (int64_t i = begin; i < end; ++i) {
    const float x = load_float(a.in, row * a.in_stride + i, a.float_dtype);
    if (a.quant_dtype == DType::kInt8) {
      static_cast<int8_t*>(a.out)[row * a.out_stride + i] = quantize_int8(x, code);
    } else {
      static_cast<uint8_t*>(a.out)[row * a.out_stride + i] = quantize_fp8(x, inv_scale);
    }
  }
}

// Dynamic modes: the statistics of one group give its scale (and zero point),
// written to the scale tensors, then its codes.
void quantize_group(const QuantArgs& a, int64_t row, int64_t group) {
  const int64_t begin = group * a.group_size, end = begin + a.group_size;
  GroupCode c;
  if (a.asymmetric) {
    c = code_of(stats_of<MinMax>(a, row, begin, end));
    a.azp[scale_index(a, row, group)] = c.zero_point;
  } else {
    const float qmax = a.quant_dtype == DType::kFloat8E4M3 ? numeric::kFp8E4M3Max : kInt8Max;
    c = code_of(stats_of<AbsMax>(a, row, begin, end), qmax);
  }
  a.scale[scale_index(a, row, group)] = c.scale;
  quantize_span(a, row, begin, end, c.inv_scale, c.zero_point);
}

}  // namespace

void quantize_cpu(const QuantArgs& a) {
  if (a.mode == QuantMode::kStaticPerTensor) {
    const float inv_scale = reciprocal(a.scale[0]);
    const int32_t zero_point = a.azp != nullptr ? a.azp[0] : 0;
#pragma omp parallel for schedule(static)
    for (int64_t row = 0; row < a.tokens; ++row) quantize_span(a, row, 0, a.hidden, inv_scale, zero_point);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t row = 0; row < a.tokens; ++row) {
    for (int64_t g = 0; g < a.groups; ++g) quantize_group(a, row, g);
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
