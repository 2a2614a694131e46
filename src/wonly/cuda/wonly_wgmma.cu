// Hopper weight-only kernel for int4 and int8 weights, M > 16 (sm_90a only;
// the table in wonly_dispatch.cu says where): the
// tensor-core kernel of wonly_mma.cu with the warpgroup MMA (wgmma) in place
// of mma.sync. Each of the two warpgroups owns 64 weight rows and issues
// m64 × kBM × k16 wgmmas whose A operand (the weight, dequantized) comes from
// registers and whose B operand (the activations) comes straight from shared
// memory through a matrix descriptor: one instruction per warpgroup does the
// work of kBM/8 mma.sync per warp, and reads no activation into registers.
// Roles are swapped as in the other kernels (weight rows = the MMA's M side),
// so no dequantized tile is ever stored.
//
// Ring slot (4 or 5 of them: Ring below; one mbarrier per slot, on which
// thread 0 issues the slot's two TMA copies):
//   act [kBM][64] T    activation_map, in
//                      the layout wgmma's descriptor reads for a K-major B with
//                      128-byte swizzle: token r's 128 bytes are one row, its
//                      16-byte chunk c at chunk position c ^ (r % 8); rows of 8
//                      tokens form 1024-byte atoms (the slot is 1024-aligned)
//   raw [128][32] B    int4, weight_map (32-byte swizzle): row r's two chunks
//                      swapped when (r / 4) is odd, so that the 8 rows a warp
//                      reads at once hit distinct banks
//   raw [128][64] B    int8 (64-byte swizzle): row r's chunk c at position
//                      c ^ (r / 2 % 4), likewise
// and, after the ring, the params' four buffers (wonly_param_blocks.cuh: a
// block of two groups per row, copied with the block's first k tile, read
// into registers when the block changes) and the ring's mbarriers.
//
// k order. wgmma reads B in its natural k order, so the A fragment must
// follow it: lane (g = lane/4, t = lane%4) holds, for k16 step s, the
// elements 16s + 2t + {0, 1} (register a0 / a1: rows g / g+8) and
// 16s + 8 + 2t + {0, 1} (a2 / a3) — over the 64-k tile, byte 4c + t of the
// row's 32 int4 bytes for c = 0…7. A lane loads the row's 32 bytes (two
// 16-byte loads, shared with the 3 other lanes of its quad by broadcast) and
// gathers its 8 bytes with 6 PRMT (`gather_bytes`); each gathered word is 8
// nibbles = 4 register pairs of the decode kernel's HFMA2 dequantization
// (wonly_device.cuh, ŵ = round_T(q·s_T + o_T), bit-identical to the CPU twin).
// The first word holds k 0…31 (group of k0), the second k 32…63 (k0 + 32).
// int8: the same elements are halfwords t and t + 4 of the row's 16-byte
// chunk s; a lane loads the two words that hold them (two 4-byte loads per
// chunk) and joins them with one PRMT into the 4 bytes of the decode
// kernel's int8 dequantization (`dequant_int8_word`: 2 register pairs).
//
// Pipeline per k tile kt: wait for its param copies, one __syncthreads, wait
// for its slot's mbarrier, load the tile's weight chunks (and params when
// their block changes) from shared memory, then in two halves of two k16
// steps: dequantize the half into its own 8 registers, fence, two wgmmas,
// commit. Before a half's registers are rewritten, a wait lets the group
// that read them (the previous tile's same half) retire: the second half
// waits after the first half's wgmmas; the first half waits at the end of
// the previous tile (128- and 256-token tiles) or only after this tile's
// barrier, mbarrier and shared loads (32- and 64-token tiles, kRetireLate: the
// group's latency hides behind them). After the first half's wgmmas, issue
// the copies of tile kt + kStages − 2 into the slot of tile kt − 2, whose
// wgmmas completed before the barrier. With kRetireLate the loop is rotated
// (first half of tile kt + 1 after the second half of tile kt) so that one
// group is pending at its back edge, which ptxas needs to keep the wgmmas
// asynchronous (with two it serializes them, C7513). So the dequantization
// of a half overlaps the wgmmas of the previous one, and at tile kt's
// barrier every wgmma of tile kt − 2 is done (each warp waited for them
// during tile kt − 1). Small grids split K across a cluster
// (wonly_split_k.cuh).
#include <cute/arch/mma_sm90_gmma.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "core/cuda_check.h"
#include "core/cuda_launch.cuh"
#include "core/cuda_mbarrier.cuh"
#include "core/cuda_tma.cuh"
#include "core/cuda_device_info.h"
#include "qgemm/weight_only.h"
#include "wonly/cuda/wonly_cuda.h"
#include "wonly/cuda/wonly_device.cuh"
#include "wonly/cuda/wonly_param_blocks.cuh"
#include "wonly/cuda/wonly_stream_k.h"
#include "wonly/cuda/wonly_tile.cuh"

