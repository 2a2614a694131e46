// Hopper scaled GEMM instantiations: the cluster-1×4 tiles — thin 64×48
// ping-pong (kSm90Thin48) and the one-wave 128×80 and 128×96 cooperative tiles
// (kSm90Wide80x4, kSm90Wide96x4); sm90_configs.h — for int8, precise fp8 and
// fast fp8, bf16 and fp16 outputs. The 64×48 and 64×80 wgmmas are CUTLASS
// extended shapes, which this switch enables (as in sm90_one_wave.cu;
// docs/design/023).
#define CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED
#include "gemm/cuda/sm90_kernel.cuh"

namespace qgemm::detail {

bool sm90_cluster4_bf16(GemmKernel kernel, const ScaledMmArgs& args, int sm_count) {
  return sm90::run_cluster4_config<cutlass::bfloat16_t>(kernel, args, sm_count);
}

bool sm90_cluster4_fp16(GemmKernel kernel, const ScaledMmArgs& args, int sm_count) {
  return sm90::run_cluster4_config<cutlass::half_t>(kernel, args, sm_count);
}

}  // namespace qgemm::detail
