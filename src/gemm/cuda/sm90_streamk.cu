// Hopper scaled GEMM instantiations: the stream-K kernel (kSm90StreamK,
// sm90_stream_k.cuh) for int8, precise fp8 and fast fp8, bf16 and fp16
// outputs.
//
// Without CUTLASS's programmatic-dependent-launch waits: with them, CUTLASS
// 4.2's stream-K scheduler does not compile (is_last_tile, a const member,
// hands a member to a non-const reference). The kernel then launches without
// PDL (Kernel::launch); a stream-K call is preceded by the memset that clears
// its flags anyway, so PDL would overlap nothing with the previous kernel.
#undef CUTLASS_ENABLE_GDC_FOR_SM90
#include "gemm/cuda/sm90_stream_k.cuh"

namespace qgemm::detail {

bool sm90_streamk_bf16(const ScaledMmArgs& args, int sm_count) {
  return sm90::run_stream_k<cutlass::bfloat16_t>(args, sm_count);
}

bool sm90_streamk_fp16(const ScaledMmArgs& args, int sm_count) {
  return sm90::run_stream_k<cutlass::half_t>(args, sm_count);
}

}  // namespace qgemm::detail