namespace qgemm::detail {
namespace {

using namespace wonly;

constexpr int kThreads = kTileThreads;
constexpr int kBN = kTileRows, kBK = kTileK;

template <bool kInt4, int kBM>
struct alignas(1024) Stage {
  static constexpr int kRawBytes = kInt4 ? kBK / 2 : kBK;  // per row
  uint16_t act[kBM][kBK];
  uint8_t raw[kBN][kRawBytes];
};
using Int4Stage64 = Stage<true, 64>;
using Int8Stage64 = Stage<false, 64>;
static_assert(sizeof(Int4Stage64) == 64 * kBK * 2 + kBN * kBK / 2, "a slot is exactly its two TMA copies");
static_assert(sizeof(Int8Stage64) == 64 * kBK * 2 + kBN * kBK, "a slot is exactly its two TMA copies");
static_assert(sizeof(Int4Stage64) % 1024 == 0 && offsetof(Int4Stage64, act) == 0, "act atoms stay 1024-aligned");
static_assert(offsetof(Int8Stage64, raw) % 512 == 0, "the int8 weight's 64-byte swizzle atoms are 512-aligned");
using Int4Stage32 = Stage<true, 32>;
using Int8Stage32 = Stage<false, 32>;
static_assert(sizeof(Int4Stage32) == 32 * kBK * 2 + kBN * kBK / 2 && sizeof(Int8Stage32) % 1024 == 0 &&
                  offsetof(Int8Stage32, raw) % 512 == 0,
              "the 32-token slots too");

// Ring slots: 5 (three tiles in flight), except int8 at 128 tokens: 4, so
// that two CTAs fit in an SM's shared memory (5 slots of 24 KB took 128 KB:
// one CTA per SM). H100, µs, W8A16, the 128-token tile at 5 → 4 slots (two
// calls): (28672, 8192) M = 128 166 → 148, M = 1024 1292 → 1096; (4096,
// 4096) M = 64 38.4 → 29.8. Deeper rings where shared memory allows did not
// pay: at 64 tokens, 8 slots (int4) were 3–10 % slower than 5 and 6 (int8)
// the same, timed interleaved in one call
// (bench/results/wonly-h100-wgmma-ring-depth-ab.json). The copies run
// kStages − 2 tiles ahead (a slot is refilled two tiles after its wgmmas were
// issued, when they have completed).
template <bool kInt4, int kBM>
struct Ring {
  static constexpr int kStages = kBM == 128 && !kInt4 ? 4 : 5;
  static_assert(kStages - 2 <= kParamMaxLookahead, "the param buffers outlast the copies' lookahead");
  static constexpr int kRingBytes = kStages * static_cast<int>(sizeof(Stage<kInt4, kBM>));
  static constexpr int kBytes = kRingBytes + kParamBuffers * static_cast<int>(sizeof(ParamBuffer)) + 8 * kStages;
};

// Loads: the activation tile's TMA copy and its mbarrier (one per ring slot; the
// barriers: core/cuda_mbarrier.cuh): thread 0 announces the tile's bytes and
// starts the copy; every thread waits for the barrier's phase before the
// tile's wgmmas read it. The tensor map
// (host: activation_map) has the 128-byte swizzle the descriptor reads, and
// fills tokens past M and k past K with zeros (tma_load_2d, core/cuda_tma.cuh).

// The byte t of each of four words, as one word (byte c = byte t of word c).
// `sel` = t | (t + 4) << 4 picks byte t of both operands of a PRMT.
__device__ __forceinline__ uint32_t gather_bytes(uint4 words, uint32_t sel) {
  return __byte_perm(__byte_perm(words.x, words.y, sel), __byte_perm(words.z, words.w, sel), 0x5410);
}

// What a lane reads from shared memory to dequantize one half tile (k16
// steps 2·half, 2·half + 1) of rows `row` and `row` + 8, as 8 words:
//   int4: each row's 16-byte chunk of the half (words 0–3 row g, 4–7 row
//         g+8), at its 32-byte-swizzle position;
//   int8: of each row's chunks 2·half + j (k16 step s = 2·half + j; 64-byte
//         swizzle: chunk c at position c ^ (r/2 % 4)), the two words holding
//         the lane's halfwords t and t + 4 — bytes 16s + 2t, +1 and
//         16s + 8 + 2t, +1 — i.e. words t/2 and 2 + t/2 (word 4h + 2j + i:
//         row g + 8h, step j, i = 0 | 1).
// (The params come from load_params, per param block.)
struct HalfWords {
  uint32_t w[8];
};

template <bool kInt4, int kBM, int kHalf>
__device__ __forceinline__ void load_half(const Stage<kInt4, kBM>& stage, int row, int t, HalfWords& half) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = row + 8 * h;
    if constexpr (kInt4) {
      const uint4 chunk = *reinterpret_cast<const uint4*>(&stage.raw[r][16 * (kHalf ^ ((r >> 2) & 1))]);
      half.w[4 * h] = chunk.x, half.w[4 * h + 1] = chunk.y, half.w[4 * h + 2] = chunk.z, half.w[4 * h + 3] = chunk.w;
    } else {
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const int position = (2 * kHalf + j) ^ ((r >> 1) & 3);
        const auto* words = reinterpret_cast<const uint32_t*>(&stage.raw[r][16 * position]) + (t >> 1);
        half.w[4 * h + 2 * j] = words[0];
        half.w[4 * h + 2 * j + 1] = words[2];
      }
    }
  }
}

