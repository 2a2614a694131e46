// paged_attention_kernel instantiations for a int8 cache (bf16 and fp16 queries).
#include "kvcache/cuda/paged_attention_launch.cuh"

namespace qgemm::detail::attention {

void launch_int8(DType dtype, const Params& params, const Launch& launch) {
  if (dtype == DType::kBFloat16) {
    launch_kind<CacheKind::kInt8, DType::kBFloat16>(params, launch);
  } else {
    launch_kind<CacheKind::kInt8, DType::kFloat16>(params, launch);
  }
}

}  // namespace qgemm::detail::attention
