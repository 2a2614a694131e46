// Hopper scaled GEMM instantiations: fp8 inputs with fast accumulation
// (Fp8Accumulation::kFast), bf16 and fp16 outputs — the int8 tiles
// (Fp8FastWide, Fp8FastSquare, …; sm90_configs.h).
#include "gemm/cuda/sm90_kernel.cuh"

namespace qgemm::detail {

bool sm90_fp8fast_bf16(GemmKernel kernel, const ScaledMmArgs& args, int sm_count) {
  return sm90::run_fp8_fast_config<cutlass::bfloat16_t>(kernel, args, sm_count);
}

bool sm90_fp8fast_fp16(GemmKernel kernel, const ScaledMmArgs& args, int sm_count) {
  return sm90::run_fp8_fast_config<cutlass::half_t>(kernel, args, sm_count);
}

}  // namespace qgemm::detail