// The lane's PRMT selector: int4, byte t of both operands (gather_bytes);
// int8, halfword t % 2 of both (its halfwords t and t + 4, load_half).
template <bool kInt4>
__device__ __forceinline__ uint32_t gather_selector(int t) {
  if constexpr (kInt4) return static_cast<uint32_t>(t | (t + 4) << 4);
  return (t & 1) != 0 ? 0x7632u : 0x5410u;
}

// The A registers of one half tile: a[j][0 | 1] rows g | g+8 at k 16s + 2t,
// a[j][2 | 3] at 16s + 8 + 2t, s = 2·half + j.
// `second`: the half's group is the block's second (ParamBlocks::second_of_block).
template <bool kBf16, bool kInt4>
__device__ __forceinline__ void dequant_half(const HalfWords& half, const ParamPairs& par, bool second,
                                             uint32_t sel, uint32_t a[2][4]) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const uint32_t s2 = second ? par.scale[h][1] : par.scale[h][0];
    const uint32_t o2 = second ? par.offset[h][1] : par.offset[h][0];
    if constexpr (kInt4) {
      const uint4 chunk = make_uint4(half.w[4 * h], half.w[4 * h + 1], half.w[4 * h + 2], half.w[4 * h + 3]);
      uint32_t pairs[4];  // byte c of the gathered word: k 32·half + 8c + 2t + {0, 1}
      dequant_int4_word<kBf16>(gather_bytes(chunk, sel), s2, o2, pairs);
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        a[j][h] = pairs[2 * j];
        a[j][2 + h] = pairs[2 * j + 1];
      }
    } else {
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        uint32_t pairs[2];  // (k 16s + 2t, +1), (16s + 8 + 2t, +1)
        dequant_int8_word<kBf16>(__byte_perm(half.w[4 * h + 2 * j], half.w[4 * h + 2 * j + 1], sel), s2, o2, pairs);
        a[j][h] = pairs[0];
        a[j][2 + h] = pairs[1];
      }
    }
  }
}

// One m64 × kBM × k16 wgmma, A from registers, B from shared memory.
template <bool kBf16, int kBM>
struct Wgmma {
  using K = cute::SM90::GMMA::Major;
  template <template <K, K, cute::SM90::GMMA::ScaleIn, cute::SM90::GMMA::ScaleIn> class Op>
  using Kmajor = Op<K::K, K::K, cute::SM90::GMMA::ScaleIn::One, cute::SM90::GMMA::ScaleIn::One>;
  static_assert(kBM == 32 || kBM == 64 || kBM == 128 || kBM == 256, "a token tile with a wgmma shape below");
  // The op of this tile's N (= kBM) among the four.
  template <class N32, class N64, class N128, class N256>
  using ByTokens = std::conditional_t<
      kBM == 32, N32, std::conditional_t<kBM == 64, N64, std::conditional_t<kBM == 128, N128, N256>>>;
  using Bf16 = ByTokens<Kmajor<cute::SM90::GMMA::MMA_64x32x16_F32BF16BF16_RS>,
                        Kmajor<cute::SM90::GMMA::MMA_64x64x16_F32BF16BF16_RS>,
                        Kmajor<cute::SM90::GMMA::MMA_64x128x16_F32BF16BF16_RS>,
                        Kmajor<cute::SM90::GMMA::MMA_64x256x16_F32BF16BF16_RS>>;
  using Fp16 = ByTokens<Kmajor<cute::SM90::GMMA::MMA_64x32x16_F32F16F16_RS>,
                        Kmajor<cute::SM90::GMMA::MMA_64x64x16_F32F16F16_RS>,
                        Kmajor<cute::SM90::GMMA::MMA_64x128x16_F32F16F16_RS>,
                        Kmajor<cute::SM90::GMMA::MMA_64x256x16_F32F16F16_RS>>;
  using Op = std::conditional_t<kBf16, Bf16, Fp16>;

  template <size_t... I>
  __device__ __forceinline__ static void run(const uint32_t (&a)[4], uint64_t desc, float* acc,
                                             std::index_sequence<I...>) {
    Op::fma(a[0], a[1], a[2], a[3], desc, acc[I]...);
  }
  __device__ __forceinline__ static void run(const uint32_t (&a)[4], uint64_t desc, float* acc) {
    run(a, desc, acc, std::make_index_sequence<kBM / 2>{});
  }
};

