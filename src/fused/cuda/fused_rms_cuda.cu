// CUDA RMSNorm (+ residual add) + quantization kernels: the instantiations
// of fused_row_kernel for RmsOp and AddRmsOp.
#include "fused/cuda/fused_launch.cuh"

namespace qgemm::detail {

void launch_fused_rms(const FusedArgs& args, const FusedLaunch& launch) {
  using namespace fused;
  if (args.residual != nullptr) {
    launch_by_float_dtype<AddRmsOp>(args.x_dtype, args, launch);
  } else {
    launch_by_float_dtype<RmsOp>(args.x_dtype, args, launch);
  }
}

}  // namespace qgemm::detail
