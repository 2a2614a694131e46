// gemm_problem.h — a random scaled-GEMM problem held in host memory, its
// double-precision reference and the tolerance the arithmetic justifies.
// Used by the CPU tests (against the reference) and the CUDA tests (against
// the CPU backend).
#pragma once

#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/test_util.h"
#include "gemm/cpu/output_store.h"
#include "qgemm/gemm.h"

namespace qgemm::test {

enum class ZeroPoint { kNone, kPerTensor, kPerToken };

struct GemmCase {
  int64_t m = 1, n = 1, k = 1;
  DType input = DType::kInt8;
  DType out = DType::kBFloat16;
  bool per_token = true;
  bool per_channel = true;
  bool bias = true;
  ZeroPoint zero_point = ZeroPoint::kNone;
  // Extra elements past each row / column, to test sub-matrix views.
  int64_t lda_pad = 0, ldb_pad = 0, ldo_pad = 0;

  std::string name() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " " +
           dtype_name(input) + "->" + dtype_name(out) + (per_token ? " tok" : " ten") +
           (per_channel ? "/chn" : "/ten") + (bias ? " bias" : "") +
           (zero_point == ZeroPoint::kPerTensor  ? " azp-tensor"
            : zero_point == ZeroPoint::kPerToken ? " azp-token"
                                                 : "") +
           (lda_pad || ldb_pad || ldo_pad ? " padded" : "");
  }
};

// A GoogleTest-safe name ([A-Za-z0-9_]) for a parameterized case.
inline std::string gtest_name(const GemmCase& c, size_t index) {
  std::string name;
  for (char ch : c.name()) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name + "_" + std::to_string(index);
}

// A problem's random A and B and the generator's state after drawing them.
// The cases of one shape (epilogue_cases) each draw A and B from the same
// seed first, so they can share one draw, the slow part of a large
// problem's setup, and still get the scales, bias and zero points they
// would have drawn.
struct GemmOperands {
  std::vector<uint8_t> a;  // M rows of K + lda_pad
  std::vector<uint8_t> b;  // N columns of K + ldb_pad
  std::mt19937_64 rng_after;

  // Draws them for `c` (its shape, padding and input dtype) from `rng`,
  // which it advances past them.
  static GemmOperands draw(const GemmCase& c, std::mt19937_64& rng) {
    GemmOperands r;
    const int64_t a_bytes = c.m * (c.k + c.lda_pad), b_bytes = c.n * (c.k + c.ldb_pad);
    if (c.input == DType::kInt8) {
      const auto av = random_int8(rng, a_bytes);
      const auto bv = random_int8(rng, b_bytes);
      r.a.assign(av.begin(), av.end());
      r.b.assign(bv.begin(), bv.end());
    } else {
      r.a = random_fp8(rng, a_bytes, 16.0f);
      r.b = random_fp8(rng, b_bytes, 2.0f);
    }
    r.rng_after = rng;
    return r;
  }
};

struct GemmProblem {
  GemmCase c;
  int64_t lda, ldb, ldo;
  std::vector<uint8_t> a;  // int8 or fp8 bytes, M rows of lda
  std::vector<uint8_t> b;  // N columns of ldb (column-major [K,N])
  std::vector<float> scale_a, scale_b;
  std::vector<uint8_t> bias;  // N elements of the output dtype
  std::vector<int32_t> azp;   // per-token zero points [M]
  std::vector<int32_t> azp_adj;
  std::vector<uint8_t> out;  // M rows of ldo, poisoned

  explicit GemmProblem(const GemmCase& gemm_case, std::mt19937_64& rng)
      : GemmProblem(gemm_case, GemmOperands::draw(gemm_case, rng), &rng) {}
  // From operands drawn for a case of the same shape, padding and input
  // dtype: the problem drawing them from their seed here would give.
  GemmProblem(const GemmCase& gemm_case, GemmOperands operands)
      : GemmProblem(gemm_case, std::move(operands), nullptr) {}

  double a_value(int64_t i, int64_t k) const { return value_of_[a[i * lda + k]]; }
  double b_value(int64_t k, int64_t j) const { return value_of_[b[j * ldb + k]]; }

