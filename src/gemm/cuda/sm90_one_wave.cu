// Hopper scaled GEMM instantiations: the one-wave tiles 128×80 and 128×96
// in clusters of 1×2 (kSm90Wide80, kSm90Wide96) and of 2×1 (kSm90Wide80Pairs,
// kSm90Wide96Pairs; sm90_configs.h) for int8, precise fp8 and fast fp8, bf16
// and fp16 outputs: 24 kernels.
//
// CUTLASS offers the wgmma atoms whose N is outside its standard set (here
// 64×80) only with this switch; without it the collective builder tiles 80
// columns with five 64×16 atoms, each re-reading the A tile from shared
// memory. The other tiles' atoms are the same either way (the selector takes
// the widest N that divides the tile: 256, 192, 128, 96, 64, 16), so the
// switch stays in this unit (docs/design/023).
#define CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED
#include "gemm/cuda/sm90_kernel.cuh"

namespace qgemm::detail {

bool sm90_one_wave_bf16(GemmKernel kernel, const ScaledMmArgs& args, int sm_count) {
  return sm90::run_one_wave_config<cutlass::bfloat16_t>(kernel, args, sm_count);
}

bool sm90_one_wave_fp16(GemmKernel kernel, const ScaledMmArgs& args, int sm_count) {
  return sm90::run_one_wave_config<cutlass::half_t>(kernel, args, sm_count);
}

}  // namespace qgemm::detail
