// Larger-M weight-only kernel (M > 32; int4 on sm_90 runs wonly_wgmma.cu
// instead): a pipelined tensor-core GEMM (mma.sync m16n8k16, sm_80+) that
// dequantizes the weight straight from the shared-memory copy of its raw
// bytes into MMA A-fragment registers.
//
// Roles are swapped as in the decode kernel (wonly_gemv.cu): weight rows are
// the MMA's M side (A, dequantized in registers) and tokens its N side (B,
// read from shared memory), so no dequantized tile is ever stored.
//
// Block tile: kBN = 128 weight rows × kBM tokens × kBK = 64 k; 8 warps as
// (8 / kMT) along rows × kMT along tokens, a warp owning 16·kMT rows × kBM/kMT
// tokens (`launch` picks kMT per tile). A kStages-deep cp.async ring holds,
// per k tile (one commit group each; LoadPlan, wonly_tile.cuh, fixes each
// thread's copies):
//   act  [kBM][72] T          16 B copies; tokens past M, k past K zero-filled
//   raw  [128][32 | 64] B     the weight's 16-byte chunks (int4 | int8), as stored
// and after the ring, the scales and offsets per block of two groups
// (wonly_param_blocks.cuh: copied with the block's first k tile, 4 buffers).
// Loop: wait for tile kt, one __syncthreads, issue tile kt + kStages − 1 into
// the slot tile kt − 1 used, then multiply tile kt. The ring then holds the
// output tile for coalesced stores (store_tile). kStages − 1 tiles are in
// flight while a tile is multiplied (the former kernel had one, and stored a
// dequantized copy of every weight tile to shared memory before ldmatrix).
// Small grids split K across a cluster (grid z, wonly_split_k.cuh).
//
// k order inside a tile (the MMA's K is a sum, so A and B only have to
// agree): lane (g = lane/4, t = lane%4) owns the 16 consecutive elements
// 16t … 16t+15 of the 64; MMA step s (0…3) feeds its k slots
// {2t, 2t+1, 2t+8, 2t+9} with elements 16t+4s … 16t+4s+3. The lane's weight
// is then 8 (int4) / 16 (int8) contiguous bytes of rows g and g+8, and its
// activations 4 contiguous elements of token g per step: one 16-byte shared
// load serves two steps. Shared pitches make both conflict-free: act rows
// are 144 B (a quarter warp's 8 × 16 B hit distinct banks), raw rows 32 / 64 B.
//
// Dequantization: the decode kernel's HFMA2 code (wonly_device.cuh),
// ŵ = round_T(q·s_T + o_T); halves of a tile past K load zero weights and
// read zero scales and offsets (ParamBlocks::second_of_block), so their ŵ is
// exactly 0 (their activations are 0 too, but an offset alone could be ±inf
// in fp16).
// Blocks run token tiles fastest, in bands (TileCoord), so the blocks that
// share a weight tile are co-scheduled and the weight comes from DRAM about
// once per band, while the band's activations stay in L2.
#include <cstddef>
#include <cstdint>

#include "core/cuda_check.h"
#include "core/cuda_launch.cuh"
#include "wonly/cuda/wonly_cuda.h"
#include "wonly/cuda/wonly_device.cuh"
#include "wonly/cuda/wonly_param_blocks.cuh"
#include "wonly/cuda/wonly_tile.cuh"

namespace qgemm::detail {
namespace {

using namespace wonly;

constexpr int kThreads = kTileThreads;
constexpr int kBN = kTileRows, kBK = kTileK, kStages = 4;
constexpr int kActLd = kBK + 8;  // elements per shared activation row (144 B)

// One ring slot (wonly_tile.cuh). Member order keeps every array 16-byte
// aligned; rows are padded, never swizzled.
template <bool kInt4_, int kBM>
struct Stage {
  static constexpr bool kInt4 = kInt4_;
  static constexpr int kTokens = kBM;
  static constexpr int kRawBytes = kInt4 ? kBK / 2 : kBK;  // per row
  static constexpr int kActPitch = kActLd * 2;             // bytes per token
  __device__ static constexpr uint32_t act_offset(int token, int chunk) { return token * kActPitch + 16 * chunk; }
  __device__ static constexpr uint32_t raw_offset(int row, int chunk) { return row * kRawBytes + 16 * chunk; }