template <int kNB>
__device__ __forceinline__ void fence_accumulators(float (&acc)[1][kNB][4]) {
#pragma unroll
  for (int i = 0; i < kNB; ++i) {
#pragma unroll
    for (int e = 0; e < 4; ++e) cute::warpgroup_fence_operand(acc[0][i][e]);
  }
}

// Stream-K (wonly_stream_k.h) for the 32-, 64- and 256-token tiles, as
// kernels of their own (kStreamK) so that the data-parallel ones keep their
// code; the 128-token tile has no registers to spare (127 of 128 at two CTAs
// per SM).
template <int kBM>
constexpr bool kHasStreamK = kBM != 128;

// Stream-K's hand-over of a cut tile. A non-owner part ends by storing its
// partial sums into its CTA's slot, [register][thread] (consecutive threads,
// consecutive words), then raising its flag (release: the slot's stores
// happen before it). The owner's part ends, for each earlier part in CTA
// order, by waiting for its flag (acquire) and adding its slot.
__device__ __forceinline__ void flag_release(int* flag) {
  asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(flag), "r"(1) : "memory");
}
__device__ __forceinline__ int flag_acquire(const int* flag) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(flag) : "memory");
  return v;
}

template <int kRegs>
__device__ __forceinline__ void store_partial(const StreamKPlan& sk, int64_t cta, const float* flat) {
  float* slot = sk.partials + cta * kRegs * kThreads + threadIdx.x;
#pragma unroll
  for (int i = 0; i < kRegs; ++i) __stcg(slot + i * kThreads, flat[i]);
  __syncthreads();  // every thread's stores, then the flag
  if (threadIdx.x == 0) {
    __threadfence();
    flag_release(sk.flags + cta);
  }
}

template <int kRegs>
__device__ __forceinline__ void add_partials(const StreamKPlan& sk, int64_t first_cta, int64_t cta, float* flat) {
  for (int64_t c = first_cta; c < cta; ++c) {
    if (threadIdx.x == 0) {
      while (flag_acquire(sk.flags + c) == 0) {
      }
    }
    __syncthreads();  // thread 0's acquire orders everyone's loads after the slot's stores
    const float* slot = sk.partials + c * kRegs * kThreads + threadIdx.x;
#pragma unroll
    for (int i = 0; i < kRegs; ++i) flat[i] += __ldcg(slot + i * kThreads);
  }
}