  // The exact accumulator Σ_k a·b, and Σ_k |a·b| (fp8's error bound).
  double accumulator(int64_t i, int64_t j) const { return exact_dot(i, j, value_of_); }
  double abs_accumulator(int64_t i, int64_t j) const { return exact_dot(i, j, magnitude_of_); }
  double scale(int64_t i, int64_t j) const {
    return static_cast<double>(scale_a[c.per_token ? i : 0]) * scale_b[c.per_channel ? j : 0];
  }
  double bias_value(int64_t j) const {
    return c.bias ? detail::load_float(bias.data(), j, c.out) : 0.0;
  }
  double zero_point_term(int64_t i, int64_t j) const {
    if (c.zero_point == ZeroPoint::kNone) return 0.0;
    return static_cast<double>(azp.empty() ? 1 : azp[i]) * azp_adj[j];
  }

  // D = s_a·s_b·(acc − z·adj) + C in double.
  double expected(int64_t i, int64_t j) const {
    return scale(i, j) * (accumulator(i, j) - zero_point_term(i, j)) + bias_value(j);
  }
  // One ulp of the output dtype over the magnitudes involved, plus the fp32
  // epilogue's two roundings, plus fp32 accumulation error for fp8 inputs.
  double tolerance(int64_t i, int64_t j) const {
    const double product = std::fabs(scale(i, j) * (accumulator(i, j) - zero_point_term(i, j)));
    const double magnitude = product + std::fabs(bias_value(j));
    double tol = unit_roundoff(c.out) * magnitude + 4 * std::ldexp(1.0, -24) * magnitude;
    if (c.input == DType::kFloat8E4M3) {
      tol += c.k * std::ldexp(1.0, -24) * scale(i, j) * abs_accumulator(i, j);
    }
    return tol + subnormal_spacing(c.out);
  }
  float out_value(int64_t i, int64_t j) const {
    return detail::load_float(out.data(), i * ldo + j, c.out);
  }

  // Views over these host buffers (or over device copies at the given bases).
  TensorView out_view(void* base, Device d = Device::cpu()) const {
    return TensorView::strided(base, c.out, {c.m, c.n}, {ldo, 1}, d);
  }
  TensorView a_view(const void* base, Device d = Device::cpu()) const {
    return TensorView::strided(base, c.input, {c.m, c.k}, {lda, 1}, d);
  }
  TensorView b_view(const void* base, Device d = Device::cpu()) const {
    return TensorView::strided(base, c.input, {c.k, c.n}, {1, ldb}, d);
  }
  TensorView scale_a_view(const void* base, Device d = Device::cpu()) const {
    return c.per_token ? TensorView(base, DType::kFloat32, {c.m, 1}, d)
                       : TensorView(base, DType::kFloat32, {1}, d);
  }
  TensorView scale_b_view(const void* base, Device d = Device::cpu()) const {
    return c.per_channel ? TensorView(base, DType::kFloat32, {1, c.n}, d)
                         : TensorView(base, DType::kFloat32, {1, 1}, d);
  }
  std::optional<TensorView> bias_view(const void* base, Device d = Device::cpu()) const {
    if (!c.bias) return std::nullopt;
    return TensorView(base, c.out, {c.n}, d);
  }
  TensorView azp_adj_view(const void* base, Device d = Device::cpu()) const {
    return TensorView(base, DType::kInt32, {c.n}, d);
  }
  std::optional<TensorView> azp_view(const void* base, Device d = Device::cpu()) const {
    if (c.zero_point != ZeroPoint::kPerToken) return std::nullopt;
    return TensorView(base, DType::kInt32, {c.m}, d);
  }

  // Runs qgemm on the CPU over the host buffers.
  void run_cpu() {
    if (c.zero_point == ZeroPoint::kNone) {
      scaled_mm(out_view(out.data()), a_view(a.data()), b_view(b.data()),
                scale_a_view(scale_a.data()), scale_b_view(scale_b.data()),
                bias_view(bias.data()));
    } else {
      scaled_mm_azp(out_view(out.data()), a_view(a.data()), b_view(b.data()),
                    scale_a_view(scale_a.data()), scale_b_view(scale_b.data()),
                    azp_adj_view(azp_adj.data()), azp_view(azp.data()), bias_view(bias.data()));
    }
  }

