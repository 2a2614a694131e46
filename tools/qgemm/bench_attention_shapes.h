// bench_attention_shapes.h — the decode-attention problems `qgemm bench
// attention` times by default, and how a --shapes entry reads.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace qgemm::tools {

// S sequences of L tokens each, q_heads query heads over kv_heads kv heads of head_dim.
struct AttentionShape {
  int64_t seqs, len, q_heads, kv_heads, head_dim;
};

// --shapes SxLxQxKVxD.
inline AttentionShape attention_shape(const std::vector<int64_t>& s) {
  if (s.size() != 5) throw std::invalid_argument("--shapes takes SxLxQ_HEADSxKV_HEADSxHEAD_DIM entries");
  return {s[0], s[1], s[2], s[3], s[4]};
}

// Llama-3-8B's attention (32 query heads over 8 kv heads, head_dim 128:
// grouped-query) at batch 1 … 128 and contexts 1K … 32K, Llama-2-7B's
// (32 × 32: multi-head) at a few of them, and two wider groups: Llama-3-70B's
// 64 over 8 (8 per kv head) and 64 over 4 (16, the tensor-core kernel's two
// n-blocks of heads), and Gemma-2-9B's head_dim 256 (16 over 8).
inline std::vector<std::vector<int64_t>> default_attention_shapes() {
  return {{1, 4096, 32, 8, 128},   {1, 32768, 32, 8, 128}, {8, 1024, 32, 8, 128},  {8, 8192, 32, 8, 128},
          {32, 1024, 32, 8, 128},  {32, 4096, 32, 8, 128}, {64, 2048, 32, 8, 128}, {128, 1024, 32, 8, 128},
          {128, 4096, 32, 8, 128}, {8, 4096, 32, 32, 128}, {64, 1024, 32, 32, 128}, {32, 4096, 64, 8, 128},
          {32, 2048, 64, 4, 128},  {32, 4096, 16, 8, 256}};
}

}  // namespace qgemm::tools
