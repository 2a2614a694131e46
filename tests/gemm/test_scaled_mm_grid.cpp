// GPU test of scaled_mm / scaled_mm_azp over the shape grid:
// M ∈ {1, 2, 3, 7, 16, 17, 33, 64, 100, 128, 255, 256, 1000, 1024, 4096} ×
// the model (N, K) list plus odd ones (N = 4095 and 1001 take the
// direct-store kernel on Hopper above M = 16, N = 8184 — a multiple of 8,
// not of 16 — the TMA kernels with a clipped last tile), for int8 and fp8. These
// problems are too large for a full CPU reference, so each run is checked
//   - on every element for having been written (NaN-poisoned first), and
//   - on sampled rows (first, last, middle, random) × sampled columns
//     against the exact host reference: the int32 (or exact fp8) dot product
//     through gemm/epilogue_math.h, the CPU backend's own expression.
// The epilogue variant (granularities, bias, zero points, output dtype)
// rotates with the shape so every variant meets large and ragged shapes.
// Tolerances: as in test_scaled_mm_kernels.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/cuda_buffer.h"
#include "gemm/epilogue_math.h"
#include "gemm/gemm_problem.h"

namespace qgemm::test {
namespace {

const Device kGpu = Device::cuda(0);
constexpr int64_t kMs[] = {1, 2, 3, 7, 16, 17, 33, 64, 100, 128, 255, 256, 1000, 1024, 4096};

uint64_t splitmix(uint64_t& state) {
  uint64_t x = (state += 0x9e3779b97f4a7c15ull);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Random 8-bit operands, fast enough for half a gigabyte: int8 uniform, fp8
// finite values of magnitude ≤ 2 (exponent field ≤ 8, never the NaN code).
std::vector<uint8_t> random_bytes(size_t count, DType dtype, uint64_t seed) {
  std::vector<uint8_t> v(count);
  for (size_t i = 0; i < count; i += 8) {
    uint64_t r = splitmix(seed);
    for (size_t j = i; j < std::min(count, i + 8); ++j, r >>= 8) {
      uint8_t byte = static_cast<uint8_t>(r);
      if (dtype == DType::kFloat8E4M3) byte = (byte & 0x80) | ((byte & 0x7f) % 0x48);
      v[j] = byte;
    }
  }
  return v;
}

struct Variant {
  DType out;
  bool per_token, per_channel, bias;
  ZeroPoint zero_point;
};
constexpr Variant kVariants[] = {
    {DType::kBFloat16, true, true, true, ZeroPoint::kNone},  {DType::kFloat16, false, true, true, ZeroPoint::kNone},
    {DType::kBFloat16, true, false, false, ZeroPoint::kPerTensor}, {DType::kFloat16, true, true, true, ZeroPoint::kPerToken},
    {DType::kBFloat16, false, false, true, ZeroPoint::kPerToken},  {DType::kFloat16, true, true, false, ZeroPoint::kNone},
};

// One (N, K) weight with its vectors, and activations for the largest M.
class GridShape {
 public:
  GridShape(int64_t n, int64_t k, DType input, int64_t max_m)
      : n_(n), k_(k), max_m_(max_m), input_(input),
        a_(random_bytes(max_m * k, input, n * 31 + k)), b_(random_bytes(n * k, input, n * 17 + k * 3)),
        d_a_(a_), d_b_(b_) {
    auto rng = make_rng(static_cast<uint64_t>(n + k));
    scale_a_ = random_float(rng, max_m, 1e-3f, 2e-2f);
    scale_b_ = random_float(rng, n, 1e-3f, 2e-2f);
    azp_ = random_int32(rng, max_m, -128, 127);
    for (DType out : {DType::kBFloat16, DType::kFloat16}) bias_[out == DType::kFloat16] = to_half_bits(random_float(rng, n, -4, 4), out);
    column_sums_.resize(n);
    for (int64_t j = 0; j < n; ++j) {
      int32_t s = 0;
      for (int64_t kk = 0; kk < k; ++kk) s += static_cast<int8_t>(b_[j * k + kk]);
      column_sums_[j] = s;
    }
  }

  // Runs M rows with `variant`; returns the number of mismatches.
  int64_t run(int64_t m, const Variant& v) {
    const int32_t tensor_zero_point = 7;
    std::vector<int32_t> azp_adj(n_);
    for (int64_t j = 0; j < n_; ++j) azp_adj[j] = v.zero_point == ZeroPoint::kPerTensor ? tensor_zero_point * column_sums_[j] : column_sums_[j];
    CudaBuffer d_sa(scale_a_), d_sb(scale_b_), d_bias(bias_[v.out == DType::kFloat16]), d_azp(azp_), d_adj(azp_adj);
    CudaBuffer out(static_cast<size_t>(m * n_ * 2));
    out.poison();
    const TensorView out_v(out.get(), v.out, {m, n_}, kGpu);
    const TensorView a_v(d_a_.get(), input_, {m, k_}, kGpu);
    const auto b_v = TensorView::strided(d_b_.get(), input_, {k_, n_}, {1, k_}, kGpu);
    const TensorView sa_v = v.per_token ? TensorView(d_sa.get(), DType::kFloat32, {m, 1}, kGpu)
                                        : TensorView(d_sa.get(), DType::kFloat32, {1}, kGpu);
    const TensorView sb_v = v.per_channel ? TensorView(d_sb.get(), DType::kFloat32, {1, n_}, kGpu)
                                          : TensorView(d_sb.get(), DType::kFloat32, {1}, kGpu);
    std::optional<TensorView> bias_v;
    if (v.bias) bias_v = TensorView(d_bias.get(), v.out, {n_}, kGpu);
    const bool azp = input_ == DType::kInt8 && v.zero_point != ZeroPoint::kNone;
    if (azp) {
      std::optional<TensorView> azp_v;
      if (v.zero_point == ZeroPoint::kPerToken) azp_v = TensorView(d_azp.get(), DType::kInt32, {m}, kGpu);
      scaled_mm_azp(out_v, a_v, b_v, sa_v, sb_v, TensorView(d_adj.get(), DType::kInt32, {n_}, kGpu), azp_v, bias_v);
    } else {
      scaled_mm(out_v, a_v, b_v, sa_v, sb_v, bias_v);
    }
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<uint16_t> got;
    out.download(got);

    int64_t bad = 0;
    for (int64_t i = 0; i < m * n_; ++i) {
      const double x = detail::load_float(got.data(), i, v.out);
      if (!std::isfinite(x)) {
        if (bad < 3) ADD_FAILURE() << "not written or not finite: [" << i / n_ << "," << i % n_ << "]";
        ++bad;
      }
    }
    uint64_t seed = static_cast<uint64_t>(m * 7 + n_);
    std::vector<int64_t> rows = {0, m - 1, m / 2}, cols = {0, n_ - 1};
    for (int r = 0; r < 3; ++r) rows.push_back(static_cast<int64_t>(splitmix(seed) % m));
    for (int c = 0; c < 48; ++c) cols.push_back(static_cast<int64_t>(splitmix(seed) % n_));
    for (int64_t i : rows) {
      for (int64_t j : cols) bad += check_element(got, m, i, j, v, azp ? &azp_adj : nullptr);
    }
    return bad;
  }

 private:
  double input_value(uint8_t raw) const {
    return input_ == DType::kInt8 ? static_cast<int8_t>(raw) : numeric::fp8e4m3_bits_to_float(raw);
  }

  // The CPU backend's result for one element, and the allowed difference.
  int64_t check_element(const std::vector<uint16_t>& got, int64_t m, int64_t i, int64_t j, const Variant& v,
                        const std::vector<int32_t>* azp_adj) const {
    double dot = 0, abs_dot = 0;
    uint32_t int_dot = 0;
    for (int64_t kk = 0; kk < k_; ++kk) {
      const uint8_t ra = a_[i * k_ + kk], rb = b_[j * k_ + kk];
      const double p = input_value(ra) * input_value(rb);
      dot += p, abs_dot += std::fabs(p);
      int_dot += static_cast<uint32_t>(static_cast<int8_t>(ra) * static_cast<int8_t>(rb));
    }
    float accumulator;
    if (input_ == DType::kInt8) {
      uint32_t corrected = int_dot;
      if (azp_adj) corrected -= static_cast<uint32_t>(v.zero_point == ZeroPoint::kPerToken ? azp_[i] : 1) * static_cast<uint32_t>((*azp_adj)[j]);
      accumulator = static_cast<float>(static_cast<int32_t>(corrected));
    } else {
      accumulator = static_cast<float>(dot);
    }
    const float sa = scale_a_[v.per_token ? i : 0], sb = scale_b_[v.per_channel ? j : 0];
    const float bias = v.bias ? detail::load_float(bias_[v.out == DType::kFloat16].data(), j, v.out) : 0.0f;
    const float ref_f = detail::dequant_epilogue(accumulator, sa, sb, bias, v.bias);
    const uint16_t ref_bits = v.out == DType::kBFloat16 ? numeric::float_to_bf16_bits(ref_f) : numeric::float_to_fp16_bits(ref_f);
    const double ref = detail::load_float(&ref_bits, 0, v.out);
    const double gpu = detail::load_float(got.data(), i * n_ + j, v.out);
    double tol = unit_roundoff(v.out) * std::fabs(ref) + subnormal_spacing(v.out);
    if (input_ != DType::kInt8) tol += std::ldexp(1.0, -9) * double(sa) * sb * abs_dot;
    if (std::fabs(gpu - ref) <= tol) return 0;
    ADD_FAILURE() << m << "x" << n_ << "x" << k_ << " " << dtype_name(input_) << " [" << i << "," << j << "] gpu " << gpu << " ref " << ref;
    return 1;
  }

  int64_t n_, k_, max_m_;
  DType input_;
  std::vector<uint8_t> a_, b_;
  CudaBuffer d_a_, d_b_;
  std::vector<float> scale_a_, scale_b_;
  std::vector<int32_t> azp_, column_sums_;
  std::vector<uint16_t> bias_[2];
};

struct NK {
  int64_t n, k;
};

class ScaledMmGrid : public ::testing::TestWithParam<NK> {
 protected:
  void SetUp() override { QGEMM_SKIP_WITHOUT_GPU(); }
};

TEST_P(ScaledMmGrid, AllMMatchReference) {
  const NK nk = GetParam();
  for (DType input : {DType::kInt8, DType::kFloat8E4M3}) {
    GridShape shape(nk.n, nk.k, input, 4096);
    size_t variant = static_cast<size_t>(nk.n / 16 + nk.k);
    for (int64_t m : kMs) {
      const Variant& v = kVariants[variant++ % std::size(kVariants)];
      EXPECT_EQ(shape.run(m, v), 0) << "M=" << m << " " << dtype_name(input) << " variant " << variant - 1;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ModelShapes, ScaledMmGrid,
                         ::testing::Values(NK{6144, 4096}, NK{4096, 4096}, NK{28672, 4096}, NK{4096, 14336},
                                           NK{10240, 8192}, NK{8192, 8192}, NK{57344, 8192}, NK{8192, 28672},
                                           NK{4095, 4096}, NK{1000, 1000}, NK{4096, 48}, NK{48, 4095},
                                           NK{8184, 4096}, NK{1001, 2048}),
                         [](const auto& info) { return std::to_string(info.param.n) + "x" + std::to_string(info.param.k); });

// M ≥ 8192 on N ≥ 10240: the Hopper kernels walk their tiles with swizzle 8
// (dispatch_table.h, sm90_tile_swizzle). Ragged in M (8200 = 64 row tiles
// of 128 + 8) and N (10256 = 40 tiles of 256 + 16), so the snake through
// bands of 8 tiles ends in partial bands on both sides; every element must be
// written, and the sampled ones must match the reference.
TEST(ScaledMmGridSwizzled, RaggedLargeGridsMatchReference) {
  QGEMM_SKIP_WITHOUT_GPU();
  for (DType input : {DType::kInt8, DType::kFloat8E4M3}) {
    GridShape shape(10256, 96, input, 8200);
    EXPECT_EQ(shape.run(8192, kVariants[0]), 0) << dtype_name(input);
    EXPECT_EQ(shape.run(8200, kVariants[3]), 0) << dtype_name(input);
  }
}

}  // namespace
}  // namespace qgemm::test
