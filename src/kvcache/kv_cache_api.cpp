// Host entries of the paged KV cache ops (qgemm/kv_cache.h): validate every
// argument with the core/check.h vocabulary, build the backend-neutral args
// (kv_cache_args.h), dispatch to the CPU or CUDA backend.
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "core/check.h"
#include "kvcache/cpu/kv_cache_cpu.h"
#include "kvcache/kv_cache_args.h"
#include "qgemm/kv_cache.h"
#if QGEMM_WITH_CUDA
#include "kvcache/cuda/kv_cache_cuda.h"
#endif

namespace qgemm {
namespace {

using detail::check_dtype;
using detail::check_rank;
using detail::fail;
using detail::shape_string;

constexpr int64_t kMaxSlots = int64_t{1} << 31;

std::string expected_shape(const char* name, const TensorView& t, const std::string& shape) {
  return std::string(name) + ": expected shape " + shape + ", got " + shape_string(t);
}

void check_tensor(const TensorView& t, const char* name, Device device, const char* device_owner) {
  detail::check_device(t, name, device, device_owner);
  if (t.numel() > 0) detail::check_not_null(t, name);
  detail::check_element_aligned(t, name);
}

void check_contiguous(const TensorView& t, const char* name) {
  if (!t.is_contiguous()) {
    fail(ErrorKind::kValue, std::string(name) + ": expected a contiguous tensor, got strides " +
                                detail::strides_string(t));
  }
}

// The cache pool: key / value [num_blocks, block_size, kv_heads, head_dim]
// contiguous, 16-byte aligned (the CUDA kernels read 16-byte vectors of a
// head), scales fp32 [num_blocks, block_size, kv_heads] exactly when the
// cache is quantized.
detail::KvCacheLayout validate_cache(const PagedKvCache& cache, Device device, const char* device_owner) {
  detail::KvCacheLayout layout;
  check_dtype(cache.key, "cache.key", {DType::kInt8, DType::kFloat8E4M3, DType::kFloat16, DType::kBFloat16});
  check_rank(cache.key, "cache.key", 4);
  detail::check_same_dtype(cache.value, "cache.value", cache.key, "cache.key");
  check_rank(cache.value, "cache.value", 4);
  for (int d = 0; d < 4; ++d) {
    if (cache.value.size(d) != cache.key.size(d)) {
      fail(ErrorKind::kValue, "cache.value: expected the shape of cache.key " + shape_string(cache.key) +
                                  ", got " + shape_string(cache.value));
    }
  }
  layout.dtype = cache.key.dtype();
  layout.num_blocks = cache.key.size(0);
  layout.block_size = cache.key.size(1);
  layout.kv_heads = cache.key.size(2);
  layout.head_dim = cache.key.size(3);
  if (layout.num_blocks < 1 || layout.block_size < 1 || layout.kv_heads < 1 || layout.head_dim < 1) {
    fail(ErrorKind::kValue, "cache.key: expected [num_blocks, block_size, kv_heads, head_dim] all >= 1, got " +
                                shape_string(cache.key));
  }
  if (layout.slots() >= kMaxSlots) {  // slots are indexed in 32 bits (kv_cache_math.h)
    fail(ErrorKind::kValue, "cache.key: expected fewer than 2^31 slots (num_blocks · block_size), got " +
                                std::to_string(layout.slots()));
  }
  const std::pair<const TensorView*, const char*> pools[] = {{&cache.key, "cache.key"}, {&cache.value, "cache.value"}};
  for (const auto& [view, name] : pools) {
    check_tensor(*view, name, device, device_owner);
    check_contiguous(*view, name);
    if (device.is_cuda() && reinterpret_cast<uintptr_t>(view->data()) % 16 != 0) {
      fail(ErrorKind::kValue, std::string(name) + ": the CUDA kernels need a 16-byte aligned data pointer");
    }
  }
  layout.key = cache.key.data();
  layout.value = cache.value.data();

  const std::string scale_shape = "[" + std::to_string(layout.num_blocks) + ", " +
                                  std::to_string(layout.block_size) + ", " + std::to_string(layout.kv_heads) + "]";
  const std::pair<const std::optional<TensorView>*, const char*> scales[] = {{&cache.key_scale, "cache.key_scale"},
                                                                             {&cache.value_scale, "cache.value_scale"}};
  for (const auto& [scale, name] : scales) {
    if (!layout.quantized()) {
      if (*scale) {
        fail(ErrorKind::kValue, std::string(name) + ": a " + dtype_name(layout.dtype) +
                                    " cache holds values, not codes; pass no scales");
      }
      continue;
    }
    if (!*scale) {
      fail(ErrorKind::kValue, std::string(name) + ": a " + dtype_name(layout.dtype) +
                                  " cache needs its fp32 scales, shape " + scale_shape);
    }
    const TensorView& s = **scale;
    check_dtype(s, name, {DType::kFloat32});
    if (s.rank() != 3 || s.size(0) != layout.num_blocks || s.size(1) != layout.block_size ||
        s.size(2) != layout.kv_heads) {
      fail(ErrorKind::kValue, expected_shape(name, s, scale_shape));
    }
    check_tensor(s, name, device, device_owner);
    check_contiguous(s, name);
  }
  if (layout.quantized()) {
    layout.key_scale = cache.key_scale->data_as<float>();
    layout.value_scale = cache.value_scale->data_as<float>();
  }
  // The four pool tensors are distinct memory (each is written by kv_cache_write).
  const TensorView* views[4] = {&cache.key, &cache.value, cache.key_scale ? &*cache.key_scale : nullptr,
                                cache.value_scale ? &*cache.value_scale : nullptr};
  const char* names[4] = {"cache.key", "cache.value", "cache.key_scale", "cache.value_scale"};
  for (int i = 0; i < 4; ++i) {
    for (int j = i + 1; j < 4; ++j) {
      if (views[i] && views[j]) detail::check_no_overlap(*views[i], names[i], *views[j], names[j]);
    }
  }
  return layout;
}

// [rows, heads, head_dim] fp16 / bf16 with contiguous head vectors.
void check_heads_tensor(const TensorView& t, const char* name, int64_t rows, const char* rows_symbol,
                        int64_t heads, const char* heads_symbol, int64_t head_dim) {
  check_rank(t, name, 3);
  if (t.size(0) != rows || t.size(1) != heads || t.size(2) != head_dim) {
    fail(ErrorKind::kValue, expected_shape(name, t, std::string("[") + rows_symbol + "=" + std::to_string(rows) +
                                                        ", " + heads_symbol + "=" + std::to_string(heads) +
                                                        ", head_dim=" + std::to_string(head_dim) + "]"));
  }
  if (head_dim > 1 && t.stride(2) != 1) {
    fail(ErrorKind::kValue, std::string(name) + ": expected contiguous head vectors (stride(2) == 1), got strides " +
                                detail::strides_string(t));
  }
  if (t.stride(0) < 0 || t.stride(1) < 0) {
    fail(ErrorKind::kValue, std::string(name) + ": expected non-negative strides, got " + detail::strides_string(t));
  }
}

// A 1-D index tensor of n contiguous elements.
void check_index_vector(const TensorView& t, const char* name, const char* n_symbol, int64_t n,
                        std::initializer_list<DType> dtypes) {
  check_dtype(t, name, dtypes);
  if (t.rank() != 1 || t.size(0) != n) {
    fail(ErrorKind::kValue, expected_shape(name, t, std::string("[") + n_symbol + "=" + std::to_string(n) + "]"));
  }
  if (n > 1 && t.stride(0) != 1) {
    fail(ErrorKind::kValue, std::string(name) + ": expected a contiguous vector, got stride " +
                                std::to_string(t.stride(0)));
  }
}

void check_no_overlap_with_cache(const PagedKvCache& cache, const TensorView& t, const char* name) {
  detail::check_no_overlap(cache.key, "cache.key", t, name);
  detail::check_no_overlap(cache.value, "cache.value", t, name);
  if (cache.key_scale) detail::check_no_overlap(*cache.key_scale, "cache.key_scale", t, name);
  if (cache.value_scale) detail::check_no_overlap(*cache.value_scale, "cache.value_scale", t, name);
}

}  // namespace

void kv_cache_write(const PagedKvCache& cache, const TensorView& key, const TensorView& value,
                    const TensorView& slot_mapping, Stream stream) {
  const Device device = cache.key.device();
  detail::check_backend_available(device, "kv_cache_write");
  detail::KvWriteArgs args;
  args.cache = validate_cache(cache, device, "cache.key");
  check_dtype(key, "key", {DType::kFloat16, DType::kBFloat16});
  detail::check_same_dtype(value, "value", key, "key");
  if (!args.cache.quantized() && args.cache.dtype != key.dtype()) {
    fail(ErrorKind::kType, std::string("cache.key: a 16-bit cache must have the keys' dtype ") +
                               dtype_name(key.dtype()) + ", got " + dtype_name(args.cache.dtype));
  }
  check_rank(key, "key", 3);
  const int64_t tokens = key.size(0);
  check_heads_tensor(key, "key", tokens, "T", args.cache.kv_heads, "kv_heads", args.cache.head_dim);
  check_heads_tensor(value, "value", tokens, "T", args.cache.kv_heads, "kv_heads", args.cache.head_dim);
  check_index_vector(slot_mapping, "slot_mapping", "T", tokens, {DType::kInt32, DType::kInt64});
  check_tensor(key, "key", device, "cache.key");
  check_tensor(value, "value", device, "cache.key");
  check_tensor(slot_mapping, "slot_mapping", device, "cache.key");
  check_no_overlap_with_cache(cache, key, "key");
  check_no_overlap_with_cache(cache, value, "value");
  check_no_overlap_with_cache(cache, slot_mapping, "slot_mapping");

  args.input_dtype = key.dtype();
  args.tokens = tokens;
  args.key = key.data();
  args.value = value.data();
  args.key_token_stride = key.stride(0);
  args.key_head_stride = key.stride(1);
  args.value_token_stride = value.stride(0);
  args.value_head_stride = value.stride(1);
  args.slot_mapping = slot_mapping.data();
  args.slot_mapping_int64 = slot_mapping.dtype() == DType::kInt64;
  args.device = device;
  args.stream = stream;
  if (tokens == 0) return;
  if (device.is_cpu()) {
    detail::kv_cache_write_cpu(args);
    return;
  }
#if QGEMM_WITH_CUDA
  detail::kv_cache_write_cuda(args);
#endif
}

int64_t paged_attention_workspace_bytes(int64_t num_seqs, int64_t q_heads, int64_t head_dim, int64_t max_seq_len) {
  if (num_seqs < 0 || q_heads < 0 || head_dim < 0 || max_seq_len < 0) {
    fail(ErrorKind::kValue, "paged_attention_workspace_bytes: expected sizes >= 0, got num_seqs=" +
                                std::to_string(num_seqs) + ", q_heads=" + std::to_string(q_heads) +
                                ", head_dim=" + std::to_string(head_dim) + ", max_seq_len=" +
                                std::to_string(max_seq_len));
  }
  return detail::attention_workspace_bytes(num_seqs, q_heads, head_dim, max_seq_len);
}

void paged_attention_decode(const TensorView& out, const TensorView& query, const PagedKvCache& cache,
                            const TensorView& block_tables, const TensorView& seq_lens, float softmax_scale,
                            int64_t max_seq_len, const std::optional<TensorView>& workspace, Stream stream) {
  const Device device = out.device();
  detail::check_backend_available(device, "paged_attention_decode");
  detail::PagedAttentionArgs args;
  args.cache = validate_cache(cache, device, "out");
  const int64_t head_dim = args.cache.head_dim;
  if (head_dim != 64 && head_dim != 128 && head_dim != 256) {
    fail(ErrorKind::kValue, "cache.key: paged_attention_decode takes head_dim 64, 128 or 256, got " +
                                std::to_string(head_dim));
  }
  check_dtype(query, "query", {DType::kFloat16, DType::kBFloat16});
  detail::check_same_dtype(out, "out", query, "query");
  if (!args.cache.quantized() && args.cache.dtype != query.dtype()) {
    fail(ErrorKind::kType, std::string("cache.key: a 16-bit cache must have the query's dtype ") +
                               dtype_name(query.dtype()) + ", got " + dtype_name(args.cache.dtype));
  }
  check_rank(query, "query", 3);
  const int64_t seqs = query.size(0), q_heads = query.size(1);
  if (q_heads < 1 || q_heads % args.cache.kv_heads != 0) {
    fail(ErrorKind::kValue, "query: expected q_heads a positive multiple of the cache's kv_heads=" +
                                std::to_string(args.cache.kv_heads) + ", got shape " + shape_string(query));
  }
  check_heads_tensor(query, "query", seqs, "S", q_heads, "q_heads", head_dim);
  check_heads_tensor(out, "out", seqs, "S", q_heads, "q_heads", head_dim);
  check_dtype(block_tables, "block_tables", {DType::kInt32});
  check_rank(block_tables, "block_tables", 2);
  if (block_tables.size(0) != seqs || block_tables.size(1) < 1) {
    fail(ErrorKind::kValue, expected_shape("block_tables", block_tables,
                                           "[S=" + std::to_string(seqs) + ", max_blocks >= 1]"));
  }
  detail::check_row_major(block_tables, "block_tables", "S", seqs, "max_blocks", block_tables.size(1));
  check_index_vector(seq_lens, "seq_lens", "S", seqs, {DType::kInt32});
  if (!std::isfinite(softmax_scale)) {
    fail(ErrorKind::kValue, "softmax_scale: expected a finite value, got " + std::to_string(softmax_scale));
  }
  const int64_t capacity = block_tables.size(1) * args.cache.block_size;
  if (capacity >= kMaxSlots) {  // token indices are 32-bit (kv_cache_math.h)
    fail(ErrorKind::kValue, "block_tables: expected max_blocks · block_size below 2^31 tokens, got " +
                                std::to_string(capacity));
  }
  if (max_seq_len < 0) {
    fail(ErrorKind::kValue, "max_seq_len: expected >= 0 (0: the block table's capacity), got " +
                                std::to_string(max_seq_len));
  }
  args.max_seq_len = max_seq_len == 0 || max_seq_len > capacity ? capacity : max_seq_len;

  const std::pair<const TensorView*, const char*> inputs[] = {
      {&query, "query"}, {&block_tables, "block_tables"}, {&seq_lens, "seq_lens"}};
  check_tensor(out, "out", device, "out");
  for (const auto& [view, name] : inputs) {
    check_tensor(*view, name, device, "out");
    detail::check_no_overlap(out, "out", *view, name);
  }
  check_no_overlap_with_cache(cache, out, "out");
  if (workspace) {
    const int64_t needed = detail::attention_workspace_bytes(seqs, q_heads, head_dim, args.max_seq_len);
    detail::check_workspace(*workspace, device, needed, "paged_attention_workspace_bytes(...)",
                            {{&out, "out"}, {&query, "query"}, {&cache.key, "cache.key"}, {&cache.value, "cache.value"},
                             {&block_tables, "block_tables"}, {&seq_lens, "seq_lens"}});
    args.workspace = workspace->size(0) > 0 ? workspace->data() : nullptr;
  }

  args.dtype = query.dtype();
  args.num_seqs = seqs;
  args.q_heads = q_heads;
  args.query = query.data();
  args.query_seq_stride = query.stride(0);
  args.query_head_stride = query.stride(1);
  args.out = out.data();
  args.out_seq_stride = out.stride(0);
  args.out_head_stride = out.stride(1);
  args.block_tables = block_tables.data_as<const int32_t>();
  args.max_blocks = block_tables.size(1);
  args.block_table_stride = seqs > 1 ? block_tables.stride(0) : block_tables.size(1);
  args.seq_lens = seq_lens.data_as<const int32_t>();
  args.softmax_scale = softmax_scale;
  args.device = device;
  args.stream = stream;
  if (seqs == 0) return;
  if (device.is_cpu()) {
    detail::paged_attention_cpu(args);
    return;
  }
#if QGEMM_WITH_CUDA
  detail::paged_attention_cuda(args);
#endif
}

}  // namespace qgemm
