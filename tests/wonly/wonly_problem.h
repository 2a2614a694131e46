// wonly_problem.h — a random weight-only GEMM problem in host memory: the
// quantized weight (plain layout), its scales / offsets, activations, bias,
// a double-precision reference and the tolerances the arithmetic justifies.
// Shared by the CPU tests (against the reference) and the CUDA tests (against
// the CPU twin).
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "gemm/cpu/output_store.h"
#include "qgemm/weight_only.h"
#include "wonly/wonly_math.h"

namespace qgemm::test {

struct WonlyCase {
  int64_t m = 1, n = 64, k = 128;
  bool int4 = true;
  int group_size = 128;  // 0: per channel (K)
  DType dtype = DType::kBFloat16;
  bool offsets = true;
  bool bias = true;
  bool prepacked = false;
  int64_t lda_pad = 0, ldo_pad = 0, ldw_pad = 0;  // extra elements / bytes per row

  int group() const { return group_size == 0 ? static_cast<int>(k) : group_size; }
  std::string name() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
           (int4 ? " int4" : " int8") + " g" + std::to_string(group()) + " " + dtype_name(dtype) +
           (offsets ? " off" : "") + (bias ? " bias" : "") + (prepacked ? " prepacked" : "") +
           (lda_pad || ldo_pad || ldw_pad ? " padded" : "");
  }
};

inline std::string gtest_name(const WonlyCase& c, size_t index) {
  std::string name;
  for (char ch : c.name()) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name + "_" + std::to_string(index);
}

// The weight side (shared by every M of a shape on the GPU tests).
struct WonlyWeights {
  int64_t n, k;
  bool int4;
  int group;
  int64_t ldw;                 // bytes per plain row
  std::vector<uint8_t> w;      // plain layout, N rows of ldw bytes
  std::vector<float> scales;   // [N, K/group]
  std::vector<float> offsets;  // [N, K/group] or empty
  // With 16-bit parameters (use_16bit_params): their bits in param_dtype,
  // the same values as `scales` / `offsets`.
  DType param_dtype = DType::kFloat32;
  std::vector<uint16_t> scales16, offsets16;

  WonlyWeights(int64_t n_, int64_t k_, bool int4_, int group_, bool with_offsets, int64_t ldw_pad,
               std::mt19937_64& rng)
      : n(n_), k(k_), int4(int4_), group(group_), ldw((int4_ ? k_ / 2 : k_) + ldw_pad) {
    w.resize(static_cast<size_t>(n * ldw));
    for (size_t i = 0; i < w.size(); i += 8) {  // 8 random bytes per draw (weights reach 235 MB)
      const uint64_t bits = rng();
      for (size_t b = 0; b < 8 && i + b < w.size(); ++b) w[i + b] = static_cast<uint8_t>(bits >> (8 * b));
    }
    set_params(group_, with_offsets, rng);
  }
  void set_params(int group_, bool with_offsets, std::mt19937_64& rng) {
    group = group_;
    const int64_t count = n * (k / group);
    // int4 q ∈ [0,15], int8 q ∈ [−128,127]: keep ŵ = q·s + o of order 1.
    scales = int4 ? random_float(rng, count, 0.01f, 0.1f) : random_float(rng, count, 1e-3f, 1e-2f);
    offsets.clear();
    if (with_offsets) offsets = int4 ? random_float(rng, count, -0.8f, 0.0f) : random_float(rng, count, -0.1f, 0.1f);
  }
  // Rounds the parameters to T (RNE) and keeps their T bits: the views then
  // hand out 16-bit parameters; `scales` / `offsets` hold the same values.
  void use_16bit_params(DType t) {
    param_dtype = t;
    scales16 = to_half_bits(scales, t);
    offsets16 = to_half_bits(offsets, t);
    for (size_t i = 0; i < scales.size(); ++i) scales[i] = static_cast<float>(detail::load_float(scales16.data(), i, t));
    for (size_t i = 0; i < offsets.size(); ++i) offsets[i] = static_cast<float>(detail::load_float(offsets16.data(), i, t));
  }
  int64_t param_bytes() const { return param_dtype == DType::kFloat32 ? 4 : 2; }
  // Host copies of the parameters in param_dtype.
  const void* scales_host() const { return param_dtype == DType::kFloat32 ? static_cast<const void*>(scales.data()) : scales16.data(); }
  const void* offsets_host() const { return param_dtype == DType::kFloat32 ? static_cast<const void*>(offsets.data()) : offsets16.data(); }
  int64_t groups() const { return k / group; }
  int q(int64_t row, int64_t col) const {
    const uint8_t* r = &w[row * ldw];
    return int4 ? detail::wonly::int4_at(r, col) : static_cast<int8_t>(r[col]);
  }
  double w_hat(int64_t row, int64_t col, DType dtype) const {
    const int64_t g = col / group;
    const float o = offsets.empty() ? 0.0f : offsets[row * groups() + g];
    return detail::wonly::dequant_weight(q(row, col), scales[row * groups() + g], o,
                                         dtype == DType::kBFloat16);
  }
  // Views of rows [row0, row0 + rows) of the plain weight / params.
  TensorView w_view(const void* base, int64_t row0, int64_t rows, Device d = Device::cpu()) const {
    return TensorView::strided(static_cast<const uint8_t*>(base) + row0 * ldw,
                               int4 ? DType::kUInt8 : DType::kInt8, {rows, int4 ? k / 2 : k},
                               {ldw, 1}, d);
  }
  TensorView scales_view(const void* base, int64_t row0, int64_t rows, Device d = Device::cpu()) const {
    return TensorView(static_cast<const uint8_t*>(base) + row0 * groups() * param_bytes(), param_dtype,
                      {rows, groups()}, d);
  }
  std::optional<TensorView> offsets_view(const void* base, int64_t row0, int64_t rows,
                                         Device d = Device::cpu()) const {
    if (offsets.empty()) return std::nullopt;
    return scales_view(base, row0, rows, d);
  }
  // Parameters (`row_major`: scales_host() or offsets_host()) in group-major
  // order: `shift` filler elements, then group g's N values at shift + g·ld
  // (ld ≥ N; the filler and the padding hold 0xff bytes, NaN if ever read).
  std::vector<uint8_t> group_major_bytes(const void* row_major, int64_t ld, int64_t shift) const {
    const int64_t bytes = param_bytes();
    std::vector<uint8_t> out(static_cast<size_t>((shift + groups() * ld) * bytes), 0xff);
    const auto* src = static_cast<const uint8_t*>(row_major);
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t g = 0; g < groups(); ++g) {
        std::copy_n(src + (r * groups() + g) * bytes, bytes, &out[static_cast<size_t>((shift + g * ld + r) * bytes)]);
      }
    }
    return out;
  }
  // The [N, K/group] view of group_major_bytes' layout: strides (1, ld).
  TensorView group_major_view(const void* base, int64_t ld, int64_t shift, Device d = Device::cpu()) const {
    return TensorView::strided(static_cast<const uint8_t*>(base) + shift * param_bytes(), param_dtype,
                               {n, groups()}, {1, ld}, d);
  }
};

