// Hopper scaled GEMM instantiations: int8 inputs, bf16 and fp16 outputs (every
// sm90 config).
#include "gemm/cuda/sm90_kernel.cuh"

namespace qgemm::detail {

bool sm90_int8_bf16(GemmKernel kernel, const ScaledMmArgs& args, int sm_count) {
  return sm90::run_config<int8_t, cutlass::bfloat16_t>(kernel, args, sm_count);
}

bool sm90_int8_fp16(GemmKernel kernel, const ScaledMmArgs& args, int sm_count) {
  return sm90::run_config<int8_t, cutlass::half_t>(kernel, args, sm_count);
}

}  // namespace qgemm::detail
