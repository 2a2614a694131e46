// paged_attention_kernel instantiations for an unquantized cache, in the
// query's own dtype (bf16 or fp16).
#include "kvcache/cuda/paged_attention_launch.cuh"

namespace qgemm::detail::attention {

void launch_16bit(DType dtype, const Params& params, const Launch& launch) {
  if (dtype == DType::kBFloat16) {
    launch_kind<CacheKind::kBFloat16, DType::kBFloat16>(params, launch);
  } else {
    launch_kind<CacheKind::kHalf, DType::kFloat16>(params, launch);
  }
}

}  // namespace qgemm::detail::attention
