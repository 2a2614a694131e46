// Offline 4-bit weight preparation (CPU): asymmetric per-group quantization
// into packed nibbles, packing / unpacking, and GPTQ / AWQ checkpoints into
// the same layout (qgemm/quant.h).
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

// Elements from one row of a validated matrix to the next (one row: its length).
int64_t row_stride(const TensorView& t) { return t.size(0) > 1 ? t.stride(0) : t.size(1); }

uint8_t* row_ptr(const TensorView& t, int64_t row) {
  return static_cast<uint8_t*>(t.data()) + row * row_stride(t) * dtype_size(t.dtype());
}

// ---- GPTQ / AWQ checkpoints -----------------------------------------------

// Nibble i (bits 4i…4i+3) of a packed int32 word.
uint8_t nibble(int32_t word, int i) { return static_cast<uint8_t>((static_cast<uint32_t>(word) >> (4 * i)) & 0xFu); }

// A checkpoint layer's sizes, from its validated tensors.
struct Int4Layer {
  int64_t k = 0, n = 0, groups = 0;
  detail::MatrixSteps offsets_at{};  // out_offsets: (row n, group g) at n·row + g·col
};

// The checks both formats share: qweight [qweight_rows, qweight_cols] and
// qzeros [G, N/8] int32 row-major, scales [G, N] row-major (G divides K),
// out_w uint8 [N, K/2], out_offsets [N, G] row- or group-major.
Int4Layer check_int4_checkpoint(const TensorView& out_w, const TensorView& out_offsets, const TensorView& qweight,
                                const TensorView& qzeros, const TensorView& scales, int64_t k, int64_t n) {
  detail::check_dtype(qweight, "qweight", {DType::kInt32});
  detail::check_dtype(qzeros, "qzeros", {DType::kInt32});
  detail::check_dtype(scales, "scales", {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
  detail::check_dtype(out_w, "out_w", {DType::kUInt8});
  detail::check_dtype(out_offsets, "out_offsets", {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
  detail::check_rank(scales, "scales", 2);
  Int4Layer layer;
  layer.k = k;
  layer.n = n;
  layer.groups = scales.size(0);
  check_cpu_matrix(qweight, "qweight", "rows", qweight.size(0), "columns", qweight.size(1));
  if (n % 8 != 0) {
    fail(ErrorKind::kValue, "qweight: N=" + std::to_string(n) + " must be a multiple of 8 (eight zero points per qzeros word)");
  }
  check_cpu_matrix(scales, "scales", "K/group_size", layer.groups, "N", n);
  if (layer.groups < 1 || k % layer.groups != 0) {
    fail(ErrorKind::kValue, "scales: " + std::to_string(layer.groups) + " groups (rows) do not divide K=" +
                                std::to_string(k));
  }
  check_cpu_matrix(qzeros, "qzeros", "K/group_size", layer.groups, "N/8", n / 8);
  check_cpu_matrix(out_w, "out_w", "N", n, "K/2", k / 2);
  layer.offsets_at = check_param_output(out_offsets, "out_offsets", n, layer.groups);
  return layer;
}

// out_offsets[n, g] = −z·s (exact in fp32; one rounding in 16 bits), z = zero(g, n).
template <class ZeroAt>
void write_offsets(const TensorView& out_offsets, const TensorView& scales, const Int4Layer& layer, ZeroAt zero) {
  const int64_t scales_ld = row_stride(scales);
  for (int64_t g = 0; g < layer.groups; ++g) {
    for (int64_t col = 0; col < layer.n; ++col) {
      const float s = detail::load_float(scales.data(), g * scales_ld + col, scales.dtype());
      detail::store_float(out_offsets.data(), col * layer.offsets_at.row + g * layer.offsets_at.col,
                          out_offsets.dtype(), -static_cast<float>(zero(g, col)) * s);
    }
  }
}

}  // namespace

void int4_from_gptq(const TensorView& out_w, const TensorView& out_offsets, const TensorView& qweight,
                    const TensorView& qzeros, const TensorView& scales, const std::optional<TensorView>& g_idx,
                    int zero_offset) {
  detail::check_rank(qweight, "qweight", 2);
  detail::check_rank(qzeros, "qzeros", 2);
  const int64_t k = qweight.size(0) * 8, n = qweight.size(1);
  const Int4Layer layer = check_int4_checkpoint(out_w, out_offsets, qweight, qzeros, scales, k, n);
  if (zero_offset != 0 && zero_offset != 1) {
    fail(ErrorKind::kValue, "zero_offset: expected 1 (gptq v1 checkpoints store z − 1) or 0 (gptq_v2), got " +
                                std::to_string(zero_offset));
  }
  const int64_t group_size = k / layer.groups;
  if (g_idx) {
    detail::check_dtype(*g_idx, "g_idx", {DType::kInt32, DType::kInt64});
    check_cpu(*g_idx, "g_idx");
    if (g_idx->rank() != 1 || g_idx->size(0) != k || (k > 1 && g_idx->stride(0) != 1)) {
      fail(ErrorKind::kValue, "g_idx: expected a contiguous [K=" + std::to_string(k) + "] vector, got shape " +
                                  detail::shape_string(*g_idx));
    }
    detail::check_not_null(*g_idx, "g_idx");
    for (int64_t i = 0; i < k; ++i) {
      const int64_t group = g_idx->dtype() == DType::kInt32 ? static_cast<const int32_t*>(g_idx->data())[i]
                                                            : static_cast<const int64_t*>(g_idx->data())[i];
      if (group != i / group_size) {
        fail(ErrorKind::kValue, "g_idx: an act-order (desc_act) checkpoint (g_idx[" + std::to_string(i) + "] = " +
                                    std::to_string(group) + ", expected k / group_size = " +
                                    std::to_string(i / group_size) +
                                    "): weight_only_mm needs contiguous groups along K");
      }
    }
  }
  // Word [r, col] holds q[col, 8r + i] in nibble i: four bytes of row col.
  const auto* words = static_cast<const int32_t*>(qweight.data());
  const int64_t words_ld = row_stride(qweight), w_ld = row_stride(out_w);
  auto* w = static_cast<uint8_t*>(out_w.data());
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < k / 8; ++r) {
    for (int64_t col = 0; col < n; ++col) {
      const int32_t word = words[r * words_ld + col];
      for (int j = 0; j < 4; ++j) {
        w[col * w_ld + 4 * r + j] = static_cast<uint8_t>(nibble(word, 2 * j) | (nibble(word, 2 * j + 1) << 4));
      }
    }
  }
  const auto* zeros = static_cast<const int32_t*>(qzeros.data());
  const int64_t zeros_ld = row_stride(qzeros);
  write_offsets(out_offsets, scales, layer, [&](int64_t g, int64_t col) {
    return nibble(zeros[g * zeros_ld + col / 8], static_cast<int>(col % 8)) + zero_offset;
  });
}

void int4_from_awq(const TensorView& out_w, const TensorView& out_offsets, const TensorView& qweight,
                   const TensorView& qzeros, const TensorView& scales) {
  detail::check_rank(qweight, "qweight", 2);
  detail::check_rank(qzeros, "qzeros", 2);
  const int64_t k = qweight.size(0), n = qweight.size(1) * 8;
  if (k % 2 != 0) fail(ErrorKind::kValue, "qweight: K=" + std::to_string(k) + " rows must be even to pack two per byte");
  const Int4Layer layer = check_int4_checkpoint(out_w, out_offsets, qweight, qzeros, scales, k, n);
  // Word [k, c] holds q[8c + kAwqOrder[i], k] in nibble i; rows k and k + 1
  // meet in one byte of each output row.
  const auto* words = static_cast<const int32_t*>(qweight.data());
  const int64_t words_ld = row_stride(qweight), w_ld = row_stride(out_w);
  auto* w = static_cast<uint8_t*>(out_w.data());
#pragma omp parallel for schedule(static)
  for (int64_t pair = 0; pair < k / 2; ++pair) {
    for (int64_t c = 0; c < n / 8; ++c) {
      const int32_t even = words[2 * pair * words_ld + c], odd = words[(2 * pair + 1) * words_ld + c];
      for (int i = 0; i < 8; ++i) {
        w[(8 * c + kAwqOrder[i]) * w_ld + pair] = static_cast<uint8_t>(nibble(even, i) | (nibble(odd, i) << 4));
      }
    }
  }
  // The column of nibble i of a word is 8c + kAwqOrder[i]: invert for the zeros.
  int nibble_of_column[8];
  for (int i = 0; i < 8; ++i) nibble_of_column[kAwqOrder[i]] = i;
  const auto* zeros = static_cast<const int32_t*>(qzeros.data());
  const int64_t zeros_ld = row_stride(qzeros);
  write_offsets(out_offsets, scales, layer, [&](int64_t g, int64_t col) {
    return static_cast<int>(nibble(zeros[g * zeros_ld + col / 8], nibble_of_column[col % 8]));
  });
}

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

  const int64_t w_stride = row_stride(w);
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