  uint16_t act[kBM][kActLd];
  uint8_t raw[kBN][kRawBytes];
};

template <bool kInt4, int kBM>
constexpr int kRingBytes = kStages * static_cast<int>(sizeof(Stage<kInt4, kBM>));

// The A fragments of one m16 tile for the four MMA steps of a k tile: rows
// `row` and `row` + 8 of the stage, this lane's 16 elements (0 past K: see
// LoadPlan::issue), with the param block's group `second` of those rows.
template <bool kBf16, bool kInt4, int kBM>
__device__ __forceinline__ void dequant_a(const Stage<kInt4, kBM>& stage, int row, int t, const ParamPairs& par,
                                          bool second, uint32_t a[4][4]) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {  // h = 0: row g (a[s][0], a[s][2]); h = 1: row g + 8 (a[s][1], a[s][3])
    const int r = row + 8 * h;
    const uint32_t s2 = second ? par.scale[h][1] : par.scale[h][0];
    const uint32_t o2 = second ? par.offset[h][1] : par.offset[h][0];
    if constexpr (kInt4) {
      const uint2 words = *reinterpret_cast<const uint2*>(&stage.raw[r][8 * t]);
      uint32_t pairs[8];  // element pairs (0,1) (2,3) … (14,15) of the lane's 16
      dequant_int4_word<kBf16>(words.x, s2, o2, pairs);
      dequant_int4_word<kBf16>(words.y, s2, o2, pairs + 4);
#pragma unroll
      for (int s = 0; s < 4; ++s) {
        a[s][h] = pairs[2 * s];
        a[s][2 + h] = pairs[2 * s + 1];
      }
    } else {
      const uint4 words = *reinterpret_cast<const uint4*>(&stage.raw[r][16 * t]);
      const uint32_t w[4] = {words.x, words.y, words.z, words.w};
#pragma unroll
      for (int s = 0; s < 4; ++s) {
        uint32_t pairs[2];
        dequant_int8_word<kBf16>(w[s], s2, o2, pairs);
        a[s][h] = pairs[0];
        a[s][2 + h] = pairs[1];
      }
    }
  }
}

// kMT m16 tiles per warp: warps are (8 / kMT) along rows × kMT along tokens,
// each 16·kMT rows × kBM/kMT tokens.
template <bool kBf16, bool kParams16, bool kInt4, int kBM, int kMT>
__global__ void __launch_bounds__(kThreads, 2) wonly_mma_kernel(const WeightOnlyArgs args, int band) {
  wait_for_preceding_grids();
  allow_dependent_launch();
  constexpr int kWarpsRows = 8 / kMT;
  constexpr int kWarpTokens = kBM / kMT;
  constexpr int kNB = kWarpTokens / 8;  // n8 token blocks per warp
  extern __shared__ __align__(16) unsigned char smem[];
  auto* stages = reinterpret_cast<Stage<kInt4, kBM>*>(smem);

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int warp_rows = (warp % kWarpsRows) * 16 * kMT, warp_tokens = (warp / kWarpsRows) * kWarpTokens;
  const TileCoord tile(band);
  const int64_t token_base = tile.token_tile * kBM, row_base = tile.row_tile * kBN;
  // Split K: CTA z of a gridDim.z-CTA cluster takes k tiles [kt_begin, kt_end).
  const SplitRange split(args.k);
  const int kt_begin = split.begin, kt_end = split.end;

  const LoadPlan<Stage<kInt4, kBM>> plan(args, token_base, row_base, smem_address(smem));
  constexpr int kRing = kRingBytes<kInt4, kBM>;
  static_assert(kStages - 1 <= kParamMaxLookahead, "the param buffers outlast the copies' lookahead");
  const ParamBlocks<kParams16> params(args, row_base, smem_address(smem) + kRing, kt_begin);
  // Everything k tile `kt` needs into ring slot `into` (the caller commits).
  auto issue = [&](int kt, int into) {
    if (params.starts_block(kt, kt_begin)) params.issue(kt);
    plan.issue(args, kt, into);
  };
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (kt_begin + s < kt_end) issue(kt_begin + s, s);
    cp_async_commit();  // empty groups keep the count uniform
  }
  // Elements 16t… of a k tile lie in the first half (k0…k0+31, t < 2) or the second.
  const int lane_half = t >> 1;
  int slot = 0, load_slot = kStages - 1;  // ring slots of tile kt and of tile kt + kStages − 1

