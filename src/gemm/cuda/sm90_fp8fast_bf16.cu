// Hopper scaled GEMM instantiations: fp8 inputs with fast accumulation
// (Fp8Accumulation::kFast), bf16 output — the two int8 tiles, Fp8FastWide and
// Fp8FastSquare (sm90_configs.h). A translation unit of its own so that the
// 2-core build compiles it beside the precise fp8 one.
#include "gemm/cuda/sm90_kernel.cuh"

namespace qgemm::detail {

bool sm90_fp8fast_bf16(GemmKernel kernel, const ScaledMmArgs& args, int sm_count) {
  return sm90::run_fp8_fast_config<cutlass::bfloat16_t>(kernel, args, sm_count);
}

}  // namespace qgemm::detail