template <bool kBf16, bool kParams16, bool kInt4, int kBM, bool kStreamK>
__global__ void __launch_bounds__(kThreads, kBM == 256 ? 1 : 2) wonly_wgmma_kernel(const WeightOnlyArgs args, int band,
                                                                        const __grid_constant__ CUtensorMap act_map,
                                                                        const __grid_constant__ CUtensorMap weight_map,
                                                                        const StreamKPlan sk) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  wait_for_preceding_grids();
  constexpr int kNB = kBM / 8;  // n8 token blocks: the D fragment of one warp
  // The 32- and 64-token tiles let a tile's first-half wgmmas retire behind
  // the next tile's barrier and shared loads (first_half); the larger tiles
  // retire them at the end of the tile. H100, same call, int4 g128, the
  // 64-token tile: M = 32–64 3–9 % faster with it; M = 128 (128-token tile)
  // 7–10 % and M = 1024 on (4096, 11008) (256-token tile) 6 % slower
  // (bench/results/wonly-h100-wgmma-late-retire-ab.json).
  constexpr bool kRetireLate = kBM <= 64;
  extern __shared__ __align__(1024) unsigned char smem[];
  using StageT = Stage<kInt4, kBM>;
  using RingT = Ring<kInt4, kBM>;
  constexpr int kStages = RingT::kStages;
  auto* stages = reinterpret_cast<StageT*>(smem);
  // The descriptor's swizzle atoms need 1024-byte alignment, which dynamic
  // shared memory has while the kernel declares no static __shared__ (keep
  // it so); checked, not assumed.
  if ((smem_address(smem) & 1023) != 0) __trap();

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int warp_rows = 16 * warp;  // warpgroup warp / 4 owns rows 64·(warp / 4) + 0…63
  const uint32_t sel = gather_selector<kInt4>(t);
  constexpr uint32_t kRingBytes = RingT::kRingBytes;
  const uint32_t bars = smem_address(smem) + kRingBytes + kParamBuffers * sizeof(ParamBuffer);  // 8 B each
  const bool producer = threadIdx.x == 0;
  uint32_t phases = 0;  // bit s: the parity slot s's barrier completes next (kept across parts)
  bool first_part = true;

  // The parts this CTA computes: one tile (data-parallel; with a cluster
  // split, its k range), or with stream-K its run of iterations [run_lo,
  // run_end), walked from the end one tile at a time.
  static_assert(!kStreamK || kHasStreamK<kBM>, "no stream-K build of this tile");
  const int64_t run_lo = kStreamK ? sk.begin(blockIdx.x) : 0;
  int64_t run_end = kStreamK ? sk.begin(blockIdx.x + 1) : 1;  // data-parallel: 1, then 0 after its one part
  for (;;) {
    int64_t token_base, row_base, tile_start = 0;
    int k_begin, k_end;
    if constexpr (!kStreamK) {
      if (run_end == 0) break;
      run_end = 0;
      const TileCoord tile(band);
      const SplitRange split(args.k);
      token_base = tile.token_tile * kBM, row_base = tile.row_tile * kBN;
      k_begin = split.begin, k_end = split.end;
    } else {
      if (run_end <= run_lo) break;
      const int64_t tile_index = (run_end - 1) / sk.k_tiles;
      tile_start = tile_index * sk.k_tiles;
      const TileCoord tile(tile_index, sk.tiles_x, sk.tiles_y, band);
      token_base = tile.token_tile * kBM, row_base = tile.row_tile * kBN;
      k_begin = static_cast<int>(max(run_lo, tile_start) - tile_start);
      k_end = static_cast<int>(run_end - tile_start);
      run_end = tile_start + k_begin;
    }
    const struct {
      int begin, end;
    } split{k_begin, k_end};

    const ParamBlocks<kParams16> params(args, row_base, smem_address(smem) + kRingBytes, split.begin);
    // The activations and weight bytes of k tile `k_tile` into ring slot
    // `into`, two TMA copies on the slot's mbarrier (thread 0 only). The
    // prepacked weight is 4-D (weight_map): of each row's 64 bytes per
    // prepacked k block (128 int4 | 64 int8 k), the tile's 32 | 64 × 16 rows ×
    // 1 k block × 8 row blocks.
    auto load_tile = [&](int k_tile, int into) {
      const uint32_t bar = bars + 8 * into;
      mbarrier_expect_bytes(bar, static_cast<uint32_t>(sizeof(StageT)));
      tma_load_2d(smem_address(stages[into].act), act_map, k_tile * kBK, static_cast<int>(token_base), bar);
      constexpr int kRowBytes = StageT::kRawBytes;
      if (args.prepacked) {
        const int x = kInt4 ? (k_tile & 1) * 32 : 0, block = kInt4 ? k_tile >> 1 : k_tile;
        tma_load_4d(smem_address(stages[into].raw), weight_map, x, 0, block, static_cast<int>(row_base / 16), bar);
      } else {
        tma_load_2d(smem_address(stages[into].raw), weight_map, k_tile * kRowBytes, static_cast<int>(row_base), bar);
      }
    };
    if (producer && first_part) {
#pragma unroll
      for (int s = 0; s < kStages; ++s) mbarrier_init(bars + 8 * s, 1);
      mbarrier_init_fence();  // visible to the TMA unit
    }
    first_part = false;
    // Everything k tile `k_tile` needs into ring slot `into` (the caller commits).
    auto issue = [&](int k_tile, int into) {
      if (params.starts_block(k_tile, split.begin)) params.issue(k_tile);
      if (producer) load_tile(k_tile, into);
    };
    __syncthreads();
#pragma unroll
    for (int s = 0; s < kStages - 2; ++s) {
      if (split.begin + s < split.end) issue(split.begin + s, s);
      cp_async_commit();  // empty groups keep the count uniform
    }
    int slot = 0, load_slot = kStages - 2;  // ring slots of tile kt and of tile kt + kStages − 2
    const uint64_t desc0 = wgmma_sw128_descriptor(smem_address(stages[0].act));  // both warpgroups read all tokens

    float acc[1][kNB][4];
#pragma unroll
    for (int i = 0; i < kNB; ++i) acc[0][i][0] = acc[0][i][1] = acc[0][i][2] = acc[0][i][3] = 0.0f;
    uint32_t a0[2][4], a1[2][4];  // the two halves' A registers
    ParamPairs par;               // rows g, g+8 of the current param block
    HalfWords half1;              // the second half's weight words, loaded with the first's
    uint64_t desc = desc0;        // the current tile's activations
    // Tile kt up to its first half's wgmmas. On entry the previous tile's two
    // groups may be pending (kRetireLate): the first wait lets its first half
    // (a0) retire only now, after the barrier, the mbarrier and the shared
    // loads, so that its latency hides behind them. On exit one group, this
    // tile's first half, is pending.
    auto first_half = [&](int kt) {
      cp_async_wait<kStages - 3>();  // this thread's param copies up to tile kt have landed
      __syncthreads();               // everyone's have, and tile kt − 2's wgmmas are done
      const StageT& stage = stages[slot];
      desc = desc0 + static_cast<uint64_t>(slot) * (sizeof(StageT) >> 4);
      mbarrier_wait(bars + 8 * slot, (phases >> slot) & 1u);  // the activations and weight bytes have landed
      phases ^= 1u << slot;
      slot = slot + 1 == kStages ? 0 : slot + 1;
      // All of the tile's shared loads go first and the next tile's copies
      // only after the first wgmmas: queued behind the copies, the loads
      // stalled the warps (ncu: 18 % of the stall samples on the first use of
      // a weight chunk).
      HalfWords half0;
      load_half<kInt4, kBM, 0>(stage, warp_rows + g, t, half0);
      if (params.starts_block(kt, split.begin)) {
        load_params<kBf16, kParams16>(
            *reinterpret_cast<const ParamBuffer*>(smem + kRingBytes + params.buffer_offset(kt)), warp_rows + g, par,
            params.words);
      }
      load_half<kInt4, kBM, 1>(stage, warp_rows + g, t, half1);

      if constexpr (kRetireLate) {
        cute::warpgroup_wait<1>();  // the previous tile's first half is done: a0 is free
        fence_accumulators(acc);
      }
      dequant_half<kBf16, kInt4>(half0, par, params.second_of_block(kt, 0, args.k), sel, a0);
      fence_accumulators(acc);
      cute::warpgroup_arrive();
      Wgmma<kBf16, kBM>::run(a0[0], desc + 0, &acc[0][0][0]);
      Wgmma<kBf16, kBM>::run(a0[1], desc + 2, &acc[0][0][0]);
      cute::warpgroup_commit_batch();
      if (kt + kStages - 2 < split.end) issue(kt + kStages - 2, load_slot);
      cp_async_commit();
      load_slot = load_slot + 1 == kStages ? 0 : load_slot + 1;
      cute::warpgroup_wait<1>();  // the previous tile's second half is done: a1 is free
      fence_accumulators(acc);
    };
    // Tile kt's second half. With kRetireLate its wgmmas and the first half's
    // are left pending (two groups on exit), otherwise the first half's
    // retire here (one group).
    auto second_half = [&](int kt) {
      dequant_half<kBf16, kInt4>(half1, par, params.second_of_block(kt, 1, args.k), sel, a1);
      cute::warpgroup_arrive();
      Wgmma<kBf16, kBM>::run(a1[0], desc + 4, &acc[0][0][0]);
      Wgmma<kBf16, kBM>::run(a1[1], desc + 6, &acc[0][0][0]);
      cute::warpgroup_commit_batch();
      if constexpr (!kRetireLate) {
        cute::warpgroup_wait<1>();  // the first half is done: a0 is free
        fence_accumulators(acc);
      }
    };
    if constexpr (kRetireLate) {
      // Rotated so that one group is pending at the loop's back edge (with
      // two, ptxas serializes the wgmmas: C7513).
      if (split.begin < split.end) {
        first_half(split.begin);
        for (int kt = split.begin; kt + 1 < split.end; ++kt) {
          second_half(kt);
          first_half(kt + 1);
        }
        second_half(split.end - 1);
      }
    } else {
      for (int kt = split.begin; kt < split.end; ++kt) {
        first_half(kt);
        second_half(kt);
      }
    }
    cute::warpgroup_wait<0>();
    fence_accumulators(acc);
    cp_async_wait<0>();
    __syncthreads();  // the ring is free: it becomes the output tile
    if (gridDim.z > 1) {
      reduce_and_store_split_k<kBf16, kBM, 1, kNB>(args, acc, smem, token_base, row_base, warp_rows, 0, g, t);
      allow_dependent_launch();  // at the end of the block's work (design 013)
      return;
    }
    if constexpr (kStreamK) {
      if (split.end < sk.k_tiles) {  // not the tile's last k tile: a partial for its owner
        store_partial<kNB * 4>(sk, blockIdx.x, &acc[0][0][0]);
        continue;
      }
      if (split.begin > 0) add_partials<kNB * 4>(sk, sk.cta_of(tile_start), blockIdx.x, &acc[0][0][0]);
    }
    store_tile<kBf16, kBM, 1, kNB>(args, acc, smem, token_base, row_base, warp_rows, 0, g, t);
    if constexpr (kStreamK) {
      __syncthreads();  // the output tile is read out before the next part's copies overwrite the ring
      asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    }
  }
  // The next launch is allowed at the end of the block's work, not after
  // the wait: H200 bench pdl, PDL on, 64 / 256 tokens on (4096, 4096) and
  // (11008, 4096) 0.98–0.99× the time (bench/results/pdl-h200-wgmma-signal-ab.json).
  allow_dependent_launch();
