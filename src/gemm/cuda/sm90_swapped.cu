// Hopper scaled GEMM instantiations: the swapped 64×32, 64×160 and 64×192
// tiles (kSm90Swapped, sm90_swapped.cuh) for int8 and precise fp8, bf16 and
// fp16 outputs. CUTLASS's wgmma atoms of N = 160 and, for precise fp8's
// slices, 80 are extended shapes (sm90_one_wave.cu says why the switch stays
// in the units that need it).
#define CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED
#include "gemm/cuda/sm90_swapped.cuh"

namespace qgemm::detail {

bool sm90_swapped_bf16(const ScaledMmArgs& args, int sm_count) { return sm90::run_swapped<cutlass::bfloat16_t>(args, sm_count); }

bool sm90_swapped_fp16(const ScaledMmArgs& args, int sm_count) { return sm90::run_swapped<cutlass::half_t>(args, sm_count); }

}  // namespace qgemm::detail
