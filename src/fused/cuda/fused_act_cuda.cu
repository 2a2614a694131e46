// CUDA SiLU-and-mul / bias+GELU + quantization kernels: the instantiations of
// fused_row_kernel for SiluMulOp, GeluOp and GeluInt32Op.
#include "fused/cuda/fused_launch.cuh"

namespace qgemm::detail {

void launch_fused_act(const FusedArgs& args, const FusedLaunch& launch) {
  using namespace fused;
  if (args.op == FusedOp::kSiluMul) {
    launch_by_float_dtype<SiluMulOp>(args.x_dtype, args, launch);
  } else if (args.x_dtype == DType::kInt32) {
    launch_int32_by_param_dtype<GeluInt32Op>(args.param_dtype, args, launch);
  } else {
    launch_by_float_dtype<GeluOp>(args.x_dtype, args, launch);
  }
}

}  // namespace qgemm::detail
