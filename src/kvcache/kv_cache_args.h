// kv_cache_args.h — the validated, backend-neutral description of one KV
// cache call. The host entry (kv_cache_api.cpp) builds it from TensorViews
// after validation; the CPU and CUDA backends read only these structs.
#pragma once

#include <cstdint>

#include "qgemm/tensor.h"

namespace qgemm::detail {

// The cache pool (qgemm/kv_cache.h): contiguous, so a slot's head vector is
// at (slot · kv_heads + head) · head_dim elements, its scale at
// slot · kv_heads + head.
struct KvCacheLayout {
  DType dtype = DType::kInt8;  // int8, fp8 e4m3, or fp16 / bf16 (unquantized)
  int64_t num_blocks = 0, block_size = 0, kv_heads = 0, head_dim = 0;
  void* key = nullptr;
  void* value = nullptr;
  float* key_scale = nullptr;    // null for a 16-bit cache
  float* value_scale = nullptr;

  bool quantized() const { return dtype == DType::kInt8 || dtype == DType::kFloat8E4M3; }
  int64_t slots() const { return num_blocks * block_size; }
};

struct KvWriteArgs {
  KvCacheLayout cache;
  DType input_dtype = DType::kBFloat16;  // key / value: fp16 or bf16
  int64_t tokens = 0;
  const void* key = nullptr;
  const void* value = nullptr;
  int64_t key_token_stride = 0, key_head_stride = 0;  // elements
  int64_t value_token_stride = 0, value_head_stride = 0;
  const void* slot_mapping = nullptr;
  bool slot_mapping_int64 = false;
  Device device{};
  Stream stream = nullptr;
};

struct PagedAttentionArgs {
  KvCacheLayout cache;
  DType dtype = DType::kBFloat16;  // query and out
  int64_t num_seqs = 0, q_heads = 0;
  const void* query = nullptr;
  int64_t query_seq_stride = 0, query_head_stride = 0;
  void* out = nullptr;
  int64_t out_seq_stride = 0, out_head_stride = 0;
  const int32_t* block_tables = nullptr;
  int64_t max_blocks = 0, block_table_stride = 0;
  const int32_t* seq_lens = nullptr;
  float softmax_scale = 1.0f;
  int64_t max_seq_len = 0;  // host bound on seq_lens, >= 1 (the table's capacity when not given)
  void* workspace = nullptr;  // null: no split (validated to hold attention_workspace_bytes)
  Device device{};
  Stream stream = nullptr;

  int64_t group_size() const { return q_heads / cache.kv_heads; }  // query heads per kv head
};

// The split of long sequences (flash-decoding): partitions of at least
// kMinPartitionTokens tokens, each a CTA, combined by a second kernel
// through the workspace; the CUDA backend picks how many per call
// (paged_attention_cuda.cu). The CPU backend computes the same result unsplit.
constexpr int64_t kMinPartitionTokens = 256;
inline int64_t max_attention_partitions(int64_t max_seq_len) {
  return max_seq_len <= kMinPartitionTokens ? 1 : (max_seq_len + kMinPartitionTokens - 1) / kMinPartitionTokens;
}
// How one call splits its sequences: `partitions` CTAs per (sequence, kv
// head, head chunk), each partition_tokens tokens (a multiple of 16, the
// tensor-core kernel's group), the last one also taking every token past
// partitions · partition_tokens. About one wave of resident CTAs
// (`ctas_unsplit` CTAs without a split, `resident_per_sm` per SM): the
// nearest whole number of partitions to a wave's worth, between 1 and
// max_attention_partitions, which the workspace is sized for.
struct AttentionSplit {
  int64_t partitions, partition_tokens;
};
inline AttentionSplit attention_split(int64_t ctas_unsplit, int resident_per_sm, int sms, int64_t max_seq_len) {
  const int64_t wave = static_cast<int64_t>(resident_per_sm) * sms;
  int64_t parts = (wave + ctas_unsplit / 2) / ctas_unsplit;
  parts = parts < 1 ? 1 : parts > max_attention_partitions(max_seq_len) ? max_attention_partitions(max_seq_len) : parts;
  const int64_t tokens = ((max_seq_len + parts - 1) / parts + 15) / 16 * 16;  // whole 16-token groups
  return {(max_seq_len + tokens - 1) / tokens, tokens};
}

// Per (sequence, query head, partition): the running max, the sum of
// exp(logit − max) and the unnormalized head_dim outputs, all fp32; room for
// the most partitions.
inline int64_t attention_workspace_bytes(int64_t num_seqs, int64_t q_heads, int64_t head_dim,
                                         int64_t max_seq_len) {
  const int64_t parts = max_attention_partitions(max_seq_len);
  return parts == 1 ? 0 : num_seqs * q_heads * parts * (head_dim + 2) * static_cast<int64_t>(sizeof(float));
}

}  // namespace qgemm::detail
