// Offline 4-bit weight preparation (CPU): asymmetric per-group quantization
// into packed nibbles, and packing / unpacking (qgemm/quant.h).
//
// Packed layout: byte j of a row holds element 2j in bits 0–3 and element
// 2j+1 in bits 4–7, both unsigned (0…15).
#include <algorithm>
#include <string>

#include "core/check.h"
#include "gemm/cpu/output_store.h"
#include "qgemm/quant.h"
#include "quant/quant_math.h"

namespace qgemm {
namespace {

using detail::fail;

void check_cpu(const TensorView& t, const char* name) {
  if (!t.device().is_cpu()) {
    fail(ErrorKind::kValue, std::string(name) + ": int4 weight preparation runs on the CPU (offline); got a tensor on " +
                                detail::device_string(t.device()));
  }
}

void check_cpu_matrix(const TensorView& t, const char* name, const char* rows_symbol, int64_t rows,
                      const char* cols_symbol, int64_t cols) {
  check_cpu(t, name);
  detail::check_row_major(t, name, rows_symbol, rows, cols_symbol, cols);
  detail::check_not_null(t, name);
  detail::check_element_aligned(t, name);
}

// scale / offset [N, G]: row-major, or group-major — a [G, N] row-major
// tensor viewed transposed (strides (1, ld ≥ N)), the layout weight_only_mm
// reads fastest (docs/weight_only.md, "Group-major scales and offsets").
// Returns where row n's group g goes: n·row + g·col.
detail::MatrixSteps check_param_output(const TensorView& t, const char* name, int64_t n, int64_t groups) {
  check_cpu(t, name);
  const detail::MatrixSteps steps = detail::check_row_or_col_major(t, name, "N", n, "K/group_size", groups);
  detail::check_not_null(t, name);
  detail::check_element_aligned(t, name);
  return steps;
}

void check_even_k(int64_t k, const char* name) {
  if (k % 2 != 0) fail(ErrorKind::kValue, std::string(name) + ": K=" + std::to_string(k) + " must be even to pack two 4-bit values per byte");
}

uint8_t* row_ptr(const TensorView& t, int64_t row) {
  return static_cast<uint8_t*>(t.data()) + row * (t.size(0) > 1 ? t.stride(0) : t.size(1)) * dtype_size(t.dtype());
}

}  // namespace

void pack_int4(const TensorView& out_packed, const TensorView& values) {
  detail::check_dtype(values, "values", {DType::kUInt8});
  detail::check_dtype(out_packed, "out_packed", {DType::kUInt8});
  detail::check_rank(values, "values", 2);
  const int64_t n = values.size(0), k = values.size(1);
  check_even_k(k, "values");
  check_cpu_matrix(values, "values", "N", n, "K", k);
  check_cpu_matrix(out_packed, "out_packed", "N", n, "K/2", k / 2);
  for (int64_t row = 0; row < n; ++row) {
    const uint8_t* v = row_ptr(values, row);
    for (int64_t i = 0; i < k; ++i) {
      if (v[i] > 15) {
        fail(ErrorKind::kValue, "values: element [" + std::to_string(row) + ", " + std::to_string(i) +
                                    "] = " + std::to_string(v[i]) + " does not fit in 4 bits (0…15)");
      }
    }
  }
  for (int64_t row = 0; row < n; ++row) {
    const uint8_t* v = row_ptr(values, row);
    uint8_t* p = row_ptr(out_packed, row);
    for (int64_t j = 0; j < k / 2; ++j) p[j] = static_cast<uint8_t>(v[2 * j] | (v[2 * j + 1] << 4));
  }
}

void unpack_int4(const TensorView& out_values, const TensorView& packed) {
  detail::check_dtype(packed, "packed", {DType::kUInt8});
  detail::check_dtype(out_values, "out_values", {DType::kUInt8});
  detail::check_rank(out_values, "out_values", 2);
  const int64_t n = out_values.size(0), k = out_values.size(1);
  check_even_k(k, "out_values");
  check_cpu_matrix(out_values, "out_values", "N", n, "K", k);
  check_cpu_matrix(packed, "packed", "N", n, "K/2", k / 2);
  for (int64_t row = 0; row < n; ++row) {
    const uint8_t* p = row_ptr(packed, row);
    uint8_t* v = row_ptr(out_values, row);
    for (int64_t j = 0; j < k / 2; ++j) {
      v[2 * j] = p[j] & 0x0f;
      v[2 * j + 1] = p[j] >> 4;
    }
  }
}

void quantize_weight_int4(const TensorView& out_packed, const TensorView& scale,
                          const TensorView& offset, const TensorView& w, int group_size) {
  using namespace detail::quant;
  detail::check_dtype(w, "w", {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
  detail::check_dtype(out_packed, "out_packed", {DType::kUInt8});
  detail::check_dtype(scale, "scale", {DType::kFloat32});
  detail::check_dtype(offset, "offset", {DType::kFloat32});
  detail::check_rank(w, "w", 2);
  const int64_t n = w.size(0), k = w.size(1);
  check_even_k(k, "w");
  if (group_size < 2 || k % group_size != 0 || group_size % 2 != 0) {
    fail(ErrorKind::kValue, "group_size: expected an even divisor of K=" + std::to_string(k) +
                                " (32, 64, 128 or K for per-channel), got " + std::to_string(group_size));
  }
  const int64_t groups = k / group_size;
  check_cpu_matrix(w, "w", "N", n, "K", k);
  check_cpu_matrix(out_packed, "out_packed", "N", n, "K/2", k / 2);
  const detail::MatrixSteps scale_at = check_param_output(scale, "scale", n, groups);
  const detail::MatrixSteps offset_at = check_param_output(offset, "offset", n, groups);

  const int64_t w_stride = n > 1 ? w.stride(0) : k;
#pragma omp parallel for schedule(static)
  for (int64_t row = 0; row < n; ++row) {
    uint8_t* packed = row_ptr(out_packed, row);
    float* scales = static_cast<float*>(scale.data()) + row * scale_at.row;
    float* offsets = static_cast<float*>(offset.data()) + row * offset_at.row;
    for (int64_t g = 0; g < groups; ++g) {
      MinMax stats;
      for (int64_t i = g * group_size; i < (g + 1) * group_size; ++i) {
        stats.add(detail::load_float(w.data(), row * w_stride + i, w.dtype()));
      }
      // w ≈ q·scale + offset with q ∈ [0, 15]: offset = lo, scale = (hi − lo) / 15.
      const float s = usable_scale(div(sub(stats.hi, stats.lo), 15.0f));
      const float inv_scale = reciprocal(s);
      scales[g * scale_at.col] = s;
      offsets[g * offset_at.col] = stats.lo;
      for (int64_t i = g * group_size; i < (g + 1) * group_size; i += 2) {
        uint8_t q[2];
        for (int e = 0; e < 2; ++e) {
          const float x = detail::load_float(w.data(), row * w_stride + i + e, w.dtype());
          q[e] = static_cast<uint8_t>(std::clamp(round_to_int32(mul(sub(x, stats.lo), inv_scale)), 0, 15));
        }
        packed[i / 2] = static_cast<uint8_t>(q[0] | (q[1] << 4));
      }
    }
  }
}

}  // namespace qgemm
