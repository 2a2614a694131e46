// Ada scaled GEMM instantiations: fp8 e4m3 inputs, bf16 and fp16 outputs
// (every mma.sync config; sm_89 code, whose PTX also runs on later GPUs).
#include "gemm/cuda/sm80_kernel.cuh"

namespace qgemm::detail {

bool sm89_fp8_bf16(GemmKernel kernel, const ScaledMmArgs& args) {
  return sm80::run_config<cutlass::float_e4m3_t, cutlass::bfloat16_t>(kernel, args);
}

bool sm89_fp8_fp16(GemmKernel kernel, const ScaledMmArgs& args) {
  return sm80::run_config<cutlass::float_e4m3_t, cutlass::half_t>(kernel, args);
}

}  // namespace qgemm::detail
