// GPTQ / AWQ int4 checkpoints into weight_only_mm's layout (int4_from_gptq,
// int4_from_awq): layers packed here from the formats' definitions, one
// nibble at a time; the codes and the offsets −z·s bit for bit in every
// output dtype and layout; the layer through weight_only_mm against the
// checkpoint's own formula (q − z)·s; and every refusal.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "common/expect_error.h"
#include "common/test_util.h"
#include "core/numeric.h"
#include "qgemm/quant.h"
#include "qgemm/weight_only.h"

namespace qgemm::test {
namespace {

// One layer as a checkpoint holds it: codes q [N, K], zero points z [G, N]
// (0…15), fp16 scales s [G, N].
struct Layer {
  int64_t n, k, groups;
  std::vector<uint8_t> q, z;
  std::vector<uint16_t> s;  // fp16 bits

  Layer(int64_t n_, int64_t k_, int64_t group_size, int zero_low, uint64_t salt)
      : n(n_), k(k_), groups(k_ / group_size), q(n_ * k_), z(groups * n_), s(groups * n_) {
    auto rng = make_rng(salt);
    std::uniform_int_distribution<int> code(0, 15), zero(zero_low, 15);
    std::uniform_real_distribution<float> scale(1e-3f, 1e-2f);
    for (auto& v : q) v = static_cast<uint8_t>(code(rng));
    for (auto& v : z) v = static_cast<uint8_t>(zero(rng));
    for (auto& v : s) v = numeric::float_to_fp16_bits(scale(rng));
  }
  float scale(int64_t g, int64_t col) const { return numeric::fp16_bits_to_float(s[g * n + col]); }
  TensorView scales() const { return TensorView(s.data(), DType::kFloat16, {groups, n}); }
};

// Nibble i of a word holds value[i] (bits 4i…4i+3).
int32_t pack_word(const uint8_t (&values)[8]) {
  uint32_t word = 0;
  for (int i = 0; i < 8; ++i) word |= uint32_t{values[i]} << (4 * i);
  return static_cast<int32_t>(word);
}

// GPTQ: qweight [K/8, N], nibble i of word [r, n] = q[n, 8r + i]; zeros [G, N/8]
// in column order, each stored minus zero_offset.
std::vector<int32_t> gptq_qweight(const Layer& l) {
  std::vector<int32_t> words(l.k / 8 * l.n);
  for (int64_t r = 0; r < l.k / 8; ++r) {
    for (int64_t col = 0; col < l.n; ++col) {
      uint8_t v[8];
      for (int i = 0; i < 8; ++i) v[i] = l.q[col * l.k + 8 * r + i];
      words[r * l.n + col] = pack_word(v);
    }
  }
  return words;
}
std::vector<int32_t> zeros_words(const Layer& l, const int (&order)[8], int stored_minus) {
  std::vector<int32_t> words(l.groups * l.n / 8);
  for (int64_t g = 0; g < l.groups; ++g) {
    for (int64_t c = 0; c < l.n / 8; ++c) {
      uint8_t v[8];
      for (int i = 0; i < 8; ++i) v[i] = static_cast<uint8_t>(l.z[g * l.n + 8 * c + order[i]] - stored_minus);
      words[g * l.n / 8 + c] = pack_word(v);
    }
  }
  return words;
}
constexpr int kInOrder[8] = {0, 1, 2, 3, 4, 5, 6, 7};

// AWQ: qweight [K, N/8], nibble i of word [k, c] = q[8c + order[i], k].
std::vector<int32_t> awq_qweight(const Layer& l) {
  std::vector<int32_t> words(l.k * l.n / 8);
  for (int64_t kk = 0; kk < l.k; ++kk) {
    for (int64_t c = 0; c < l.n / 8; ++c) {
      uint8_t v[8];
      for (int i = 0; i < 8; ++i) v[i] = l.q[(8 * c + kAwqOrder[i]) * l.k + kk];
      words[kk * l.n / 8 + c] = pack_word(v);
    }
  }
  return words;
}

// The converted codes and offsets against the layer, bit for bit.
void expect_converted(const Layer& l, const std::vector<uint8_t>& w, const TensorView& offsets) {
  std::vector<uint8_t> codes(l.n * l.k);
  unpack_int4(TensorView(codes.data(), DType::kUInt8, {l.n, l.k}), TensorView(w.data(), DType::kUInt8, {l.n, l.k / 2}));
  ASSERT_EQ(codes, l.q);
  for (int64_t col = 0; col < l.n; ++col) {
    for (int64_t g = 0; g < l.groups; ++g) {
      const float exact = -static_cast<float>(l.z[g * l.n + col]) * l.scale(g, col);  // exact in fp32
      const int64_t at = col * offsets.stride(0) + g * offsets.stride(1);
      if (offsets.dtype() == DType::kFloat32) {
        ASSERT_EQ(static_cast<const float*>(offsets.data())[at], exact) << col << ", " << g;
      } else {
        const uint16_t bits = static_cast<const uint16_t*>(offsets.data())[at];
        const uint16_t want = offsets.dtype() == DType::kFloat16 ? numeric::float_to_fp16_bits(exact)
                                                                : numeric::float_to_bf16_bits(exact);
        ASSERT_EQ(bits, want) << col << ", " << g;
      }
    }
  }
}

// weight_only_mm (CPU, fp16) on the converted layer, with the checkpoint's
// scales viewed group-major, against Σ a·(q − z)·s in double: the offset's
// extra rounding (≤ half an fp16 ulp of z·s per weight), ŵ's and the
// output's fp16 rounding, all far inside 4e-3 of the largest output.
void expect_layer_output(const Layer& l, const std::vector<uint8_t>& w, const TensorView& offsets) {
  const int64_t m = 3;
  auto rng = make_rng(7);
  const auto a_f = random_float(rng, m * l.k, -1.0f, 1.0f);
  const auto a = to_half_bits(a_f, DType::kFloat16);
  std::vector<uint16_t> out(m * l.n, 0xffff);
  // weight_only_mm takes scales and offsets in one dtype: fp32 offsets want the scales widened.
  std::vector<float> scales32(l.s.size());
  for (size_t i = 0; i < l.s.size(); ++i) scales32[i] = numeric::fp16_bits_to_float(l.s[i]);
  const TensorView scales = offsets.dtype() == DType::kFloat32
                                ? TensorView::strided(scales32.data(), DType::kFloat32, {l.n, l.groups}, {1, l.n})
                                : TensorView::strided(l.s.data(), DType::kFloat16, {l.n, l.groups}, {1, l.n});
  weight_only_mm(TensorView(out.data(), DType::kFloat16, {m, l.n}), TensorView(a.data(), DType::kFloat16, {m, l.k}),
                 TensorView(w.data(), DType::kUInt8, {l.n, l.k / 2}), scales, offsets,
                 static_cast<int>(l.k / l.groups));
  std::vector<double> want(m * l.n, 0.0);
  double largest = 0;
  const int64_t group_size = l.k / l.groups;
  for (int64_t row = 0; row < m; ++row) {
    for (int64_t col = 0; col < l.n; ++col) {
      double sum = 0;
      for (int64_t kk = 0; kk < l.k; ++kk) {
        const int64_t g = kk / group_size;
        const double weight = (static_cast<double>(l.q[col * l.k + kk]) - l.z[g * l.n + col]) * l.scale(g, col);
        sum += double{numeric::fp16_bits_to_float(a[row * l.k + kk])} * weight;
      }
      want[row * l.n + col] = sum;
      largest = std::max(largest, std::fabs(sum));
    }
  }
  for (int64_t i = 0; i < m * l.n; ++i) {
    ASSERT_NEAR(numeric::fp16_bits_to_float(out[i]), want[i], 4e-3 * largest) << i;
  }
}

TEST(Int4Checkpoint, GptqV1AndV2) {
  for (int zero_offset : {1, 0}) {
    for (auto [n, k, group] : {std::tuple<int64_t, int64_t, int64_t>{48, 256, 64}, {16, 128, 128}, {24, 512, 32}}) {
      const Layer l(n, k, group, zero_offset, static_cast<uint64_t>(n + k + zero_offset));
      const auto qweight = gptq_qweight(l);
      const auto qzeros = zeros_words(l, kInOrder, zero_offset);
      const auto g_idx = [&] {
        std::vector<int32_t> v(k);
        for (int64_t i = 0; i < k; ++i) v[i] = static_cast<int32_t>(i / group);
        return v;
      }();
      std::vector<uint8_t> w(n * k / 2, 0xee);
      std::vector<float> offsets(l.groups * n, -7.0f);  // group-major: [G, N] viewed as [N, G]
      const TensorView offsets_v = TensorView::strided(offsets.data(), DType::kFloat32, {n, l.groups}, {1, n});
      int4_from_gptq(TensorView(w.data(), DType::kUInt8, {n, k / 2}), offsets_v,
                     TensorView(qweight.data(), DType::kInt32, {k / 8, n}),
                     TensorView(qzeros.data(), DType::kInt32, {l.groups, n / 8}), l.scales(),
                     TensorView(g_idx.data(), DType::kInt32, {k}), zero_offset);
      SCOPED_TRACE("zero_offset " + std::to_string(zero_offset) + ", group " + std::to_string(group));
      expect_converted(l, w, offsets_v);
      expect_layer_output(l, w, offsets_v);
    }
  }
}

TEST(Int4Checkpoint, AwqInEveryOffsetDtypeAndLayout) {
  const Layer l(40, 256, 128, 0, 3);
  const auto qweight = awq_qweight(l);
  const auto qzeros = zeros_words(l, kAwqOrder, 0);
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    for (bool group_major : {true, false}) {
      std::vector<uint8_t> w(l.n * l.k / 2, 0xee);
      std::vector<float> storage(l.groups * l.n, -7.0f);  // big enough for any of the dtypes
      const TensorView offsets_v =
          group_major ? TensorView::strided(storage.data(), dtype, {l.n, l.groups}, {1, l.n})
                      : TensorView(storage.data(), dtype, {l.n, l.groups});
      int4_from_awq(TensorView(w.data(), DType::kUInt8, {l.n, l.k / 2}), offsets_v,
                    TensorView(qweight.data(), DType::kInt32, {l.k, l.n / 8}),
                    TensorView(qzeros.data(), DType::kInt32, {l.groups, l.n / 8}), l.scales());
      SCOPED_TRACE(std::string(dtype_name(dtype)) + (group_major ? " group-major" : " row-major"));
      expect_converted(l, w, offsets_v);
      // weight_only_mm: fp16 activations take fp32 or fp16 parameters, the
      // offsets in the scales' layout (the checkpoint's, group-major).
      if (dtype != DType::kBFloat16 && group_major) expect_layer_output(l, w, offsets_v);
    }
  }
}

// Symmetric GPTQ (z = 8, stored 7): −8·s is exact in fp16, so ŵ is
// (q − 8)·s rounded once — the checkpoint's own dequantization, bit for bit.
TEST(Int4Checkpoint, SymmetricGptqOffsetsAreExactInFp16) {
  Layer l(16, 128, 128, 0, 11);
  for (auto& v : l.z) v = 8;
  const auto qweight = gptq_qweight(l);
  const auto qzeros = zeros_words(l, kInOrder, 1);
  std::vector<uint8_t> w(l.n * l.k / 2);
  std::vector<uint16_t> offsets(l.groups * l.n);
  int4_from_gptq(TensorView(w.data(), DType::kUInt8, {l.n, l.k / 2}),
                 TensorView(offsets.data(), DType::kFloat16, {l.n, l.groups}),
                 TensorView(qweight.data(), DType::kInt32, {l.k / 8, l.n}),
                 TensorView(qzeros.data(), DType::kInt32, {l.groups, l.n / 8}), l.scales());
  for (int64_t col = 0; col < l.n; ++col) {
    EXPECT_EQ(numeric::fp16_bits_to_float(offsets[col]), -8.0f * l.scale(0, col));
  }
}

TEST(Int4Checkpoint, Refusals) {
  const Layer l(16, 128, 32, 1, 5);
  const auto qweight = gptq_qweight(l);
  const auto qzeros = zeros_words(l, kInOrder, 1);
  std::vector<uint8_t> w(l.n * l.k / 2);
  std::vector<float> offsets(l.groups * l.n);
  const TensorView w_v(w.data(), DType::kUInt8, {l.n, l.k / 2});
  const TensorView offsets_v(offsets.data(), DType::kFloat32, {l.n, l.groups});
  const TensorView qweight_v(qweight.data(), DType::kInt32, {l.k / 8, l.n});
  const TensorView qzeros_v(qzeros.data(), DType::kInt32, {l.groups, l.n / 8});
  std::vector<int32_t> act_order(l.k);
  for (int64_t i = 0; i < l.k; ++i) act_order[i] = static_cast<int32_t>(i % l.groups);
  expect_error([&] { int4_from_gptq(w_v, offsets_v, qweight_v, qzeros_v, l.scales(),
                                    TensorView(act_order.data(), DType::kInt32, {l.k})); },
               ErrorKind::kValue, {"g_idx", "act-order", "g_idx[1] = 1", "expected k / group_size = 0"});
  expect_error([&] { int4_from_gptq(w_v, offsets_v, qweight_v, qzeros_v, l.scales(),
                                    TensorView(act_order.data(), DType::kInt32, {l.k - 8})); },
               ErrorKind::kValue, {"g_idx", "[K=128]"});
  expect_error([&] { int4_from_gptq(w_v, offsets_v, qweight_v, qzeros_v, l.scales(), std::nullopt, 2); },
               ErrorKind::kValue, {"zero_offset", "got 2"});
  expect_error([&] { int4_from_gptq(w_v, offsets_v, TensorView(qweight.data(), DType::kFloat32, {l.k / 8, l.n}),
                                    qzeros_v, l.scales()); },
               ErrorKind::kType, {"qweight", "int32"});
  expect_error([&] { int4_from_gptq(w_v, offsets_v, qweight_v, TensorView(qzeros.data(), DType::kInt32, {2, l.n / 8}),
                                    l.scales()); },
               ErrorKind::kValue, {"qzeros"});
  expect_error([&] { int4_from_gptq(w_v, offsets_v, qweight_v, qzeros_v,
                                    TensorView(l.s.data(), DType::kFloat16, {3, l.n})); },
               ErrorKind::kValue, {"scales", "3 groups", "K=128"});
  expect_error([&] { int4_from_gptq(TensorView(w.data(), DType::kUInt8, {l.n, l.k / 4}), offsets_v, qweight_v,
                                    qzeros_v, l.scales()); },
               ErrorKind::kValue, {"out_w"});
  expect_error([&] { int4_from_gptq(w_v, TensorView(offsets.data(), DType::kInt32, {l.n, l.groups}), qweight_v,
                                    qzeros_v, l.scales()); },
               ErrorKind::kType, {"out_offsets", "int32"});
  expect_error([&] { int4_from_awq(w_v, offsets_v, TensorView(qweight.data(), DType::kInt32, {l.k - 1, 2}),
                                   qzeros_v, l.scales()); },
               ErrorKind::kValue, {"qweight", "K=127", "even"});
  expect_error([&] { int4_from_gptq(w_v, offsets_v, TensorView(qweight.data(), DType::kInt32, {l.k / 8, 12}),
                                    TensorView(qzeros.data(), DType::kInt32, {l.groups, 1}),
                                    TensorView(l.s.data(), DType::kFloat16, {l.groups, 12})); },
               ErrorKind::kValue, {"qweight", "N=12", "multiple of 8"});
  expect_error([&] { int4_from_gptq(w_v, offsets_v, qweight_v, qzeros_v,
                                    TensorView(l.s.data(), DType::kFloat16, {l.groups, l.n}, Device::cuda(0))); },
               ErrorKind::kValue, {"scales", "CPU"});
}

}  // namespace
}  // namespace qgemm::test