 private:
  // A and B from `operands`, then the epilogue's inputs from *caller_rng,
  // or where that is null from this call's copy of operands.rng_after.
  GemmProblem(const GemmCase& gemm_case, GemmOperands operands, std::mt19937_64* caller_rng)
      : c(gemm_case), a(std::move(operands.a)), b(std::move(operands.b)) {
    std::mt19937_64& rng = caller_rng != nullptr ? *caller_rng : operands.rng_after;
    lda = c.k + c.lda_pad;
    ldb = c.k + c.ldb_pad;
    ldo = c.n + c.ldo_pad;
    for (int raw = 0; raw < 256; ++raw) {
      value_of_[raw] = input_value(static_cast<uint8_t>(raw));
      magnitude_of_[raw] = std::fabs(value_of_[raw]);
    }
    scale_a = random_float(rng, c.per_token ? c.m : 1, 1e-3f, 2e-2f);
    scale_b = random_float(rng, c.per_channel ? c.n : 1, 1e-3f, 2e-2f);
    if (c.bias) {
      const auto values = random_float(rng, c.n, -4.0f, 4.0f);
      bias.resize(c.n * dtype_size(c.out));
      for (int64_t j = 0; j < c.n; ++j) detail::store_float(bias.data(), j, c.out, values[j]);
    }
    if (c.zero_point == ZeroPoint::kPerToken) {
      azp = random_int32(rng, c.m, -128, 127);
      azp_adj = column_sums(1);
    } else if (c.zero_point == ZeroPoint::kPerTensor) {
      azp_adj = column_sums(random_int32(rng, 1, -128, 127)[0]);
    }
    out.resize(c.m * ldo * dtype_size(c.out));
    poison(out.data(), out.size());
  }

  // The input dtype's value of each byte, and its magnitude.
  std::array<double, 256> value_of_{}, magnitude_of_{};

  // Σ_k f(a_ik)·f(b_kj) in four running sums. Exact in any order: a product
  // of two int8 or two e4m3 values is a multiple of 2^-18 below 2^18, so for
  // K ≤ 2^16 every partial sum is a multiple of 2^-18 below 2^34, which a
  // double holds exactly (52 bits). Four sums and the table run the fp8
  // comparisons ~10× faster than one sum of decoded bytes (they bound the
  // GPU suite's time).
  double exact_dot(int64_t i, int64_t j, const std::array<double, 256>& f) const {
    const uint8_t* x = a.data() + i * lda;
    const uint8_t* y = b.data() + j * ldb;
    double sum[4] = {0, 0, 0, 0};
    int64_t k = 0;
    for (; k + 4 <= c.k; k += 4) {
      for (int u = 0; u < 4; ++u) sum[u] += f[x[k + u]] * f[y[k + u]];
    }
    for (; k < c.k; ++k) sum[0] += f[x[k]] * f[y[k]];
    return (sum[0] + sum[1]) + (sum[2] + sum[3]);
  }
  double input_value(uint8_t raw) const {
    return c.input == DType::kInt8 ? static_cast<double>(static_cast<int8_t>(raw))
                                   : numeric::fp8e4m3_bits_to_float(raw);
  }
  std::vector<int32_t> column_sums(int32_t zero_point) const {
    std::vector<int32_t> sums(c.n);
    for (int64_t j = 0; j < c.n; ++j) {
      int32_t s = 0;
      for (int64_t k = 0; k < c.k; ++k) s += static_cast<int8_t>(b[j * ldb + k]);
      sums[j] = zero_point * s;
    }
    return sums;
  }
};

// Counts the elements of `got` that differ from the reference by more than
// the tolerance (or are not finite), reporting the first few.
inline int64_t count_mismatches(const GemmProblem& p, int max_reports = 5) {
  int64_t bad = 0;
  for (int64_t i = 0; i < p.c.m; ++i) {
    for (int64_t j = 0; j < p.c.n; ++j) {
      const double want = p.expected(i, j);
      const double got = p.out_value(i, j);
      if (!(std::fabs(got - want) <= p.tolerance(i, j))) {
        if (bad < max_reports) {
          ADD_FAILURE() << p.c.name() << ": out[" << i << "," << j << "] = " << got
                        << ", expected " << want << " ± " << p.tolerance(i, j);
        }
        ++bad;
      }
    }
  }
  return bad;
}

}  // namespace qgemm::test