#else
  (void)args;
  __trap();  // launched only on sm_90 (launch_wonly_wgmma's caller checks)
#endif
}

// a [M, K] (row stride lda) as boxes of kBK k × kBM tokens, 128-byte swizzle
// (the layout wgmma_sw128_descriptor reads), zeros outside.
CUtensorMap activation_map(const WeightOnlyArgs& args, int block_m) {
  return tma_map_2d(CU_TENSOR_MAP_DATA_TYPE_UINT16, args.a, args.k, args.m, args.lda * 2,  // validated: multiple of 16
                    kBK, block_m, CU_TENSOR_MAP_SWIZZLE_128B, "weight_only_mm", "the activations");
}

// The weight bytes as boxes of one k tile (64 k: 32 int4 | 64 int8 bytes) ×
// 128 rows, zeros past N and K, swizzled so that the 8 rows a warp's shared
// load touches hit distinct banks (the layouts load_half reads): int4 32-byte
// swizzle (chunk c of row r at 16·(c ^ (r / 4 % 2))), int8 64-byte swizzle
// (at 16·(c ^ (r / 2 % 4))). Plain [N, K/2 | K], row stride ld: 2-D.
// Prepacked [N/16][k blocks][16 rows × 64 B] (wonly_args.h; a k block is
// 128 int4 | 64 int8 k): 4-D, (byte within the row's 64, row within 16,
// k block, row block), boxes (32 | 64, 16, 1, 8).
CUtensorMap weight_map(const WeightOnlyArgs& args) {
  const WeightAddressing& addr = args.w_addr;
  const cuuint32_t row_bytes = args.int4 ? 32 : 64;  // per k tile
  const CUtensorMapSwizzle swizzle = args.int4 ? CU_TENSOR_MAP_SWIZZLE_32B : CU_TENSOR_MAP_SWIZZLE_64B;
  if (!args.prepacked) {
    const int64_t bytes_per_row = args.int4 ? (args.k + 1) / 2 : args.k;
    // One row (N = 1): any multiple of 16 serves as the unused row stride.
    const int64_t stride = args.n > 1 ? addr.row_stride : 16;  // validated: multiple of 16
    return tma_map_2d(CU_TENSOR_MAP_DATA_TYPE_UINT8, args.w, bytes_per_row, args.n, stride, row_bytes, kBN, swizzle,
                      "weight_only_mm", "the weight");
  }
  CUtensorMap map{};
  const cuuint32_t element_strides[4] = {1, 1, 1, 1};
  const PrepackedShape shape = weight_only_prepacked_shape(args.n, args.k, args.int4);
  const cuuint64_t dims[4] = {64, 16, static_cast<cuuint64_t>(shape.k_tiles), static_cast<cuuint64_t>(shape.row_blocks)};
  const cuuint64_t strides[3] = {static_cast<cuuint64_t>(addr.row_stride), static_cast<cuuint64_t>(addr.tile_stride),
                                 static_cast<cuuint64_t>(addr.row_block_stride)};
  const cuuint32_t box[4] = {row_bytes, 16, 1, kBN / 16};
  check_tensor_map(tensor_map_encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 4, const_cast<uint8_t*>(args.w), dims,
                                        strides, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                   "weight_only_mm", "the weight");
  return map;
}

