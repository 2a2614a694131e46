// paged_attention_kernel instantiations for a fp8 cache (bf16 and fp16 queries).
#include "kvcache/cuda/paged_attention_launch.cuh"

namespace qgemm::detail::attention {

void launch_fp8(DType dtype, const Params& params, const Launch& launch) {
  if (dtype == DType::kBFloat16) {
    launch_kind<CacheKind::kFp8, DType::kBFloat16>(params, launch);
  } else {
    launch_kind<CacheKind::kFp8, DType::kFloat16>(params, launch);
  }
}

}  // namespace qgemm::detail::attention
