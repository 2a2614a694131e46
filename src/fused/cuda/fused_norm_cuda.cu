// CUDA LayerNorm + quantization kernels: the instantiations of
// fused_row_kernel for LayerNormOp and LayerNormInt32Op (RMSNorm in
// fused_rms_cuda.cu: separate translation units build in parallel).
#include "fused/cuda/fused_launch.cuh"

namespace qgemm::detail {

void launch_fused_norm(const FusedArgs& args, const FusedLaunch& launch) {
  using namespace fused;
  if (args.op == FusedOp::kRmsNorm) {
    launch_fused_rms(args, launch);
  } else if (args.x_dtype == DType::kInt32) {
    launch_int32_by_param_dtype<LayerNormInt32Op>(args.param_dtype, args, launch);
  } else {
    launch_by_float_dtype<LayerNormOp>(args.x_dtype, args, launch);
  }
}

}  // namespace qgemm::detail
