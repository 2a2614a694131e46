// kv_cache_cuda.h — CUDA backend of the paged KV cache ops.
#pragma once

#include <cstdint>

#include "kvcache/attention_plan.h"
#include "kvcache/kv_cache_args.h"

namespace qgemm::detail {

void kv_cache_write_cuda(const KvWriteArgs& args);         // kv_cache_write_cuda.cu
void paged_attention_cuda(const PagedAttentionArgs& args);  // paged_attention_cuda.cu

// For tests and benchmarks: while one is alive, paged_attention_cuda runs
// `kernel` (AttentionKernel and the rule it overrides: attention_plan.h).
// Process-wide; not for concurrent use.
class AttentionKernelOverride {
 public:
  explicit AttentionKernelOverride(AttentionKernel kernel);
  ~AttentionKernelOverride();
  AttentionKernelOverride(const AttentionKernelOverride&) = delete;
  AttentionKernelOverride& operator=(const AttentionKernelOverride&) = delete;

 private:
  AttentionKernel previous_;
};

}  // namespace qgemm::detail
