// sm80_configs.h — the Ampere (sm_80, CUTLASS 2.x, mma.sync + cp.async
// multistage) int8 kernel configurations, with the reason for each. These
// also serve Ada (sm_89) int8 and, through the embedded PTX, any later GPU;
// built for fp8 e4m3 they are the Ada fp8 kernels (sm89_fp8_*.cu).
// dispatch_table.h says which shapes get which; sm80_int8_*.cu and
// sm89_fp8_*.cu instantiate both for one output dtype: 2 configs × 2 outputs
// × 2 inputs = 8 kernels.
#pragma once

#include "cutlass/gemm/gemm.h"

namespace qgemm::detail::sm80 {

template <class Tile, class Warp, int kStages>
struct Config {
  using TileShape = Tile;
  using WarpShape = Warp;
  static constexpr int Stages = kStages;
};

// kSm80Large — 128×128×64 CTA tile of four 64×64 warp tiles, 3 stages of
// 16 KiB: the classic A100 int8 shape (each warp holds 4×8 m16n8k32
// accumulators; enough reuse per smem byte to keep mma.sync busy).
using Large = Config<cutlass::gemm::GemmShape<128, 128, 64>, cutlass::gemm::GemmShape<64, 64, 64>, 3>;

// kSm80Small — 64×128×64 with 32×64 warp tiles, 4 stages: at M ≤ 128 twice
// as many CTAs along M·N as Large, and a deeper pipeline for the
// bandwidth-bound regime.
using Small = Config<cutlass::gemm::GemmShape<64, 128, 64>, cutlass::gemm::GemmShape<32, 64, 64>, 4>;

// fp8 e4m3 (Ada): CUTLASS accumulates each k tile's products in a second,
// freshly cleared accumulator set and adds it to the first (its sm_89
// "staged accumulation" for OpMultiplyAdd: the fp8 tensor cores do not keep
// a full fp32 sum over long K). Two sets of Large's 64×64 warp tile need
// 256 accumulator registers (ptxas: 255 and 640 bytes of spills), so the
// large fp8 tile has eight 64×32 warp tiles instead; Small's 32×64 warp
// tiles fit twice (206 registers).
using Fp8Large = Config<cutlass::gemm::GemmShape<128, 128, 64>, cutlass::gemm::GemmShape<64, 32, 64>, 3>;
using Fp8Small = Small;

}  // namespace qgemm::detail::sm80
