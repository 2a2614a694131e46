// Hopper scaled GEMM instantiations: the swapped stream-K tiles
// (kSm90SwappedStreamK, sm90_swapped_stream_k.cuh) for int8 and precise fp8,
// bf16 and fp16 outputs: 128×160 and 128×192 at M = 129–192, and in three
// to eight token tiles at M = 193–768 int8's 128×80 / 128×96 and precise
// fp8's 128×72, 80, 88 and 96 — 20 kernels. CUTLASS's wgmma atoms of N = 72–160 are extended
// shapes (sm90_one_wave.cu says why the switch stays in the units that need
// it). Built without CUTLASS's programmatic-dependent-launch waits, as
// sm90_streamk.cu and for the same reason (CUTLASS 4.2's stream-K scheduler
// does not compile with them).
#undef CUTLASS_ENABLE_GDC_FOR_SM90
#define CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED
#include "gemm/cuda/sm90_swapped_stream_k.cuh"

namespace qgemm::detail {

bool sm90_swapped_streamk_bf16(const ScaledMmArgs& args, int sm_count) {
  return sm90::run_swapped_stream_k<cutlass::bfloat16_t>(args, sm_count);
}

bool sm90_swapped_streamk_fp16(const ScaledMmArgs& args, int sm_count) {
  return sm90::run_swapped_stream_k<cutlass::half_t>(args, sm_count);
}

}  // namespace qgemm::detail
