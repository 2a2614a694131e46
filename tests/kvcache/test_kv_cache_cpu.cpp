// CPU twin of the paged KV cache ops against independent references:
//  - kv_cache_write's codes and scales are bit for bit those of quantize()
//    (dynamic symmetric per token) on each [1, head_dim] head vector; a
//    16-bit cache is a copy; padding and out-of-pool slots are skipped;
//    strided keys (a slice of a fused QKV row) give the same cache.
//  - paged_attention_decode against a double-precision attention over the
//    cache's dequantized contents (kv_problem.h), at every cache dtype,
//    head_dim, group size, several block sizes and lengths (0, 1, odd, > a
//    partition), with shuffled non-contiguous blocks and −1 table entries
//    past each sequence; the edge cases (empty, bad block id, too long).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <tuple>
#include <vector>

#include "kvcache/kv_buffers.h"
#include "qgemm/kv_cache.h"
#include "qgemm/quant.h"

namespace qgemm::test {
namespace {

TensorView slots_view(const std::vector<int64_t>& slots) {
  return TensorView(slots.data(), DType::kInt64, {static_cast<int64_t>(slots.size())});
}

void write_all(const KvProblem& p, HostCache& cache) {
  kv_cache_write(cache.view(), keys_view(p, p.keys.data()), keys_view(p, p.values.data()), slots_view(p.slots));
}

class KvCacheWriteCpu : public ::testing::TestWithParam<std::tuple<DType, DType>> {};

TEST_P(KvCacheWriteCpu, CodesAndScalesEqualQuantize) {
  const auto [cache_dtype, dtype] = GetParam();
  auto rng = make_rng();
  KvShape shape;
  shape.cache_dtype = cache_dtype;
  shape.dtype = dtype;
  shape.head_dim = 64;
  shape.block_size = 8;
  shape.seq_lens = {5, 19};
  const KvProblem p = make_kv_problem(shape, rng);
  HostCache cache(p);
  write_all(p, cache);
  const int64_t hd = shape.head_dim, kvh = shape.kv_heads;
  const size_t elem = dtype_size(cache_dtype);
  for (int64_t t = 0; t < p.tokens; ++t) {
    for (int64_t h = 0; h < kvh; ++h) {
      for (int which = 0; which < 2; ++which) {
        const auto& src = which == 0 ? p.keys : p.values;
        const auto& pool = which == 0 ? cache.key : cache.value;
        const auto& scales = which == 0 ? cache.key_scale : cache.value_scale;
        const int64_t at = p.slots[t] * kvh + h;
        const TensorView x(&src[(t * kvh + h) * hd], dtype, {1, hd});
        if (cache_dtype == dtype) {
          EXPECT_EQ(std::memcmp(&pool[at * hd * elem], x.data(), hd * elem), 0) << "token " << t << " head " << h;
          continue;
        }
        std::vector<uint8_t> codes(hd);
        float scale = 0.0f;
        quantize(TensorView(codes.data(), cache_dtype, {1, hd}), TensorView(&scale, DType::kFloat32, {1}), std::nullopt,
                 x, QuantOptions{});
        EXPECT_EQ(std::memcmp(&pool[at * hd], codes.data(), hd), 0) << "token " << t << " head " << h;
        EXPECT_EQ(scales[at], scale) << "token " << t << " head " << h;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(CacheDtypes, KvCacheWriteCpu,
                         ::testing::Values(std::tuple{DType::kInt8, DType::kBFloat16},
                                           std::tuple{DType::kInt8, DType::kFloat16},
                                           std::tuple{DType::kFloat8E4M3, DType::kBFloat16},
                                           std::tuple{DType::kBFloat16, DType::kBFloat16},
                                           std::tuple{DType::kFloat16, DType::kFloat16}),
                         [](const ::testing::TestParamInfo<std::tuple<DType, DType>>& info) {
                           return case_name(std::get<0>(info.param), std::get<1>(info.param), 64, 4, 8);
                         });

TEST(KvCacheWriteCpuEdges, SkipsPaddingAndOutOfPoolSlots) {
  auto rng = make_rng();
  KvShape shape;
  shape.head_dim = 64;
  shape.seq_lens = {6};
  shape.spare_blocks = 1;
  const KvProblem p = make_kv_problem(shape, rng);
  HostCache cache(p);
  std::vector<int32_t> slots(p.slots.begin(), p.slots.end());
  const int64_t capacity = p.num_blocks * shape.block_size;
  slots[1] = -1;
  slots[4] = static_cast<int32_t>(capacity);  // one past the pool
  kv_cache_write(cache.view(), keys_view(p, p.keys.data()), keys_view(p, p.values.data()),
                 TensorView(slots.data(), DType::kInt32, {p.tokens}));
  const int64_t row = shape.kv_heads * shape.head_dim;
  for (int64_t t = 0; t < p.tokens; ++t) {
    const bool skipped = t == 1 || t == 4;
    const uint8_t* codes = &cache.key[p.slots[t] * row];
    bool untouched = true;
    for (int64_t i = 0; i < row; ++i) untouched = untouched && codes[i] == 0xff;
    EXPECT_EQ(untouched, skipped) << "token " << t;
    EXPECT_EQ(std::isnan(cache.key_scale[p.slots[t] * shape.kv_heads]), skipped) << "token " << t;
  }
}

TEST(KvCacheWriteCpuEdges, StridedKeysFromAFusedQkvRow) {
  auto rng = make_rng();
  KvShape shape;
  shape.head_dim = 64;
  shape.seq_lens = {9};
  const KvProblem p = make_kv_problem(shape, rng);
  HostCache contiguous(p), strided(p);
  write_all(p, contiguous);
  // qkv [T, (q_heads + 2·kv_heads)·head_dim]: k and v are column slices.
  const int64_t hd = shape.head_dim, kvh = shape.kv_heads, width = (p.q_heads() + 2 * kvh) * hd;
  std::vector<uint16_t> qkv(static_cast<size_t>(p.tokens * width), 0x7fc0);
  for (int64_t t = 0; t < p.tokens; ++t) {
    std::memcpy(&qkv[t * width + p.q_heads() * hd], &p.keys[t * kvh * hd], kvh * hd * 2);
    std::memcpy(&qkv[t * width + (p.q_heads() + kvh) * hd], &p.values[t * kvh * hd], kvh * hd * 2);
  }
  const auto k = TensorView::strided(&qkv[p.q_heads() * hd], shape.dtype, {p.tokens, kvh, hd}, {width, hd, 1});
  const auto v = TensorView::strided(&qkv[(p.q_heads() + kvh) * hd], shape.dtype, {p.tokens, kvh, hd}, {width, hd, 1});
  kv_cache_write(strided.view(), k, v, slots_view(p.slots));
  EXPECT_EQ(strided.key, contiguous.key);
  EXPECT_EQ(strided.value, contiguous.value);
  EXPECT_EQ(std::memcmp(strided.key_scale.data(), contiguous.key_scale.data(), 4 * strided.key_scale.size()), 0);
}

// ---- Attention ----------------------------------------------------------------

std::vector<uint16_t> run_attention(const KvProblem& p, HostCache& cache, float softmax_scale) {
  std::vector<uint16_t> out(p.query.size(), 0xffff);
  const int64_t hd = p.shape.head_dim;
  paged_attention_decode(TensorView(out.data(), p.shape.dtype, {p.seqs(), p.q_heads(), hd}),
                         TensorView(p.query.data(), p.shape.dtype, {p.seqs(), p.q_heads(), hd}), cache.view(),
                         TensorView(p.block_tables.data(), DType::kInt32, {p.seqs(), p.max_blocks}),
                         TensorView(p.seq_lens.data(), DType::kInt32, {p.seqs()}), softmax_scale);
  return out;
}

void expect_matches_reference(const KvProblem& p, HostCache& cache, const std::vector<uint16_t>& out,
                              float softmax_scale) {
  double max_abs_value = 0.0;
  const std::vector<double> ref = reference_attention(p, cache.contents(), softmax_scale, &max_abs_value);
  int bad = 0;
  for (size_t i = 0; i < ref.size() && bad < 10; ++i) {
    const double got = from_bits(out[i], p.shape.dtype);
    const double tol = output_tolerance(ref[i], max_abs_value, p.shape.dtype);
    if (!(std::fabs(got - ref[i]) <= tol)) {
      ADD_FAILURE() << "out[" << i << "] = " << got << ", reference " << ref[i] << " (tolerance " << tol << ")";
      ++bad;
    }
  }
}

class PagedAttentionCpu : public ::testing::TestWithParam<AttentionCase> {};

TEST_P(PagedAttentionCpu, MatchesDoubleReference) {
  const AttentionCase c = GetParam();
  auto rng = make_rng(static_cast<uint64_t>(c.head_dim * 7 + c.group * 3 + c.block_size));
  const KvProblem p = make_kv_problem(c.shape({1, 0, 37, 530, c.block_size}, KvShape{}.kv_heads), rng);
  HostCache cache(p);
  write_all(p, cache);
  const float softmax_scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  expect_matches_reference(p, cache, run_attention(p, cache, softmax_scale), softmax_scale);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, PagedAttentionCpu,
    ::testing::Values(AttentionCase{DType::kInt8, DType::kBFloat16, 128, 4, 16},
                      AttentionCase{DType::kInt8, DType::kFloat16, 64, 1, 16},
                      AttentionCase{DType::kInt8, DType::kBFloat16, 256, 8, 32},
                      AttentionCase{DType::kFloat8E4M3, DType::kBFloat16, 128, 8, 16},
                      AttentionCase{DType::kFloat8E4M3, DType::kFloat16, 64, 2, 7},
                      AttentionCase{DType::kBFloat16, DType::kBFloat16, 128, 12, 16},
                      AttentionCase{DType::kFloat16, DType::kFloat16, 256, 1, 1}),
    [](const ::testing::TestParamInfo<AttentionCase>& info) { return info.param.name(); });

TEST(PagedAttentionCpuEdges, BadSequencesGetNaNAndOnlyThey) {
  auto rng = make_rng();
  KvShape shape;
  shape.head_dim = 64;
  shape.seq_lens = {20, 20, 20, 0};
  const KvProblem good = make_kv_problem(shape, rng);
  HostCache cache(good);
  write_all(good, cache);
  KvProblem bad = good;
  bad.block_tables[1 * bad.max_blocks + 1] = static_cast<int32_t>(bad.num_blocks);  // block id out of range
  bad.seq_lens[2] = static_cast<int32_t>(bad.max_blocks * shape.block_size + 1);  // longer than its table row
  const auto out = run_attention(bad, cache, 0.125f);
  const int64_t per_seq = good.q_heads() * shape.head_dim;
  for (int64_t i = 0; i < 4 * per_seq; ++i) {
    const double v = from_bits(out[i], shape.dtype);
    const int64_t s = i / per_seq;
    if (s == 1 || s == 2) {
      EXPECT_TRUE(std::isnan(v)) << "seq " << s;
    } else if (s == 3) {
      EXPECT_EQ(v, 0.0) << "an empty sequence gives zeros";
    } else {
      EXPECT_TRUE(std::isfinite(v));
    }
  }
  // Sequence 0 is unaffected by its neighbours' mistakes.
  const auto clean = run_attention(good, cache, 0.125f);
  EXPECT_TRUE(std::equal(out.begin(), out.begin() + per_seq, clean.begin()));
}

// The int8 cache's attention stays within its quantization error of the
// bf16 cache's: a code is within half a step (max|x| / 254) of its value, so
// the output moves by a small fraction of max |v|; a wrong scale moves it by
// O(max |v|).
TEST(PagedAttentionCpuEdges, Int8CacheStaysCloseToTheBf16Cache) {
  auto rng = make_rng();
  KvShape shape;
  shape.seq_lens = {300, 64};
  const KvProblem p16 = make_kv_problem(shape, rng);
  KvProblem p8 = p16;
  p8.shape.cache_dtype = DType::kInt8;
  KvProblem pbf = p16;
  pbf.shape.cache_dtype = DType::kBFloat16;
  HostCache c8(p8), cbf(pbf);
  write_all(p8, c8);
  write_all(pbf, cbf);
  const auto o8 = run_attention(p8, c8, 0.1f), obf = run_attention(pbf, cbf, 0.1f);
  double max_abs = 0.0, max_diff = 0.0;
  for (size_t i = 0; i < o8.size(); ++i) {
    const double a = from_bits(o8[i], shape.dtype), b = from_bits(obf[i], shape.dtype);
    max_abs = std::max(max_abs, std::fabs(b));
    max_diff = std::max(max_diff, std::fabs(a - b));
  }
  EXPECT_GT(max_abs, 0.0);
  EXPECT_LT(max_diff, 0.02 * max_abs) << "int8 vs bf16 cache";
}

}  // namespace
}  // namespace qgemm::test
