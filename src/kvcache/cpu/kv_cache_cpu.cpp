// CPU twin of kv_cache_write and paged_attention_decode: the formulas of
// qgemm/kv_cache.h in a fixed order: the dot products over head_dim in
// dot_float's order (core/cpu_dot.h: 16 interleaved partial sums), the sums
// over tokens in token order. OpenMP threads take tokens (write) or
// (sequence, kv head) pairs (attention).
#include "kvcache/cpu/kv_cache_cpu.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/cpu_dot.h"
#include "gemm/cpu/output_store.h"
#include "kvcache/kv_cache_math.h"

namespace qgemm::detail {
namespace {

int64_t slot_of(const KvWriteArgs& args, int64_t t) {
  return args.slot_mapping_int64 ? static_cast<const int64_t*>(args.slot_mapping)[t]
                                 : static_cast<const int32_t*>(args.slot_mapping)[t];
}

// One head vector x (head_dim elements of `dtype` at `src`) into slot `slot`
// of a pool (`codes`, `scales`).
void write_head(const KvCacheLayout& cache, DType dtype, const void* src, void* pool, float* scales,
                int64_t slot, int64_t head) {
  const int64_t d_count = cache.head_dim;
  const int64_t at = slot * cache.kv_heads + head;
  if (!cache.quantized()) {
    std::memcpy(static_cast<uint16_t*>(pool) + at * d_count, src, static_cast<size_t>(d_count) * 2);
    return;
  }
  const bool fp8 = cache.dtype == DType::kFloat8E4M3;
  quant::AbsMax amax;
  for (int64_t d = 0; d < d_count; ++d) amax.add(load_float(src, d, dtype));
  const quant::GroupCode code = quant::code_of(amax, kv::cache_qmax(fp8));
  uint8_t* dst = static_cast<uint8_t*>(pool) + at * d_count;
  for (int64_t d = 0; d < d_count; ++d) dst[d] = kv::quantize_code(load_float(src, d, dtype), code.inv_scale, fp8);
  scales[at] = code.scale;
}

}  // namespace

void kv_cache_write_cpu(const KvWriteArgs& args) {
  const size_t elem = dtype_size(args.input_dtype);
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < args.tokens; ++t) {
    const int64_t slot = slot_of(args, t);
    if (slot < 0 || slot >= args.cache.slots()) continue;
    for (int64_t h = 0; h < args.cache.kv_heads; ++h) {
      const auto* key = static_cast<const char*>(args.key) + (t * args.key_token_stride + h * args.key_head_stride) * elem;
      const auto* value =
          static_cast<const char*>(args.value) + (t * args.value_token_stride + h * args.value_head_stride) * elem;
      write_head(args.cache, args.input_dtype, key, args.cache.key, args.cache.key_scale, slot, h);
      write_head(args.cache, args.input_dtype, value, args.cache.value, args.cache.value_scale, slot, h);
    }
  }
}

