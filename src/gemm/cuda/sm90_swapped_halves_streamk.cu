// Hopper scaled GEMM instantiations: the swapped 128×80 and 128×96 stream-K
// tiles (kSm90SwappedHalvesStreamK, sm90_swapped_stream_k.cuh: M = 129–192 in
// two token tiles on long K) for int8 and precise fp8, bf16 and fp16 outputs.
// CUTLASS's wgmma atom of N = 80 is an extended shape (sm90_one_wave.cu says
// why the switch stays in the units that need it). Built without CUTLASS's
// programmatic-dependent-launch waits, as sm90_streamk.cu and for the same
// reason (CUTLASS 4.2's stream-K scheduler does not compile with them).
#undef CUTLASS_ENABLE_GDC_FOR_SM90
#define CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED
#include "gemm/cuda/sm90_swapped_stream_k.cuh"

namespace qgemm::detail {

bool sm90_swapped_halves_streamk_bf16(const ScaledMmArgs& args, int sm_count) {
  return sm90::run_swapped_halves_stream_k<cutlass::bfloat16_t>(args, sm_count);
}

bool sm90_swapped_halves_streamk_fp16(const ScaledMmArgs& args, int sm_count) {
  return sm90::run_swapped_halves_stream_k<cutlass::half_t>(args, sm_count);
}

}  // namespace qgemm::detail
