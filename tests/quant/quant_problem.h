// quant_problem.h — random activations with varied row magnitudes (outliers,
// constant rows, zero rows, optionally NaN / ±Inf) in possibly padded or
// misaligned rows, and the views quantize / dequantize take, for the CPU and
// CUDA quantization tests.
#pragma once

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "gemm/cpu/output_store.h"
#include "qgemm/quant.h"

namespace qgemm::test {

struct QuantCase {
  int64_t tokens = 1, hidden = 1;
  DType in = DType::kBFloat16;
  DType quant = DType::kInt8;
  QuantOptions options;
  bool scale_col_major = false;  // per-group scales stored [T,G] column-major
  bool specials = false;         // some rows hold NaN and ±Inf
  int64_t row_pad = 0;           // row stride = hidden + row_pad (activations and codes)
  int64_t offset = 0;            // first element at this offset (misaligns the rows)

  std::string name() const {
    const char* mode = options.mode == QuantMode::kStaticPerTensor ? "static"
                       : options.mode == QuantMode::kDynamicPerToken ? "token"
                                                                       : "group";
    return std::to_string(tokens) + "x" + std::to_string(hidden) + "_" + dtype_name(in) + "_" +
           dtype_name(quant) + "_" + mode +
           (options.mode == QuantMode::kDynamicPerGroup ? std::to_string(options.group_size) : "") +
           (options.symmetric ? "" : "_asym") + (options.narrow_range ? "_narrow" : "") +
           (scale_col_major ? "_colmajor" : "") + (specials ? "_nan" : "") +
           (row_pad ? "_pad" + std::to_string(row_pad) : "") + (offset ? "_off" + std::to_string(offset) : "");
  }
  int64_t groups() const {
    return options.mode == QuantMode::kDynamicPerGroup ? hidden / options.group_size : 1;
  }
  int64_t scale_count() const {
    return options.mode == QuantMode::kStaticPerTensor ? 1 : tokens * groups();
  }
  bool asymmetric() const { return !options.symmetric && quant == DType::kInt8; }
  int64_t stride() const { return hidden + row_pad; }
  int64_t elements() const { return offset + tokens * stride(); }
  int64_t index(int64_t row, int64_t i) const { return offset + row * stride() + i; }
};

// Rows of varied magnitudes: row r is scaled by 10^(r mod 7 − 3); every 5th
// row holds an outlier, every 11th is constant, every 13th is all zeros;
// with `specials`, every 4th row holds a NaN, +Inf and −Inf.
inline std::vector<uint8_t> random_activations(const QuantCase& c, std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<uint8_t> bytes(c.elements() * dtype_size(c.in), 0x7f);  // padding: NaN-ish junk
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < c.tokens; ++r) {
    const float magnitude = std::pow(10.0f, static_cast<float>(r % 7) - 3.0f);
    const float constant = normal(rng) * magnitude;
    for (int64_t i = 0; i < c.hidden; ++i) {
      float x = normal(rng) * magnitude;
      if (r % 11 == 10) x = constant;
      if (r % 13 == 12) x = 0.0f;
      if (r % 5 == 4 && i == (r * 31) % c.hidden) x *= 50.0f;
      if (c.specials && r % 4 == 1) {
        const int64_t k = (r * 7 + i) % 23;
        if (k == 0) x = std::nanf("");
        if (k == 5) x = (i % 2 ? -1.0f : 1.0f) * std::nanf("");
        if (k == 9) x = inf;
        if (k == 17) x = -inf;
      }
      detail::store_float(bytes.data(), c.index(r, i), c.in, x);
    }
  }
  return bytes;
}

struct QuantBuffers {
  QuantCase c;
  std::vector<uint8_t> in;           // activations, c.elements() of c.in
  std::vector<uint8_t> q;            // codes, same layout
  std::vector<float> scale;          // static: given; dynamic: written
  std::vector<int32_t> azp;          // asymmetric zero points
  std::vector<uint8_t> dequantized;  // same layout, c.in dtype

  QuantBuffers(const QuantCase& qc, std::mt19937_64& rng) : c(qc) {
    in = random_activations(c, rng);
    q.assign(c.elements(), 0xa5);
    scale.assign(c.scale_count(), -1.0f);
    if (c.asymmetric()) azp.assign(c.scale_count(), 12345);
    if (c.options.mode == QuantMode::kStaticPerTensor) {
      scale[0] = 0.0173f;
      if (!azp.empty()) azp[0] = 7;
    }
    dequantized.assign(c.elements() * dtype_size(c.in), 0xff);
  }

  TensorView matrix(const void* base, DType dtype, Device d) const {
    const auto* first = static_cast<const uint8_t*>(base) + c.offset * dtype_size(dtype);
    return TensorView::strided(first, dtype, {c.tokens, c.hidden}, {c.stride(), 1}, d);
  }
  TensorView in_view(const void* base, Device d = Device::cpu()) const { return matrix(base, c.in, d); }
  TensorView q_view(const void* base, Device d = Device::cpu()) const { return matrix(base, c.quant, d); }
  TensorView dequantized_view(const void* base, Device d = Device::cpu()) const { return matrix(base, c.in, d); }
  // [1] static, [T] per token, [T,G] per group (row- or column-major).
  TensorView scale_view(const void* base, DType dtype = DType::kFloat32, Device d = Device::cpu()) const {
    switch (c.options.mode) {
      case QuantMode::kStaticPerTensor: return TensorView(base, dtype, {1}, d);
      case QuantMode::kDynamicPerToken: return TensorView(base, dtype, {c.tokens}, d);
      default:
        return c.scale_col_major
                   ? TensorView::strided(base, dtype, {c.tokens, c.groups()}, {1, c.tokens}, d)
                   : TensorView(base, dtype, {c.tokens, c.groups()}, d);
    }
  }
  std::optional<TensorView> azp_view(const void* base, Device d = Device::cpu()) const {
    if (azp.empty()) return std::nullopt;
    return scale_view(base, DType::kInt32, d);
  }
  // Index of the scale of element (row, i).
  int64_t scale_index(int64_t row, int64_t i) const {
    switch (c.options.mode) {
      case QuantMode::kStaticPerTensor: return 0;
      case QuantMode::kDynamicPerToken: return row;
      default: {
        const int64_t g = i / c.options.group_size;
        return c.scale_col_major ? g * c.tokens + row : row * c.groups() + g;
      }
    }
  }
  float input(int64_t row, int64_t i) const { return detail::load_float(in.data(), c.index(row, i), c.in); }
  float output(int64_t row, int64_t i) const {
    return detail::load_float(dequantized.data(), c.index(row, i), c.in);
  }

  void quantize_cpu() { quantize(q_view(q.data()), scale_view(scale.data()), azp_view(azp.data()), in_view(in.data()), c.options); }
  void dequantize_cpu() {
    dequantize(dequantized_view(dequantized.data()), q_view(q.data()), scale_view(scale.data()),
               azp_view(azp.data()), c.options);
  }
};

}  // namespace qgemm::test