  float acc[kMT][kNB][4] = {};
  for (int kt = kt_begin; kt < kt_end; ++kt) {
    cp_async_wait<kStages - 2>();  // this thread's copies of tile kt have landed
    __syncthreads();               // everyone's have, and tile kt − 1's slot is free
    if (kt + kStages - 1 < kt_end) issue(kt + kStages - 1, load_slot);
    cp_async_commit();
    load_slot = load_slot + 1 == kStages ? 0 : load_slot + 1;

    const Stage<kInt4, kBM>& stage = stages[slot];
    slot = slot + 1 == kStages ? 0 : slot + 1;
    const auto& param_block = *reinterpret_cast<const ParamBuffer*>(smem + kRing + params.buffer_offset(kt));
    const bool second = params.second_of_block(kt, lane_half, args.k);
    uint32_t a[kMT][4][4];  // [m16 tile][step][fragment register]
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) {
      ParamPairs par;
      load_params<kBf16, kParams16>(param_block, warp_rows + 16 * mt + g, par, params.words);
      dequant_a<kBf16, kInt4, kBM>(stage, warp_rows + 16 * mt + g, t, par, second, a[mt]);
    }
    // Token by token block. Ordering the MMAs so that consecutive ones update
    // different accumulators (all n8 blocks' B fragments loaded first) was
    // 10–20 % slower on the H100: more live registers, and the MMA latency
    // is hidden by the other warps anyway.
#pragma unroll
    for (int nb = 0; nb < kNB; ++nb) {
      const uint16_t* act_row = stage.act[warp_tokens + 8 * nb + g];
#pragma unroll
      for (int h = 0; h < 2; ++h) {  // elements 16t + 8h … + 7: steps 2h and 2h + 1
        const uint4 b = *reinterpret_cast<const uint4*>(act_row + 16 * t + 8 * h);
        const uint32_t b0[2] = {b.x, b.y}, b1[2] = {b.z, b.w};
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          mma_m16n8k16<kBf16>(acc[mt][nb], a[mt][2 * h], b0);
          mma_m16n8k16<kBf16>(acc[mt][nb], a[mt][2 * h + 1], b1);
        }
      }
    }
  }
  cp_async_wait<0>();
  __syncthreads();  // the ring is free: it becomes the output tile
  if (gridDim.z > 1) {
    reduce_and_store_split_k<kBf16, kBM, kMT, kNB>(args, acc, smem, token_base, row_base, warp_rows, warp_tokens, g, t);
    return;
  }
  store_tile<kBf16, kBM, kMT, kNB>(args, acc, smem, token_base, row_base, warp_rows, warp_tokens, g, t);
}

template <bool kBf16, bool kParams16, bool kInt4, int kBM, int kMT>
void launch_tile(const WeightOnlyArgs& args, cudaStream_t stream) {
  constexpr int ring = kRingBytes<kInt4, kBM>;
  constexpr int bytes = ring + kParamBuffers * static_cast<int>(sizeof(ParamBuffer));
  static_assert(epilogue_smem_bytes<kBM, kBM / 8 * 4>() <= ring, "the ring holds the output tile");
  constexpr auto kernel = wonly_mma_kernel<kBf16, kParams16, kInt4, kBM, kMT>;
  const KernelInfo info = kernel_info<kernel>(args.device.index, kThreads, bytes);  // also opts in > 48 KB
  const dim3 tiles(static_cast<unsigned>((args.m + kBM - 1) / kBM), static_cast<unsigned>((args.n + kBN - 1) / kBN));
  // Split K while the tiles fill at most half of the resident CTAs (2 per
  // SM), keeping ≥ 8 k tiles per split. E.g. H100, (N, K) = (4096, 4096),
  // M = 64: 32 tiles → 8 splits of 8 k tiles; (28672, 8192): 224 tiles → 1.
  const int splits = split_k_factor(info, static_cast<int64_t>(tiles.x) * tiles.y, (args.k + kBK - 1) / kBK, 8);
  launch_split_k(kernel, tiles, kThreads, bytes, stream, args.device.index, splits, args, band_for(kBM, args.k));
}

template <bool kBf16, bool kParams16, bool kInt4>
void launch(const WeightOnlyArgs& args, int block_m) {
  cudaStream_t stream = as_cuda_stream(args.stream);
  // 64 tokens: warps 8 × 1 (16 rows × 64 tokens each; the 4 × 2 layout
  // dequantizes every weight twice and was 15–20 % slower); 128 tokens:
  // warps 4 × 2 (32 rows × 64 tokens: half the shared activation reads of
  // 8 × 1, 5–10 % faster). H100, (28672, 8192) and (4096, 4096).
  if (block_m == 64) launch_tile<kBf16, kParams16, kInt4, 64, 1>(args, stream);
  else launch_tile<kBf16, kParams16, kInt4, 128, 2>(args, stream);
  QGEMM_CUDA_CHECK(cudaGetLastError());
}

// fp32 or 16-bit parameters: separate builds (wonly_param_blocks.cuh).
template <bool kBf16, bool kInt4>
void launch_params(const WeightOnlyArgs& args, int block_m) {
  if (args.params16) launch<kBf16, true, kInt4>(args, block_m);
  else launch<kBf16, false, kInt4>(args, block_m);
}

}  // namespace

void launch_wonly_mma(const WeightOnlyArgs& args, int block_m) {
  // The caller (wonly_dispatch.cu) has checked K ≤ 2^30 and N ≤ 65535·128.
  const bool bf16 = args.dtype == DType::kBFloat16;
  if (bf16 && args.int4) launch_params<true, true>(args, block_m);
  else if (bf16) launch_params<true, false>(args, block_m);
  else if (args.int4) launch_params<false, true>(args, block_m);
  else launch_params<false, false>(args, block_m);
}

}  // namespace qgemm::detail