// The activation side and the output of one call.
struct WonlyActs {
  int64_t m, k, lda, ldo, n;
  DType dtype;
  std::vector<uint16_t> a;     // M rows of lda
  std::vector<uint16_t> bias;  // [N] or empty
  std::vector<uint16_t> out;   // M rows of ldo, poisoned

  WonlyActs(const WonlyCase& c, std::mt19937_64& rng)
      : m(c.m), k(c.k), lda(c.k + c.lda_pad), ldo(c.n + c.ldo_pad), n(c.n), dtype(c.dtype) {
    a = to_half_bits(random_float(rng, m * lda, -1.0f, 1.0f), dtype);
    if (c.bias) bias = to_half_bits(random_float(rng, n, -2.0f, 2.0f), dtype);
    out.resize(static_cast<size_t>(m * ldo));
    poison(out.data(), out.size() * 2);
  }
  double a_value(int64_t i, int64_t kk) const { return detail::load_float(a.data(), i * lda + kk, dtype); }
  double bias_value(int64_t j) const { return bias.empty() ? 0.0 : detail::load_float(bias.data(), j, dtype); }
  double out_value(const std::vector<uint16_t>& o, int64_t i, int64_t j, int64_t ld) const {
    return detail::load_float(o.data(), i * ld + j, dtype);
  }
  TensorView a_view(const void* base, Device d = Device::cpu()) const {
    return TensorView::strided(base, dtype, {m, k}, {lda, 1}, d);
  }
  TensorView out_view(void* base, int64_t cols, int64_t ld, Device d = Device::cpu()) const {
    return TensorView::strided(base, dtype, {m, cols}, {ld, 1}, d);
  }
  std::optional<TensorView> bias_view(const void* base, int64_t col0, int64_t cols,
                                      Device d = Device::cpu()) const {
    if (bias.empty()) return std::nullopt;
    return TensorView(static_cast<const uint16_t*>(base) + col0, dtype, {cols}, d);
  }
};

// Σ_k |a·ŵ| + |bias| for out[i, j]: the magnitude the fp32 error bounds scale with.
inline double magnitude(const WonlyActs& x, const WonlyWeights& w, int64_t i, int64_t j) {
  double sum = std::fabs(x.bias_value(j));
  for (int64_t kk = 0; kk < x.k; ++kk) sum += std::fabs(x.a_value(i, kk) * w.w_hat(j, kk, x.dtype));
  return sum;
}

// Reference: exact products (T×T fits fp32), summed in double.
inline double reference(const WonlyActs& x, const WonlyWeights& w, int64_t i, int64_t j) {
  double sum = 0;
  for (int64_t kk = 0; kk < x.k; ++kk) sum += x.a_value(i, kk) * w.w_hat(j, kk, x.dtype);
  return sum + x.bias_value(j);
}

// One result vs the exact value: fp32 summation of K terms (γ_K ≤ K·2^-24
// relative to Σ|a·ŵ|), the bias add (2^-24), and the final rounding to T.
inline double tolerance_vs_exact(double exact, double mag, int64_t k, DType dtype) {
  return (k + 1) * std::ldexp(1.0, -24) * mag + unit_roundoff(dtype) * std::fabs(exact) +
         subnormal_spacing(dtype);
}

// Two fp32 sums of the same exact products in different orders (CPU lanes vs
// tensor-core tiles split across warps), compared after rounding to T. The
// order-free bound is 2(K+1)·2^-24·Σ|a·ŵ|, but it is too loose to notice a
// dropped 32-element chunk at K = 8192. Rounding errors of random sign grow
// like √K, and tensor cores that truncate lose at most (K/8)·2^-24·|acc| over
// their K/16 accumulations (|acc| ≤ Σ|a·ŵ|), so we take
// min(2(K+1), 16√K + K/8 + 64)·2^-24·Σ|a·ŵ|, plus one ulp of T.
inline double tolerance_between(double value, double mag, int64_t k, DType dtype) {
  const double terms = std::min(2.0 * (k + 1), 16.0 * std::sqrt(static_cast<double>(k)) + k / 8.0 + 64.0);
  return terms * std::ldexp(1.0, -24) * mag + unit_roundoff(dtype) * std::fabs(value) +
         subnormal_spacing(dtype);
}

}  // namespace qgemm::test
