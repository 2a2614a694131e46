// Hopper scaled GEMM instantiations: the swapped token halves
// (kSm90SwappedHalves, sm90_swapped.cuh: M = 129–192 in two token tiles),
// int8's 64×80 and 64×96 tiles and precise fp8's 64×72, 80, 88 and 96, bf16
// and fp16 outputs. CUTLASS's wgmma atoms of N = 72–96 are extended shapes
// (sm90_one_wave.cu says why the switch stays in the units that need it).
#define CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED
#include "gemm/cuda/sm90_swapped.cuh"

namespace qgemm::detail {

bool sm90_swapped_halves_bf16(const ScaledMmArgs& args, int sm_count) {
  return sm90::run_swapped_halves<cutlass::bfloat16_t>(args, sm_count);
}

bool sm90_swapped_halves_fp16(const ScaledMmArgs& args, int sm_count) {
  return sm90::run_swapped_halves<cutlass::half_t>(args, sm_count);
}

}  // namespace qgemm::detail
