// kv_cache_cpu.h — CPU twin of the paged KV cache ops: the exact reference
// semantics of qgemm/kv_cache.h.
#pragma once

#include "kvcache/kv_cache_args.h"

namespace qgemm::detail {

void kv_cache_write_cpu(const KvWriteArgs& args);
void paged_attention_cpu(const PagedAttentionArgs& args);

}  // namespace qgemm::detail
