// Ampere scaled GEMM instantiations: int8 inputs, bf16 and fp16 outputs (every
// sm80 config).
#include "gemm/cuda/sm80_kernel.cuh"

namespace qgemm::detail {

bool sm80_int8_bf16(GemmKernel kernel, const ScaledMmArgs& args) {
  return sm80::run_config<int8_t, cutlass::bfloat16_t>(kernel, args);
}

bool sm80_int8_fp16(GemmKernel kernel, const ScaledMmArgs& args) {
  return sm80::run_config<int8_t, cutlass::half_t>(kernel, args);
}

}  // namespace qgemm::detail
