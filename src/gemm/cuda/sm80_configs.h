// sm80_configs.h — the Ampere (sm_80, CUTLASS 2.x, mma.sync + cp.async
// multistage) int8 kernel configurations, with the reason for each. These
// also serve Ada (sm_89) int8 and, through the embedded PTX, any later GPU.
// dispatch_table.h says which shapes get which; sm80_int8_*.cu instantiate
// both for one output dtype: 2 configs × 2 outputs = 4 kernels.
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

}  // namespace qgemm::detail::sm80
