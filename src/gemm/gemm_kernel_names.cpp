// The scaled-GEMM kernels' names (kernels.h), for benchmarks, tests and
// `qgemm dispatch`: compiled in every build, with or without CUDA.
#include "gemm/cuda/kernels.h"

namespace qgemm::detail {

const char* gemm_kernel_name(GemmKernel kernel) {
  switch (kernel) {
    case GemmKernel::kFallback: return "fallback";
    case GemmKernel::kSkinny: return "skinny";
    case GemmKernel::kSm90SkinnyStream: return "sm90-skinny-stream";
    case GemmKernel::kSm90Wide: return "sm90-128x256-coop";
    case GemmKernel::kSm90Square: return "sm90-128x128-pingpong";
    case GemmKernel::kSm90Narrow: return "sm90-64x128-pingpong";
    case GemmKernel::kSm90Small1x2: return "sm90-64x64-pingpong-1x2";
    case GemmKernel::kSm90Small2x1: return "sm90-64x64-pingpong-2x1";
    case GemmKernel::kSm90Narrow2x1: return "sm90-64x128-pingpong-2x1";
    case GemmKernel::kSm90Wide192: return "sm90-128x192-coop";
    case GemmKernel::kSm90Coop128: return "sm90-fp8-128x128-coop";
    case GemmKernel::kSm90Wide1x2: return "sm90-128x256-coop-1x2";
    case GemmKernel::kSm90StreamK: return "sm90-128x256-coop-1x2-streamk";
    case GemmKernel::kSm90Decode: return "sm90-decode-128x16-streamk";
    case GemmKernel::kSm90DecodeWgmma: return "sm90-fp8-decode-64x16-wgmma";
    case GemmKernel::kSm90Swapped: return "sm90-swapped-64xT-pingpong-2x1";  // T = 32, 160 or 192 tokens
    case GemmKernel::kSm90SwappedStreamK: return "sm90-swapped-128xT-coop-streamk";  // T = 160 or 192 tokens, 72–96 in 3 to 8 tiles
    case GemmKernel::kSm90SwappedHalves: return "sm90-swapped-halves-64xT-pingpong-1x2";  // T = 80 or 96 tokens (precise fp8: 72–96)
    case GemmKernel::kSm90SwappedHalvesStreamK: return "sm90-swapped-halves-128xT-coop-1x2-streamk";  // T = 80 or 96
    case GemmKernel::kSm90Wide80: return "sm90-128x80-coop-1x2";
    case GemmKernel::kSm90Wide96: return "sm90-128x96-coop-1x2";
    case GemmKernel::kSm90Wide96Pairs: return "sm90-128x96-coop-2x1";
    case GemmKernel::kSm90Wide80Pairs: return "sm90-128x80-coop-2x1";
    case GemmKernel::kSm90Thin48: return "sm90-64x48-pingpong-1x4";
    case GemmKernel::kSm90Wide80x4: return "sm90-128x80-coop-1x4";
    case GemmKernel::kSm90Wide96x4: return "sm90-128x96-coop-1x4";
    case GemmKernel::kSm80Large: return "sm80-128x128";  // fp8: the sm_89 build of the same tile
    case GemmKernel::kSm80Small: return "sm80-64x128";
    case GemmKernel::kSm90Direct: return "sm90-direct-store";  // int8 128×128, precise fp8 64×128
  }
  return "?";
}

}  // namespace qgemm::detail