// The stream-K launch (wonly_stream_k.h), if the call has a workspace and
// the rules (or WonlyStreamKOverride) pick it: a memset of the flags, then
// one CTA per resident slot (stream_k_ctas) or, in place of a cluster split
// of ≥ 4 (`small_grid`), one per SM (stream_k_ctas_small_grid). Returns
// whether it launched.
template <bool kBf16, bool kParams16, bool kInt4, int kBM>
bool launch_stream_k(const WeightOnlyArgs& args, dim3 tiles, bool small_grid, cudaStream_t stream) {
  constexpr int bytes = Ring<kInt4, kBM>::kBytes;
  constexpr auto kernel = wonly_wgmma_kernel<kBf16, kParams16, kInt4, kBM, true>;
  constexpr int64_t kPartialBytes = stream_k_partial_bytes(kBM);
  static_assert(kPartialBytes == int64_t{kBM / 2} * kThreads * 4, "a slot holds one CTA's accumulators");
  const KernelInfo info = kernel_info<kernel>(args.device.index, kThreads, bytes);
  StreamKPlan sk;
  sk.k_tiles = static_cast<int>((args.k + kBK - 1) / kBK);
  sk.tiles_x = tiles.x;
  sk.tiles_y = tiles.y;
  const int forced = stream_k_override_ctas();
  const int64_t tile_count = sk.tiles_x * sk.tiles_y;
  if (forced >= 0) {
    sk.ctas = forced;
  } else if (small_grid) {
    sk.ctas = stream_k_ctas_small_grid(sk.k_tiles, tile_count, cuda_device_info(args.device.index).sm_count, 8,
                                       kPartialBytes, args.workspace_bytes);
  } else {
    sk.ctas = stream_k_ctas(tile_count, sk.k_tiles, info.resident_ctas, 8, kPartialBytes, args.workspace_bytes);
  }
  if (sk.ctas == 0 || sk.iterations() > (int64_t{1} << 40)) return false;  // (begin(c) stays within 64 bits)
  if (sk.ctas > info.resident_ctas || stream_k_workspace_bytes(sk.ctas, kPartialBytes) > args.workspace_bytes) {
    throw Error(ErrorKind::kValue, "WonlyStreamKOverride: " + std::to_string(sk.ctas) +
                                       " CTAs do not fit (resident: " + std::to_string(info.resident_ctas) +
                                       ", workspace: " + std::to_string(args.workspace_bytes) + " bytes)");
  }
  sk.flags = static_cast<int*>(args.workspace);
  sk.partials = reinterpret_cast<float*>(static_cast<char*>(args.workspace) + stream_k_flag_bytes(sk.ctas));
  QGEMM_CUDA_CHECK(cudaMemsetAsync(sk.flags, 0, static_cast<size_t>(sk.ctas) * sizeof(int), stream));
  launch_pdl_kernel(kernel, dim3(static_cast<unsigned>(sk.ctas)), dim3(kThreads), bytes, stream, args.device.index, args,
                    band_for(kBM, args.k), activation_map(args, kBM), weight_map(args), sk);
  return true;
}

