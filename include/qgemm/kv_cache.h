// qgemm/kv_cache.h — a paged KV cache in int8 / fp8 e4m3 (or 16 bits) and
// the decode attention that reads it (docs/kv_cache.md has every formula).
//
// The cache is a pool of `num_blocks` blocks of `block_size` token slots
// shared by all sequences (vLLM's paged attention). Slot s is token
// s % block_size of block s / block_size. Layout (NHD: a slot's heads are
// contiguous, a head's dims are contiguous):
//   key, value           [num_blocks, block_size, kv_heads, head_dim]
//                        int8 / fp8 e4m3 (quantized) or the keys' fp16 / bf16
//   key_scale, value_scale  fp32 [num_blocks, block_size, kv_heads]: one scale
//                        per token and head; quantized caches only
// Every cache tensor is contiguous. A sequence's tokens live in the blocks its
// row of `block_tables` lists: token j is in slot
//   block_tables[s, j / block_size] · block_size + j % block_size.
//
// Quantization (kv_cache_write), per token t and kv head h, exactly
// qgemm/quant.h's dynamic symmetric per-token formula over the head's vector:
//   s = amax_d |x[t,h,d]| / qmax   (qmax = 127 int8, 448 fp8; 0 → 1)
//   q = sat(rne(x · (1/s)))        int8 range [−128, 127]; fp8 saturating
// CPU and CUDA codes and scales are bit-identical.
//
// Decode attention (paged_attention_decode), one query token per sequence,
// for query head h reading kv head g = h / (q_heads / kv_heads) (grouped-query
// attention), L = seq_lens[s], k̂ / v̂ the dequantized cache (code · scale):
//   logit_j = softmax_scale · (q[s,h,:] · k̂_j)       j < L, fp32
//   p_j     = exp(logit_j − max_j logit_j)
//   out     = round_T( Σ_j p_j · v̂_j / Σ_j p_j )
// L = 0 gives zeros. A sequence with L < 0, L beyond its row of the block
// table (L > max_blocks · block_size) or a block id outside [0, num_blocks)
// among its first ceil(L / block_size) entries gets NaN outputs: the GPU
// cannot report device-side values without a host synchronization, so both
// backends make the mistake visible instead of reading out of bounds. The
// backends differ only in fp32 summation order and exp (a few fp32 ulps).
#pragma once

#include <cstdint>
#include <optional>

#include "qgemm/tensor.h"

namespace qgemm {

// The four tensors of one layer's paged KV cache (layout above).
struct PagedKvCache {
  TensorView key;                        // [num_blocks, block_size, kv_heads, head_dim]
  TensorView value;                      // same shape and dtype as key
  std::optional<TensorView> key_scale;   // fp32 [num_blocks, block_size, kv_heads]; quantized only
  std::optional<TensorView> value_scale;
};

// Writes the new tokens' keys and values into their slots, quantizing them
// when the cache is int8 / fp8. key, value [T, kv_heads, head_dim] fp16 /
// bf16 with contiguous head vectors (stride(2) == 1; the token and head
// strides are free, so slices of a fused QKV projection go in directly).
// slot_mapping [T] int32 or int64: the slot of each token; a negative slot
// (padding) and a slot >= num_blocks · block_size are skipped.
void kv_cache_write(const PagedKvCache& cache, const TensorView& key, const TensorView& value,
                    const TensorView& slot_mapping, Stream stream = nullptr);

// One decode step of attention over the cache: out, query [S, q_heads,
// head_dim] fp16 / bf16 (the same dtype; stride(2) == 1, other strides free),
// q_heads a multiple of kv_heads, head_dim 64, 128 or 256; block_tables
// [S, max_blocks] int32 (row stride >= max_blocks); seq_lens [S] int32.
//
// max_seq_len (>= 0; 0 = the table's capacity max_blocks · block_size) is a
// host-side bound on seq_lens that sizes the split of long sequences over
// several CTAs (flash-decoding). It is a performance hint only: a longer
// sequence is still attended in full. The split needs `workspace` (uint8,
// 1-D, 16-byte aligned, on the device, at least
// paged_attention_workspace_bytes(...) bytes); without one each sequence and
// kv head is one CTA. CUDA calls allocate nothing and do not synchronize.
void paged_attention_decode(const TensorView& out, const TensorView& query,
                            const PagedKvCache& cache, const TensorView& block_tables,
                            const TensorView& seq_lens, float softmax_scale, int64_t max_seq_len = 0,
                            const std::optional<TensorView>& workspace = std::nullopt,
                            Stream stream = nullptr);

// Workspace bytes the split of paged_attention_decode needs for S sequences
// of at most max_seq_len tokens (0 when no sequence is split).
int64_t paged_attention_workspace_bytes(int64_t num_seqs, int64_t q_heads, int64_t head_dim,
                                        int64_t max_seq_len);

}  // namespace qgemm
