// Hopper scaled GEMM instantiations: the swapped decode kernel (kSm90Decode,
// sm90_decode.cuh) for int8 and precise fp8, bf16 and fp16 outputs. Built
// without CUTLASS's programmatic-dependent-launch waits, as sm90_streamk.cu
// and for the same reason (CUTLASS 4.2's stream-K scheduler does not compile
// with them).
#undef CUTLASS_ENABLE_GDC_FOR_SM90
#include "gemm/cuda/sm90_decode.cuh"

namespace qgemm::detail {

bool sm90_decode_bf16(const ScaledMmArgs& args, int sm_count) { return sm90::run_decode<cutlass::bfloat16_t>(args, sm_count); }

bool sm90_decode_fp16(const ScaledMmArgs& args, int sm_count) { return sm90::run_decode<cutlass::half_t>(args, sm_count); }

}  // namespace qgemm::detail
