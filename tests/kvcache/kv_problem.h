// kv_problem.h — a random paged-cache scenario for the KV cache tests: S
// sequences of given lengths whose blocks are a shuffled, non-contiguous
// subset of the pool, keys / values / queries drawn at random (never zeros),
// the table entries past each sequence's blocks set to −1 (never read), and
// an independent double-precision reference of the decode attention over
// the cache's dequantized contents.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/numeric.h"
#include "qgemm/kv_cache.h"
#include "common/test_util.h"

namespace qgemm::test {

struct KvShape {
  DType cache_dtype = DType::kInt8;
  DType dtype = DType::kBFloat16;  // keys, values, query, out
  int64_t kv_heads = 2, group = 4, head_dim = 128, block_size = 16;
  std::vector<int64_t> seq_lens = {1, 17, 100};
  int64_t spare_blocks = 3;  // pool blocks no sequence uses
  int64_t extra_table_columns = 2;  // table entries past the longest sequence's blocks
};

// Host memory of one scenario; views over it are built on demand.
struct KvProblem {
  KvShape shape;
  int64_t num_blocks = 0, max_blocks = 0, tokens = 0;
  std::vector<uint16_t> keys, values;  // [tokens, kv_heads, head_dim], the dtype's bits
  std::vector<int64_t> slots;          // [tokens]: every sequence's tokens, in order
  std::vector<uint16_t> query;         // [S, q_heads, head_dim]
  std::vector<int32_t> block_tables;   // [S, max_blocks]
  std::vector<int32_t> seq_lens;       // [S]

  int64_t seqs() const { return static_cast<int64_t>(shape.seq_lens.size()); }
  int64_t q_heads() const { return shape.kv_heads * shape.group; }
  size_t cache_elems() const {
    return static_cast<size_t>(num_blocks * shape.block_size * shape.kv_heads * shape.head_dim);
  }
  size_t scale_elems() const { return static_cast<size_t>(num_blocks * shape.block_size * shape.kv_heads); }
  bool quantized() const { return shape.cache_dtype == DType::kInt8 || shape.cache_dtype == DType::kFloat8E4M3; }
};

// "int8_bf16_d128_g4_b16": a readable, stable test name for a case.
inline std::string case_name(DType cache_dtype, DType dtype, int64_t head_dim, int64_t group, int64_t block_size) {
  auto name = [](DType d) { return std::string(d == DType::kFloat8E4M3 ? "fp8" : dtype_name(d)); };
  return name(cache_dtype) + "_" + name(dtype) + "_d" + std::to_string(head_dim) + "_g" + std::to_string(group) + "_b" +
         std::to_string(block_size);
}

// One scenario of the parameterized attention tests (CPU and CUDA).
struct AttentionCase {
  DType cache_dtype, dtype;
  int64_t head_dim, group, block_size;

  KvShape shape(std::vector<int64_t> seq_lens, int64_t kv_heads) const {
    KvShape s;
    s.cache_dtype = cache_dtype;
    s.dtype = dtype;
    s.head_dim = head_dim;
    s.group = group;
    s.block_size = block_size;
    s.kv_heads = kv_heads;
    s.seq_lens = std::move(seq_lens);
    return s;
  }
  std::string name() const { return case_name(cache_dtype, dtype, head_dim, group, block_size); }
};

inline uint16_t to_bits(float v, DType dtype) {
  return dtype == DType::kBFloat16 ? numeric::float_to_bf16_bits(v) : numeric::float_to_fp16_bits(v);
}
inline float from_bits(uint16_t b, DType dtype) {
  return dtype == DType::kBFloat16 ? numeric::bf16_bits_to_float(b) : numeric::fp16_bits_to_float(b);
}

inline KvProblem make_kv_problem(const KvShape& shape, std::mt19937_64& rng) {
  KvProblem p;
  p.shape = shape;
  const int64_t bs = shape.block_size;
  int64_t used = 0;
  for (int64_t len : shape.seq_lens) {
    used += (len + bs - 1) / bs;
    p.max_blocks = std::max(p.max_blocks, (len + bs - 1) / bs);
    p.tokens += len;
  }
  p.max_blocks = std::max<int64_t>(1, p.max_blocks + shape.extra_table_columns);
  p.num_blocks = used + shape.spare_blocks;
  std::vector<int32_t> pool(static_cast<size_t>(p.num_blocks));
  std::iota(pool.begin(), pool.end(), 0);
  std::shuffle(pool.begin(), pool.end(), rng);

  const int64_t s_count = p.seqs(), hd = shape.head_dim, kvh = shape.kv_heads;
  p.block_tables.assign(static_cast<size_t>(s_count * p.max_blocks), -1);
  p.seq_lens.resize(static_cast<size_t>(s_count));
  size_t next_block = 0;
  for (int64_t s = 0; s < s_count; ++s) {
    const int64_t len = shape.seq_lens[s];
    p.seq_lens[s] = static_cast<int32_t>(len);
    for (int64_t b = 0; b < (len + bs - 1) / bs; ++b) p.block_tables[s * p.max_blocks + b] = pool[next_block++];
    for (int64_t j = 0; j < len; ++j) {
      p.slots.push_back(static_cast<int64_t>(p.block_tables[s * p.max_blocks + j / bs]) * bs + j % bs);
    }
  }
  // Head vectors with different magnitudes per token, so per-token scales differ.
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f), magnitude(0.25f, 4.0f);
  auto fill_heads = [&](std::vector<uint16_t>& dst, int64_t rows) {
    dst.resize(static_cast<size_t>(rows * kvh * hd));
    for (int64_t r = 0; r < rows * kvh; ++r) {
      const float m = magnitude(rng);
      for (int64_t d = 0; d < hd; ++d) {
        float v = unit(rng) * m;
        if (v == 0.0f) v = 0.5f;
        dst[r * hd + d] = to_bits(v, shape.dtype);
      }
    }
  };
  fill_heads(p.keys, p.tokens);
  fill_heads(p.values, p.tokens);
  p.query.resize(static_cast<size_t>(s_count * p.q_heads() * hd));
  for (auto& b : p.query) {
    float v = unit(rng);
    if (v == 0.0f) v = 0.25f;
    b = to_bits(v, shape.dtype);
  }
  return p;
}

