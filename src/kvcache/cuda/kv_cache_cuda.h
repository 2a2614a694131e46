// kv_cache_cuda.h — CUDA backend of the paged KV cache ops.
#pragma once

#include <cstdint>

#include "kvcache/kv_cache_args.h"

namespace qgemm::detail {

void kv_cache_write_cuda(const KvWriteArgs& args);         // kv_cache_write_cuda.cu
void paged_attention_cuda(const PagedAttentionArgs& args);  // paged_attention_cuda.cu

// The two attention kernels (paged_attention_cuda.cu has the rule between them).
enum class AttentionKernel : uint8_t {
  kAuto,
  kCudaCores,    // paged_attention_kernel.cuh: any group size and head_dim
  kTensorCores,  // paged_attention_mma.cuh: head_dim 64 or 128
};
// For tests and benchmarks: while one is alive, paged_attention_cuda runs
// `kernel` where it can (the tensor-core kernel is skipped at head_dim 256).
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
