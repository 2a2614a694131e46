// Hopper scaled GEMM instantiations: fp8 inputs, bf16 and fp16 outputs (every
// sm90 config).
#include "gemm/cuda/sm90_kernel.cuh"

namespace qgemm::detail {

bool sm90_fp8_bf16(GemmKernel kernel, const ScaledMmArgs& args, int sm_count) {
  return sm90::run_config<cutlass::float_e4m3_t, cutlass::bfloat16_t>(kernel, args, sm_count);
}

bool sm90_fp8_fp16(GemmKernel kernel, const ScaledMmArgs& args, int sm_count) {
  return sm90::run_config<cutlass::float_e4m3_t, cutlass::half_t>(kernel, args, sm_count);
}

}  // namespace qgemm::detail
