// Hopper scaled GEMM instantiations with the direct-store epilogue
// (kSm90Direct, sm90_direct_epilogue.cuh), bf16 and fp16 outputs: int8 and
// precise fp8, one kernel each.
#include "gemm/cuda/sm90_kernel.cuh"

namespace qgemm::detail {

bool sm90_direct_bf16(const ScaledMmArgs& args, int sm_count) {
  using Output = cutlass::bfloat16_t;
  return args.input_dtype == DType::kInt8 ? sm90::run_direct<int8_t, Output>(args, sm_count)
                                          : sm90::run_direct<cutlass::float_e4m3_t, Output>(args, sm_count);
}

bool sm90_direct_fp16(const ScaledMmArgs& args, int sm_count) {
  using Output = cutlass::half_t;
  return args.input_dtype == DType::kInt8 ? sm90::run_direct<int8_t, Output>(args, sm_count)
                                          : sm90::run_direct<cutlass::float_e4m3_t, Output>(args, sm_count);
}

}  // namespace qgemm::detail
