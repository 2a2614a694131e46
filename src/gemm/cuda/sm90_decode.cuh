// sm90_decode.cuh — kSm90Decode: M ≤ 16 (decode) on Hopper's wgmma with the
// operands swapped, on CUTLASS's stream-K scheduler. Included only by
// sm90_decode_*.cu.
//
// A wgmma is 64 rows tall but can be 8 or 16 columns wide, so a decode GEMM
// runs as Dᵀ = B·Aᵀ (Kernel<…, kSwapped>): the weight's N channels fill the
// rows of 128-row tiles, the M ≤ 16 tokens one 16-column tile, and Dᵀ is
// stored column-major — the bytes of D row-major. TMA streams the weight
// into a ring of 12 stages; the 8-bit operands feed the tensor cores as
// they are (mma.sync on sm_90 has no e4m3 form: kSm90SkinnyStream converts
// every fp8 word to f16 first). Whole tiles would leave most SMs idle (N =
// 4096 is 32 tiles), so CUTLASS's stream-K scheduler cuts them along K
// (sm90_swapped_stream_k.cuh); without the call's workspace the kernel
// declines. Of the scheduler's modes, forced in one call on the H200
// (bench/results/gemm-h200-decode-swapped-modes.json), the heuristic one was
// within 1.5 % of the fastest at every shape; stream-K cut every tile of
// N = 28672 (two waves) and ran 6 % slower there, data-parallel left N =
// 8192 on 64 of 132 SMs (1×8192×28672 78 µs against 65).
#pragma once

#include "gemm/cuda/sm90_swapped_stream_k.cuh"

namespace qgemm::detail::sm90 {

// The decode kernel for the call's input: int8, or precise fp8 (fast fp8
// runs it too: with one k-tile per promotion it loses nothing).
template <class Output>
bool run_decode(const ScaledMmArgs& args, int sm_count) {
  if (args.m > 16) return false;
  if (args.input_dtype == DType::kInt8) return run_swapped_stream_k_config<Decode, int8_t, Output>(args, sm_count);
  return run_swapped_stream_k_config<Decode, cutlass::float_e4m3_t, Output>(args, sm_count);
}

}  // namespace qgemm::detail::sm90