// A cache's contents read back as double: element (slot, head, d) = code·scale
// or the 16-bit value.
struct CacheContents {
  const KvProblem* p;
  const void* key;
  const void* value;
  const float* key_scale;
  const float* value_scale;

  double element(const void* pool, const float* scales, int64_t slot, int64_t head, int64_t d) const {
    const int64_t at = slot * p->shape.kv_heads + head;
    const int64_t i = at * p->shape.head_dim + d;
    switch (p->shape.cache_dtype) {
      case DType::kInt8: return static_cast<double>(static_cast<const int8_t*>(pool)[i]) * scales[at];
      case DType::kFloat8E4M3:
        return static_cast<double>(numeric::fp8e4m3_bits_to_float(static_cast<const uint8_t*>(pool)[i])) * scales[at];
      default: return from_bits(static_cast<const uint16_t*>(pool)[i], p->shape.cache_dtype);
    }
  }
  double k(int64_t slot, int64_t head, int64_t d) const { return element(key, key_scale, slot, head, d); }
  double v(int64_t slot, int64_t head, int64_t d) const { return element(value, value_scale, slot, head, d); }
};

// out[s, h, d] in double from the cache contents (the formulas of
// qgemm/kv_cache.h, without rounding), and max |v̂| over the cache.
inline std::vector<double> reference_attention(const KvProblem& p, const CacheContents& cache, double softmax_scale,
                                               double* max_abs_value) {
  const int64_t hd = p.shape.head_dim, bs = p.shape.block_size;
  std::vector<double> out(static_cast<size_t>(p.seqs() * p.q_heads() * hd), 0.0);
  *max_abs_value = 0.0;
  for (int64_t s = 0; s < p.seqs(); ++s) {
    const int64_t len = p.seq_lens[s];
    for (int64_t h = 0; h < p.q_heads(); ++h) {
      const int64_t g = h / p.shape.group;
      std::vector<double> logits(static_cast<size_t>(len));
      double max_logit = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < len; ++j) {
        const int64_t slot = static_cast<int64_t>(p.block_tables[s * p.max_blocks + j / bs]) * bs + j % bs;
        double dot = 0.0;
        for (int64_t d = 0; d < hd; ++d) {
          dot += from_bits(p.query[(s * p.q_heads() + h) * hd + d], p.shape.dtype) * cache.k(slot, g, d);
        }
        logits[j] = softmax_scale * dot;
        max_logit = std::max(max_logit, logits[j]);
      }
      double sum = 0.0;
      std::vector<double> acc(static_cast<size_t>(hd), 0.0);
      for (int64_t j = 0; j < len; ++j) {
        const int64_t slot = static_cast<int64_t>(p.block_tables[s * p.max_blocks + j / bs]) * bs + j % bs;
        const double e = std::exp(logits[j] - max_logit);
        sum += e;
        for (int64_t d = 0; d < hd; ++d) {
          const double v = cache.v(slot, g, d);
          acc[d] += e * v;
          *max_abs_value = std::max(*max_abs_value, std::fabs(v));
        }
      }
      for (int64_t d = 0; d < hd; ++d) out[(s * p.q_heads() + h) * hd + d] = len == 0 ? 0.0 : acc[d] / sum;
    }
  }
  return out;
}

// Both results are fp32 computations of the same value rounded once to the
// 16-bit dtype: they differ by the fp32 error (a relative few 1e-6 of
// max |v̂|: sums of at most a few thousand terms) plus, where that straddles a
// rounding boundary, one ulp of the dtype (≤ |value| · 2^-7 bf16, 2^-10 fp16).
inline double output_tolerance(double value, double max_abs_value, DType dtype) {
  return std::fabs(value) * unit_roundoff(dtype) + 1e-5 * max_abs_value + subnormal_spacing(dtype);
}

}  // namespace qgemm::test