void paged_attention_cpu(const PagedAttentionArgs& args) {
  const KvCacheLayout& cache = args.cache;
  const int64_t d_count = cache.head_dim, group = args.group_size();
  const bool fp8 = cache.dtype == DType::kFloat8E4M3;
  const size_t elem = dtype_size(args.dtype);
  // The key or value vector of (slot, kv head) before its scale, as floats
  // (exact), one tight loop per cache dtype.
  auto widen = [&](const void* pool, int64_t at, float* dst) {
    const int64_t first = at * d_count;
    switch (cache.dtype) {
      case DType::kInt8: {
        const int8_t* src = static_cast<const int8_t*>(pool) + first;
        for (int64_t d = 0; d < d_count; ++d) dst[d] = static_cast<float>(src[d]);
        break;
      }
      case DType::kFloat8E4M3: {
        const uint8_t* src = static_cast<const uint8_t*>(pool) + first;
        for (int64_t d = 0; d < d_count; ++d) dst[d] = kv::code_value(src[d], fp8);
        break;
      }
      case DType::kBFloat16: {
        const uint16_t* src = static_cast<const uint16_t*>(pool) + first;
        for (int64_t d = 0; d < d_count; ++d) dst[d] = numeric::bf16_bits_to_float(src[d]);
        break;
      }
      default: {
        const uint16_t* src = static_cast<const uint16_t*>(pool) + first;
        for (int64_t d = 0; d < d_count; ++d) dst[d] = numeric::fp16_bits_to_float(src[d]);
        break;
      }
    }
  };
  auto scale = [&](const float* scales, int64_t at) { return cache.quantized() ? scales[at] : 1.0f; };

  // One task per (sequence, kv head): each cache vector is widened once for
  // the `group` query heads that read it.
#pragma omp parallel for collapse(2) schedule(dynamic)
  for (int64_t s = 0; s < args.num_seqs; ++s) {
    for (int64_t g = 0; g < cache.kv_heads; ++g) {
      const int32_t* table = args.block_tables + s * args.block_table_stride;
      const int64_t len = args.seq_lens[s];
      auto out_row = [&](int64_t h) {
        return static_cast<char*>(args.out) + (s * args.out_seq_stride + h * args.out_head_stride) * elem;
      };
      bool valid = len >= 0 && len <= args.max_blocks * cache.block_size;
      std::vector<int64_t> slots(valid ? static_cast<size_t>(len) : 0);
      for (int64_t j = 0; valid && j < len; ++j) {
        slots[j] = kv::token_slot(table, static_cast<uint32_t>(j), static_cast<uint32_t>(cache.block_size),
                                  static_cast<uint32_t>(cache.num_blocks));
        valid = slots[j] >= 0;
      }
      if (!valid || len == 0) {
        const float fill = valid ? 0.0f : std::numeric_limits<float>::quiet_NaN();
        for (int64_t h = g * group; h < (g + 1) * group; ++h) {
          for (int64_t d = 0; d < d_count; ++d) store_float(out_row(h), d, args.dtype, fill);
        }
        continue;
      }
      // q of the group's heads, then logits[h][j] = softmax_scale · ((q_h · k_j) · s_k[j]).
      std::vector<float> q(static_cast<size_t>(group * d_count)), vec(static_cast<size_t>(d_count));
      for (int64_t i = 0; i < group; ++i) {
        const auto* src = static_cast<const char*>(args.query) +
                          (s * args.query_seq_stride + (g * group + i) * args.query_head_stride) * elem;
        for (int64_t d = 0; d < d_count; ++d) q[i * d_count + d] = load_float(src, d, args.dtype);
      }
      std::vector<float> logits(static_cast<size_t>(group * len));
      std::vector<float> max_logit(static_cast<size_t>(group), -std::numeric_limits<float>::infinity());
      for (int64_t j = 0; j < len; ++j) {
        const int64_t at = slots[j] * cache.kv_heads + g;
        widen(cache.key, at, vec.data());
        for (int64_t i = 0; i < group; ++i) {
          const float dot = dot_float(&q[i * d_count], vec.data(), d_count);
          const float logit = args.softmax_scale * (dot * scale(cache.key_scale, at));
          logits[i * len + j] = logit;
          max_logit[i] = std::fmax(max_logit[i], logit);
        }
      }
      // p = exp(logit − max); acc = Σ_j (p_j · s_v[j]) · v_j; out = acc / Σ_j p_j.
      std::vector<float> sum(static_cast<size_t>(group), 0.0f), acc(static_cast<size_t>(group * d_count), 0.0f);
      for (int64_t j = 0; j < len; ++j) {
        const int64_t at = slots[j] * cache.kv_heads + g;
        widen(cache.value, at, vec.data());
        for (int64_t i = 0; i < group; ++i) {
          const float prob = std::exp(logits[i * len + j] - max_logit[i]);
          sum[i] += prob;
          const float weight = prob * scale(cache.value_scale, at);
          for (int64_t d = 0; d < d_count; ++d) acc[i * d_count + d] += weight * vec[d];
        }
      }
      for (int64_t i = 0; i < group; ++i) {
        for (int64_t d = 0; d < d_count; ++d) store_float(out_row(g * group + i), d, args.dtype, acc[i * d_count + d] / sum[i]);
      }
    }
  }
}

}  // namespace qgemm::detail