template <bool kBf16, bool kParams16, bool kInt4, int kBM>
void launch_tile(const WeightOnlyArgs& args, cudaStream_t stream) {
  constexpr int ring = Ring<kInt4, kBM>::kRingBytes;
  constexpr int bytes = Ring<kInt4, kBM>::kBytes;  // ring, params, mbarriers
  static_assert(epilogue_smem_bytes<kBM, kBM / 2>() <= ring, "the ring (not what follows) holds the output tile");
  static_assert(kBM == 256 || 2 * (bytes + 1024) <= 228 * 1024, "two CTAs per SM fit in shared memory");
  constexpr auto kernel = wonly_wgmma_kernel<kBf16, kParams16, kInt4, kBM, false>;
  const KernelInfo info = kernel_info<kernel>(args.device.index, kThreads, bytes);  // also opts in > 48 KB
  const dim3 tiles(static_cast<unsigned>((args.m + kBM - 1) / kBM), static_cast<unsigned>((args.n + kBN - 1) / kBN));
  // Split K while the CTAs stay at most one per SM, keeping ≥ 8 k tiles per
  // split (split_k_factor_one_per_sm says why).
  const int splits = split_k_factor_one_per_sm(info, cuda_device_info(args.device.index).sm_count,
                                               static_cast<int64_t>(tiles.x) * tiles.y, (args.k + kBK - 1) / kBK, 8);
  if constexpr (kHasStreamK<kBM>) {
    // Where the grid needs no cluster split, or one of ≥ 4 (or a test forces it).
    const bool candidate = splits == 1 || splits >= 4 || stream_k_override_ctas() > 0;
    if (candidate && args.workspace != nullptr && launch_stream_k<kBf16, kParams16, kInt4, kBM>(args, tiles, splits >= 4, stream)) {
      return;
    }
  }
  launch_split_k(kernel, tiles, kThreads, bytes, stream, args.device.index, splits, args, band_for(kBM, args.k),
                 activation_map(args, kBM), weight_map(args), StreamKPlan{});
}

template <bool kBf16, bool kParams16, bool kInt4>
void launch_weight(const WeightOnlyArgs& args, int block_m, cudaStream_t stream) {
  switch (block_m) {
    case 32: launch_tile<kBf16, kParams16, kInt4, 32>(args, stream); break;
    case 64: launch_tile<kBf16, kParams16, kInt4, 64>(args, stream); break;
    case 128: launch_tile<kBf16, kParams16, kInt4, 128>(args, stream); break;
    default: launch_tile<kBf16, kParams16, kInt4, 256>(args, stream); break;
  }
}

// fp32 or 16-bit parameters: separate builds (wonly_param_blocks.cuh).
template <bool kBf16, bool kInt4>
void launch_params(const WeightOnlyArgs& args, int block_m, cudaStream_t stream) {
  if (args.params16) launch_weight<kBf16, true, kInt4>(args, block_m, stream);
  else launch_weight<kBf16, false, kInt4>(args, block_m, stream);
}

}  // namespace

void launch_wonly_wgmma(const WeightOnlyArgs& args, int block_m) {
  // The caller (wonly_dispatch.cu) has checked: sm_90, K ≤ 2^30, N ≤ 65535·128.
  if (args.m > INT32_MAX) {  // TMA coordinates are 32-bit
    throw Error(ErrorKind::kValue, "weight_only_mm: M=" + std::to_string(args.m) +
                                       " exceeds the wgmma kernel's 32-bit token coordinate");
  }
  cudaStream_t stream = as_cuda_stream(args.stream);
  const bool bf16 = args.dtype == DType::kBFloat16;
  if (bf16 && args.int4) launch_params<true, true>(args, block_m, stream);
  else if (bf16) launch_params<true, false>(args, block_m, stream);
  else if (args.int4) launch_params<false, true>(args, block_m, stream);
  else launch_params<false, false>(args, block_m, stream);
  QGEMM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace qgemm::detail
