// CPU twin of weight_only_mm against a double-precision reference on random
// problems (every weight type × group size × offsets × bias × dtype × layout,
// odd shapes, padded views), an exact case where no rounding happens before
// the output, and the prepacked layout checked byte by byte against its
// documented formula.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/cpu_dot.h"
#include "wonly/wonly_problem.h"

namespace qgemm::test {
namespace {

// The view of w's weight the op reads: plain, or prepacked into `packed`
// (first filled with 0xcd, which the prepack's padding must overwrite).
TensorView weight_view(const WonlyWeights& w, bool prepacked, std::vector<uint8_t>& packed) {
  const TensorView plain = w.w_view(w.w.data(), 0, w.n);
  if (!prepacked) return plain;
  const auto shape = weight_only_prepacked_shape(w.n, w.k, w.int4);
  packed.assign(static_cast<size_t>(shape.row_blocks * shape.k_tiles * 1024), 0xcd);
  const TensorView view(packed.data(), plain.dtype(), {shape.row_blocks, shape.k_tiles, 1024});
  weight_only_prepack(view, plain);
  return view;
}

// Runs the CPU op on (x, w) into x.out; prepacks first when asked.
void run_cpu(const WonlyCase& c, const WonlyWeights& w, WonlyActs& x) {
  std::vector<uint8_t> packed;
  const TensorView w_view = weight_view(w, c.prepacked, packed);
  weight_only_mm(x.out_view(x.out.data(), x.n, x.ldo), x.a_view(x.a.data()), w_view,
                 w.scales_view(w.scales_host(), 0, w.n), w.offsets_view(w.offsets_host(), 0, w.n),
                 w.group, x.bias_view(x.bias.data(), 0, x.n));
}

class WeightOnlyCpu : public ::testing::TestWithParam<WonlyCase> {};

TEST_P(WeightOnlyCpu, MatchesReference) {
  const WonlyCase c = GetParam();
  auto rng = make_rng(static_cast<uint64_t>(c.m * 7919 + c.n * 31 + c.k));
  const WonlyWeights w(c.n, c.k, c.int4, c.group(), c.offsets, c.ldw_pad, rng);
  WonlyActs x(c, rng);
  run_cpu(c, w, x);
  int64_t bad = 0;
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      const double want = reference(x, w, i, j);
      const double got = x.out_value(x.out, i, j, x.ldo);
      const double tol = tolerance_vs_exact(want, magnitude(x, w, i, j), c.k, c.dtype);
      if (!(std::fabs(got - want) <= tol)) {
        if (bad++ < 5) ADD_FAILURE() << c.name() << ": out[" << i << "," << j << "] = " << got << ", expected " << want << " ± " << tol;
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

std::vector<WonlyCase> cpu_cases() {
  std::vector<WonlyCase> cases;
  const int64_t shapes[][3] = {{1, 1, 32}, {2, 17, 64}, {3, 33, 128}, {16, 48, 384}, {17, 5, 256}, {33, 100, 512}};
  for (bool int4 : {true, false}) {
    for (int group : {32, 64, 128, 0}) {
      for (int flags = 0; flags < 4; ++flags) {
        for (const auto& s : shapes) {
          if (group != 0 && s[2] % group != 0) continue;
          WonlyCase c;
          c.m = s[0], c.n = s[1], c.k = s[2];
          c.int4 = int4, c.group_size = group;
          c.offsets = flags & 1, c.bias = flags & 2;
          c.dtype = (s[0] + flags) % 2 ? DType::kFloat16 : DType::kBFloat16;
          c.prepacked = (s[1] + flags) % 3 == 0;
          cases.push_back(c);
        }
      }
    }
  }
  WonlyCase padded;
  padded.m = 7, padded.n = 40, padded.k = 256, padded.lda_pad = 8, padded.ldo_pad = 3, padded.ldw_pad = 16;
  cases.push_back(padded);
  padded.int4 = false, padded.dtype = DType::kFloat16, padded.group_size = 64;
  cases.push_back(padded);
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllVariants, WeightOnlyCpu, ::testing::ValuesIn(cpu_cases()),
                         [](const auto& info) { return gtest_name(info.param, info.index); });

// a ∈ {−2…2}, s = 1/8, o = 1/2: ŵ = (q + 4)/8 has ≤ 8 significant bits (exact
// in bf16 and fp16), every partial sum is a multiple of 1/8 below 2^15, so
// fp32 is exact and the output is the exact value rounded once.
TEST(WeightOnlyCpuExact, NoRoundingBeforeTheOutput) {
  for (bool int4 : {true, false}) {
    for (DType dtype : {DType::kBFloat16, DType::kFloat16}) {
      auto rng = make_rng(int4 * 2 + (dtype == DType::kFloat16));
      WonlyCase c;
      c.m = 5, c.n = 37, c.k = 256, c.int4 = int4, c.dtype = dtype, c.group_size = 64;
      WonlyWeights w(c.n, c.k, c.int4, 64, true, 0, rng);
      for (auto& s : w.scales) s = 0.125f;
      for (auto& o : w.offsets) o = 0.5f;
      WonlyActs x(c, rng);
      std::uniform_int_distribution<int> small(-2, 2);
      for (auto& v : x.a) v = to_half_bits({static_cast<float>(small(rng))}, dtype)[0];
      for (auto& v : x.bias) v = to_half_bits({static_cast<float>(small(rng)) * 0.25f}, dtype)[0];
      run_cpu(c, w, x);
      for (int64_t i = 0; i < c.m; ++i) {
        for (int64_t j = 0; j < c.n; ++j) {
          const auto want = to_half_bits({static_cast<float>(reference(x, w, i, j))}, dtype)[0];
          ASSERT_EQ(x.out[i * x.ldo + j], want) << c.name() << " out[" << i << "," << j << "]";
        }
      }
    }
  }
}

// The CPU twin is ŵ (wonly_math.h, per element) dotted with a in fp32 by
// dot_float, then the bias and one rounding: the same bits, whether ŵ is
// computed per element or tabulated per group (int4 groups of ≥ 32 and int8
// groups of more than 256, i.e. per channel, take the table; int8 g128 does not),
// for plain and prepacked weights and group-major parameters.
TEST(WeightOnlyCpuExact, SameBitsAsPerElementDequantization) {
  struct Variant {
    bool int4;
    int group;  // 0: per channel
    bool offsets, prepacked, group_major;
    DType dtype;
  };
  const Variant variants[] = {
      {true, 32, true, false, false, DType::kBFloat16},  {true, 128, true, true, false, DType::kFloat16},
      {true, 0, false, false, true, DType::kBFloat16},   {true, 64, true, false, true, DType::kFloat16},
      {false, 128, true, false, false, DType::kBFloat16}, {false, 0, true, true, false, DType::kFloat16},
      {false, 0, true, false, true, DType::kBFloat16},   {false, 0, false, true, false, DType::kFloat16},
  };
  for (const Variant& v : variants) {
    WonlyCase c;
    c.m = 3, c.n = 37, c.k = 1024, c.int4 = v.int4, c.group_size = v.group, c.dtype = v.dtype, c.offsets = v.offsets;
    auto rng = make_rng(static_cast<uint64_t>(v.int4 * 100 + v.group + v.prepacked * 7 + v.group_major * 13));
    const WonlyWeights w(c.n, c.k, c.int4, c.group(), c.offsets, 0, rng);
    WonlyActs x(c, rng);
    std::vector<uint8_t> packed;
    const TensorView w_view = weight_view(w, v.prepacked, packed);
    const std::vector<uint8_t> scales_gm = w.group_major_bytes(w.scales_host(), w.n + 3, 0);
    const std::vector<uint8_t> offsets_gm = w.offsets.empty() ? std::vector<uint8_t>{}
                                                              : w.group_major_bytes(w.offsets_host(), w.n + 3, 0);
    const TensorView scales = v.group_major ? w.group_major_view(scales_gm.data(), w.n + 3, 0)
                                            : w.scales_view(w.scales_host(), 0, w.n);
    std::optional<TensorView> offsets = w.offsets_view(w.offsets_host(), 0, w.n);
    if (offsets && v.group_major) offsets = w.group_major_view(offsets_gm.data(), w.n + 3, 0);
    weight_only_mm(x.out_view(x.out.data(), x.n, x.ldo), x.a_view(x.a.data()), w_view, scales, offsets, w.group,
                   x.bias_view(x.bias.data(), 0, x.n));

    std::vector<float> a_row(static_cast<size_t>(c.k)), w_row(static_cast<size_t>(c.k));
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t kk = 0; kk < c.k; ++kk) a_row[kk] = static_cast<float>(x.a_value(i, kk));
      for (int64_t j = 0; j < c.n; ++j) {
        for (int64_t kk = 0; kk < c.k; ++kk) w_row[kk] = static_cast<float>(w.w_hat(j, kk, c.dtype));
        float value = detail::dot_float(a_row.data(), w_row.data(), c.k);
        if (!x.bias.empty()) value = detail::wonly::add_bias(value, static_cast<float>(x.bias_value(j)));
        ASSERT_EQ(x.out[i * x.ldo + j], to_half_bits({value}, c.dtype)[0]) << c.name() << " out[" << i << "," << j << "]";
      }
    }
  }
}

// The documented prepacked layout: byte b of chunk c (16 bytes, E elements)
// of row n sits at tile (n/16, c/4), offset (n%16)·64 + (c%4)·16 + b; padding is 0.
TEST(WeightOnlyPrepack, LayoutMatchesTheFormula) {
  for (bool int4 : {true, false}) {
    auto rng = make_rng(int4);
    const int64_t n = 37, k = 224;  // partial row block and partial K tile
    const WonlyWeights w(n, k, int4, 32, false, int4 ? 16 : 0, rng);
    const auto shape = weight_only_prepacked_shape(n, k, int4);
    EXPECT_EQ(shape.row_blocks, 3);
    EXPECT_EQ(shape.k_tiles, int4 ? 2 : 4);
    std::vector<uint8_t> packed(static_cast<size_t>(shape.row_blocks * shape.k_tiles * 1024), 0xcd);
    weight_only_prepack(TensorView(packed.data(), int4 ? DType::kUInt8 : DType::kInt8,
                                   {shape.row_blocks, shape.k_tiles, 1024}),
                        w.w_view(w.w.data(), 0, n));
    const int64_t row_bytes = int4 ? k / 2 : k;
    std::vector<bool> covered(packed.size(), false);
    for (int64_t row = 0; row < n; ++row) {
      for (int64_t byte = 0; byte < row_bytes; ++byte) {
        const int64_t c = byte / 16, b = byte % 16;
        const int64_t index = ((row / 16) * shape.k_tiles + c / 4) * 1024 + (row % 16) * 64 + (c % 4) * 16 + b;
        ASSERT_EQ(packed[index], w.w[row * w.ldw + byte]) << "row " << row << " byte " << byte;
        covered[index] = true;
      }
    }
    for (size_t i = 0; i < packed.size(); ++i) {
      if (!covered[i]) ASSERT_EQ(packed[i], 0) << "padding byte " << i;
    }
  }
}

// Same ŵ and the same summation order: plain and prepacked are bit-identical.
TEST(WeightOnlyPrepack, SameResultAsPlain) {
  for (bool int4 : {true, false}) {
    auto rng = make_rng(int4);
    WonlyCase c;
    c.m = 9, c.n = 50, c.k = 320, c.int4 = int4, c.group_size = 32;
    const WonlyWeights w(c.n, c.k, c.int4, 32, true, 0, rng);
    WonlyActs plain(c, rng);
    WonlyActs packed = plain;
    run_cpu(c, w, plain);
    c.prepacked = true;
    run_cpu(c, w, packed);
    EXPECT_EQ(plain.out, packed.out);
  }
}

// 16-bit parameters in T hold T values, which s_T = round_T(s) keeps: the
// result is the one of fp32 parameters with the same values, bit for bit.
TEST(WeightOnlyCpuParams16, SameBitsAsFp32Params) {
  int index = 0;
  for (bool int4 : {true, false}) {
    for (int group : {32, 64, 128, 0}) {
      for (DType dtype : {DType::kBFloat16, DType::kFloat16}) {
        WonlyCase c;
        c.m = 5, c.n = 37, c.k = 384, c.int4 = int4, c.group_size = group, c.dtype = dtype;
        c.offsets = index % 2 == 0, c.prepacked = index % 3 == 1;
        auto rng = make_rng(static_cast<uint64_t>(100 + index++));
        WonlyWeights w16(c.n, c.k, int4, c.group(), c.offsets, 0, rng);
        w16.use_16bit_params(dtype);
        WonlyWeights w32 = w16;
        w32.param_dtype = DType::kFloat32;
        WonlyActs x16(c, rng);
        WonlyActs x32 = x16;
        run_cpu(c, w16, x16);
        run_cpu(c, w32, x32);
        EXPECT_EQ(x16.out, x32.out) << c.name();
      }
    }
  }
}

// Group-major scales and offsets ([K/group, N] viewed as [N, K/group] with
// strides (1, ld)) hold the same values at other addresses: the result is
// the row-major one, bit for bit (checked against the reference above; a
// prepacked row-major run against the plain group-major one, which the CPU
// twin computes alike: WeightOnlyPrepack.SameResultAsPlain).
TEST(WeightOnlyCpuParams, GroupMajorSameBitsAsRowMajor) {
  int index = 0;
  for (bool int4 : {true, false}) {
    for (int group : {32, 128}) {
      for (bool params16 : {false, true}) {
        WonlyCase c;
        c.m = 4, c.n = 41, c.k = 256, c.int4 = int4, c.group_size = group, c.dtype = DType::kFloat16;
        c.offsets = index % 2 == 0, c.prepacked = index % 3 == 1;
        auto rng = make_rng(static_cast<uint64_t>(700 + index++));
        WonlyWeights w(c.n, c.k, int4, c.group(), c.offsets, 0, rng);
        if (params16) w.use_16bit_params(c.dtype);
        WonlyActs row_major(c, rng);
        WonlyActs group_major = row_major;
        run_cpu(c, w, row_major);
        const int64_t ld = c.n + 2, shift = 1;
        const auto scales = w.group_major_bytes(w.scales_host(), ld, shift);
        const auto offsets = c.offsets ? w.group_major_bytes(w.offsets_host(), ld, shift) : std::vector<uint8_t>();
        std::optional<TensorView> offsets_view;
        if (c.offsets) offsets_view = w.group_major_view(offsets.data(), ld, shift);
        weight_only_mm(group_major.out_view(group_major.out.data(), c.n, group_major.ldo),
                       group_major.a_view(group_major.a.data()), w.w_view(w.w.data(), 0, c.n),
                       w.group_major_view(scales.data(), ld, shift), offsets_view, w.group,
                       group_major.bias_view(group_major.bias.data(), 0, c.n));
        EXPECT_EQ(group_major.out, row_major.out) << c.name() << (params16 ? " 16-bit params" : "");
      }
    }
  }
}

TEST(WeightOnlyCpuEmpty, ZeroTokensWriteNothing) {
  std::vector<uint8_t> w(8 * 16, 0x11);
  std::vector<float> s(8, 1.0f);
  std::vector<uint16_t> a(1), out(1, 0x7777);
  weight_only_mm(TensorView(out.data(), DType::kBFloat16, {0, 8}), TensorView(a.data(), DType::kBFloat16, {0, 32}),
                 TensorView(w.data(), DType::kUInt8, {8, 16}), TensorView(s.data(), DType::kFloat32, {8, 1}),
                 std::nullopt, 32);
  EXPECT_EQ(out[0], 0x7777);
}

}  // namespace
}  // namespace qgemm::test
