// Larger-M weight-only kernel (M > 32): a pipelined tensor-core GEMM
// (mma.sync m16n8k16, sm_80+) that dequantizes the weight straight from the
// shared-memory copy of its raw bytes into MMA A-fragment registers.
//
// Roles are swapped as in the decode kernel (wonly_gemv.cu): weight rows are
// the MMA's M side (A, dequantized in registers) and tokens its N side (B,
// read from shared memory), so no dequantized tile is ever stored.
//
// Block tile: kBN = 128 weight rows × kBM tokens × kBK = 64 k; 8 warps as
// (8 / kMT) along rows × kMT along tokens, a warp owning 16·kMT rows × kBM/kMT
// tokens (`launch` picks kMT per tile). A kStages-deep cp.async ring holds,
// per k tile (one commit group each; LoadPlan fixes each thread's copies):
//   act  [kBM][72] T          16 B copies; tokens past M, k past K zero-filled
//   raw  [128][32 | 64] B     the weight's 16-byte chunks (int4 | int8), as stored
//   par  [128][4] fp32        scale and offset of the groups of k0 and k0 + 32
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
// ŵ = round_T(q·s_T + o_T); halves of a tile past K load zero weights,
// scales and offsets, so their ŵ is exactly 0 (their activations are 0 too,
// but an offset alone could be ±inf in fp16).
// Blocks run token tiles fastest (blockIdx.x), so the blocks that share a
// weight tile are co-scheduled and the weight comes from DRAM about once.
#include <cstddef>
#include <cstdint>

#include "core/cuda_check.h"
#include "wonly/cuda/wonly_cuda.h"
#include "wonly/cuda/wonly_device.cuh"
#include "wonly/cuda/wonly_split_k.cuh"

namespace qgemm::detail {
namespace {

using namespace wonly;

constexpr int kThreads = 256;
constexpr int kBN = 128, kBK = 64, kStages = 4;
constexpr int kActLd = kBK + 8;  // elements per shared activation row (144 B)

template <bool kInt4>
constexpr int raw_row_bytes() {
  return kInt4 ? kBK / 2 : kBK;
}

// One ring slot. Member order keeps every array 16-byte aligned.
template <bool kInt4, int kBM>
struct Stage {
  uint16_t act[kBM][kActLd];
  uint8_t raw[kBN][raw_row_bytes<kInt4>()];
  float par[kBN][4];  // scale(k0), scale(k0+32), offset(k0), offset(k0+32)
};

__device__ __forceinline__ uint32_t smem_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes (L2 only) to shared address `dst`, or zeros when !fill (src must
// still be a valid address).
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, bool fill) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(fill ? 16 : 0));
}

__device__ __forceinline__ void cp_async_4(uint32_t dst, const void* src, bool fill) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(fill ? 4 : 0));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

// What one thread copies per k tile, fixed for the whole loop so that a tile
// costs a few adds per copy (a first version recomputed every address,
// including two 64-bit divisions, and spent ~500 instructions per warp and
// tile on it). Thread i copies
//   act: column chunk i%8 of tokens i/8 + 32j          (j < kBM/32)
//   raw: chunk i%C of rows i/C + (256/C)j, C = 2 | 4   (j < C/2)
//   par: row i%128's scales (i < 128) or offsets, groups of k0 and k0 + 32
template <bool kInt4, int kBM>
struct LoadPlan {
  using StageT = Stage<kInt4, kBM>;
  static constexpr int kActCopies = kBM * 8 / kThreads;
  static constexpr int kChunks = raw_row_bytes<kInt4>() / 16;  // per row and tile
  static constexpr int kRawCopies = kBN * kChunks / kThreads;
  static constexpr int kElems = kInt4 ? 32 : 16;               // per chunk
  static constexpr uint32_t kActStep = 32 * sizeof(StageT::act[0]);                             // 32 tokens
  static constexpr uint32_t kRawStep = (kThreads / kChunks) * sizeof(StageT::raw[0]);          // rows
  static constexpr uint32_t kRawOffset = offsetof(StageT, raw), kParOffset = offsetof(StageT, par);

  const uint16_t* act;  // token i/8 (clamped into [0, M)), column 8·(i%8)
  int64_t act_step;     // 32 tokens
  uint32_t act_tokens;  // bit j: token of copy j < M
  int act_col;
  const uint8_t* raw[kRawCopies];  // row part of the chunk offset
  int chunk;
  const float* par;  // this row's scales or offsets (null: zero-fill)
  int group_shift;   // group = k >> shift (per channel: 31, always 0)
  uint32_t act_dst, raw_dst, par_dst;  // shared addresses in stage 0

  __device__ LoadPlan(const WeightOnlyArgs& args, int64_t token_base, int64_t row_base, uint32_t smem) {
    const int i = threadIdx.x;
    const auto* a = static_cast<const uint16_t*>(args.a);
    act_col = 8 * (i % 8);
    act_step = 32 * args.lda;
    act_tokens = 0;
#pragma unroll
    for (int j = 0; j < kActCopies; ++j) act_tokens |= (token_base + i / 8 + 32 * j < args.m ? 1u : 0u) << j;
    act = a + min(token_base + i / 8, args.m - 1) * args.lda + act_col;
    chunk = i % kChunks;
#pragma unroll
    for (int j = 0; j < kRawCopies; ++j) {
      const int64_t row = min(row_base + i / kChunks + (kThreads / kChunks) * j, args.n - 1);  // past N: never stored
      raw[j] = args.w + args.w_addr.chunk_offset(row, 0);
    }
    const int64_t row = min(row_base + i % kBN, args.n - 1);
    par = i < kBN ? args.scales + row * args.ld_scales
                  : (args.offsets != nullptr ? args.offsets + row * args.ld_offsets : nullptr);
    group_shift = args.group_size == args.k ? 31 : __ffs(static_cast<int>(args.group_size)) - 1;
    act_dst = smem + (i / 8) * sizeof(StageT::act[0]) + 2 * act_col;
    raw_dst = smem + kRawOffset + (i / kChunks) * sizeof(StageT::raw[0]) + 16 * chunk;
    par_dst = smem + kParOffset + (i % kBN) * sizeof(StageT::par[0]) + (i < kBN ? 0 : 8);
  }

  // Issues the copies of k tile `kt` into ring slot `slot` (the caller commits).
  // Halves of the tile at or past K get zero weights, scales and offsets, so
  // their ŵ = round_T(0·0 + 0) = 0 exactly (an offset past K could be ±inf).
  __device__ __forceinline__ void issue(const WeightOnlyArgs& args, int kt, int slot) const {
    const uint32_t base = slot * static_cast<uint32_t>(sizeof(StageT));
    const int k0 = kt * kBK, k = static_cast<int>(args.k);
    const bool col_inside = k0 + act_col < k;
#pragma unroll
    for (int j = 0; j < kActCopies; ++j) {
      const bool fill = col_inside && ((act_tokens >> j) & 1u);
      cp_async_16(base + act_dst + j * kActStep, fill ? act + j * act_step + k0 : act, fill);
    }
    const int c = kt * kChunks + chunk;  // chunk index along the row
    const int64_t c_offset = (c >> 2) * args.w_addr.tile_stride + (c & 3) * 16;
    const bool chunk_inside = c * kElems < k;
#pragma unroll
    for (int j = 0; j < kRawCopies; ++j) {
      cp_async_16(base + raw_dst + j * kRawStep, chunk_inside ? raw[j] + c_offset : raw[j], chunk_inside);
    }
    const bool second_inside = k0 + 32 < k;  // groups are ≥ 32 elements: one per half tile
    const bool fill = par != nullptr;
    cp_async_4(base + par_dst, fill ? par + (k0 >> group_shift) : args.scales, fill);
    cp_async_4(base + par_dst + 4, fill && second_inside ? par + ((k0 + 32) >> group_shift) : args.scales,
               fill && second_inside);
  }
};

// The A fragments of one m16 tile for the four MMA steps of a k tile: rows
// `row` and `row` + 8 of the stage, this lane's 16 elements (0 past K: see
// LoadPlan::issue).
template <bool kBf16, bool kInt4, int kBM>
__device__ __forceinline__ void dequant_a(const Stage<kInt4, kBM>& stage, int row, int t, uint32_t a[4][4]) {
  const int j = t >> 1;  // elements 16t… lie in the group of k0 (t < 2) or k0 + 32
#pragma unroll
  for (int h = 0; h < 2; ++h) {  // h = 0: row g (a[s][0], a[s][2]); h = 1: row g + 8 (a[s][1], a[s][3])
    const int r = row + 8 * h;
    const uint32_t s2 = param2<kBf16>(stage.par[r][j]), o2 = param2<kBf16>(stage.par[r][2 + j]);
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

// Epilogue: out[token, row] = round_T(acc + bias[row]) (wonly_math.h). The
// accumulators (rows g, g+8 × tokens 2t, 2t+1 of each m16 × n8 tile) are
// rounded into a [kBM tokens][128 rows] T tile in shared memory (pitch 136:
// the four token rows a warp's store touches land 8 banks apart), then
// written to global memory 8 outputs (16 bytes) per store; element stores
// at the N edge or when the output rows are not 16-byte aligned.
template <bool kBf16, bool kInt4, int kBM, int kMT, int kNB>
__device__ __forceinline__ void store_tile(const WeightOnlyArgs& args, const float (&acc)[kMT][kNB][4],
                                           unsigned char* smem, int64_t token_base, int64_t row_base,
                                           int warp_rows, int warp_tokens, int g, int t) {
  constexpr int kOutLd = kBN + 8;
  static_assert(kBM * kOutLd * 2 <= kStages * static_cast<int>(sizeof(Stage<kInt4, kBM>)), "output tile fits");
  auto* tile = reinterpret_cast<uint16_t(*)[kOutLd]>(smem);
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = warp_rows + 16 * mt + g + 8 * h;
      const int64_t row = min(row_base + r, args.n - 1);
      const bool has_bias = args.bias != nullptr;
      const float bias = has_bias ? load_act<kBf16>(args.bias, row) : 0.0f;
#pragma unroll
      for (int nb = 0; nb < kNB; ++nb) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          tile[warp_tokens + 8 * nb + 2 * t + e][r] = output_bits<kBf16>(acc[mt][nb][2 * h + e], has_bias, bias);
        }
      }
    }
  }
  __syncthreads();
  auto* out = static_cast<uint16_t*>(args.out);
  const bool vector_ok = ((reinterpret_cast<uintptr_t>(out) | static_cast<uintptr_t>(args.ldo * 2)) & 15) == 0;
#pragma unroll
  for (int i = threadIdx.x; i < kBM * (kBN / 8); i += kThreads) {
    const int r = i / (kBN / 8), c = i % (kBN / 8);
    const int64_t token = token_base + r, row = row_base + 8 * c;
    if (token >= args.m || row >= args.n) continue;
    uint16_t* dst = out + token * args.ldo + row;
    if (vector_ok && row + 8 <= args.n) {
      *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(&tile[r][8 * c]);
    } else {
      for (int j = 0; j < 8 && row + j < args.n; ++j) dst[j] = tile[r][8 * c + j];
    }
  }
}

// Split-K reduction inside a thread-block cluster (sm_90): every CTA but the
// leader (rank 0) leaves its accumulators in its own shared memory, laid out
// [register][thread] (consecutive threads, consecutive words); the leader
// adds them in rank order — a fixed order, so the result is deterministic —
// through distributed shared memory, then runs the epilogue alone. The
// second cluster barrier keeps the peers' shared memory alive until the
// leader has read it. No global workspace, no atomics. Returns whether this
// CTA writes the output.
template <int kMT, int kNB>
__device__ __forceinline__ bool reduce_split_k(float (&acc)[kMT][kNB][4], float* partial) {
  constexpr int kRegs = kMT * kNB * 4;
  const unsigned rank = cluster_rank();
  float* flat = &acc[0][0][0];
  if (rank != 0) {
#pragma unroll
    for (int i = 0; i < kRegs; ++i) partial[i * kThreads + threadIdx.x] = flat[i];
  }
  cluster_sync();
  if (rank == 0) {
    for (unsigned peer = 1; peer < gridDim.z; ++peer) {
      const float* remote = cluster_peer(partial, peer);
#pragma unroll
      for (int i = 0; i < kRegs; ++i) flat[i] += remote[i * kThreads + threadIdx.x];
    }
  }
  cluster_sync();
  return rank == 0;
}

// kMT m16 tiles per warp: warps are (8 / kMT) along rows × kMT along tokens,
// each 16·kMT rows × kBM/kMT tokens.
template <bool kBf16, bool kInt4, int kBM, int kMT>
__global__ void __launch_bounds__(kThreads, 2) wonly_mma_kernel(const WeightOnlyArgs args) {
  constexpr int kWarpsRows = 8 / kMT;
  constexpr int kWarpTokens = kBM / kMT;
  constexpr int kNB = kWarpTokens / 8;  // n8 token blocks per warp
  extern __shared__ __align__(16) unsigned char smem[];
  auto* stages = reinterpret_cast<Stage<kInt4, kBM>*>(smem);

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, t = lane & 3;
  const int warp_rows = (warp % kWarpsRows) * 16 * kMT, warp_tokens = (warp / kWarpsRows) * kWarpTokens;
  const int64_t token_base = static_cast<int64_t>(blockIdx.x) * kBM;
  const int64_t row_base = static_cast<int64_t>(blockIdx.y) * kBN;
  // Split K: CTA z of a gridDim.z-CTA cluster takes k tiles [kt_begin, kt_end).
  const int k_tiles = static_cast<int>((args.k + kBK - 1) / kBK);
  const int per_split = (k_tiles + static_cast<int>(gridDim.z) - 1) / static_cast<int>(gridDim.z);
  const int kt_begin = min(k_tiles, static_cast<int>(blockIdx.z) * per_split);
  const int kt_end = min(k_tiles, kt_begin + per_split);

  const LoadPlan<kInt4, kBM> plan(args, token_base, row_base, smem_address(smem));
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (kt_begin + s < kt_end) plan.issue(args, kt_begin + s, s);
    cp_async_commit();  // empty groups keep the count uniform
  }
  int slot = 0, load_slot = kStages - 1;  // ring slots of tile kt and of tile kt + kStages − 1

  float acc[kMT][kNB][4] = {};
  for (int kt = kt_begin; kt < kt_end; ++kt) {
    cp_async_wait<kStages - 2>();  // this thread's copies of tile kt have landed
    __syncthreads();               // everyone's have, and tile kt − 1's slot is free
    if (kt + kStages - 1 < kt_end) plan.issue(args, kt + kStages - 1, load_slot);
    cp_async_commit();
    load_slot = load_slot + 1 == kStages ? 0 : load_slot + 1;

    const Stage<kInt4, kBM>& stage = stages[slot];
    slot = slot + 1 == kStages ? 0 : slot + 1;
    uint32_t a[kMT][4][4];  // [m16 tile][step][fragment register]
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) dequant_a<kBf16, kInt4, kBM>(stage, warp_rows + 16 * mt + g, t, a[mt]);
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
          mma_16816<kBf16>(acc[mt][nb], a[mt][2 * h], b0);
          mma_16816<kBf16>(acc[mt][nb], a[mt][2 * h + 1], b1);
        }
      }
    }
  }
  cp_async_wait<0>();
  __syncthreads();  // the ring is free: it becomes the output tile
  if (gridDim.z > 1 && !reduce_split_k<kMT, kNB>(acc, reinterpret_cast<float*>(smem))) return;
  store_tile<kBf16, kInt4, kBM, kMT, kNB>(args, acc, smem, token_base, row_base, warp_rows, warp_tokens, g, t);
}

template <bool kBf16, bool kInt4, int kBM, int kMT>
void launch_tile(const WeightOnlyArgs& args, cudaStream_t stream) {
  constexpr int bytes = kStages * static_cast<int>(sizeof(Stage<kInt4, kBM>));
  constexpr auto kernel = wonly_mma_kernel<kBf16, kInt4, kBM, kMT>;
  const KernelInfo info = kernel_info<kernel>(args.device.index, kThreads, bytes);  // also opts in > 48 KB
  const dim3 tiles(static_cast<unsigned>((args.m + kBM - 1) / kBM), static_cast<unsigned>((args.n + kBN - 1) / kBN));
  // Split K while the tiles fill at most half of the resident CTAs (2 per
  // SM), keeping ≥ 8 k tiles per split. E.g. H100, (N, K) = (4096, 4096),
  // M = 64: 32 tiles → 8 splits of 8 k tiles; (28672, 8192): 224 tiles → 1.
  const int splits = split_k_factor(info, static_cast<int64_t>(tiles.x) * tiles.y, (args.k + kBK - 1) / kBK, 8);
  launch_split_k(kernel, tiles, kThreads, bytes, stream, splits, args);
}

template <bool kBf16, bool kInt4>
void launch(const WeightOnlyArgs& args, int block_m) {
  cudaStream_t stream = as_cuda_stream(args.stream);
  // 64 tokens: warps 8 × 1 (16 rows × 64 tokens each; the 4 × 2 layout
  // dequantizes every weight twice and was 15–20 % slower); 128 tokens:
  // warps 4 × 2 (32 rows × 64 tokens: half the shared activation reads of
  // 8 × 1, 5–10 % faster). H100, (28672, 8192) and (4096, 4096).
  if (block_m == 64) launch_tile<kBf16, kInt4, 64, 1>(args, stream);
  else launch_tile<kBf16, kInt4, 128, 2>(args, stream);
  QGEMM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void launch_wonly_mma(const WeightOnlyArgs& args, int block_m) {
  if (args.k > (int64_t{1} << 30)) {
    throw Error(ErrorKind::kValue, "weight_only_mm: K=" + std::to_string(args.k) +
                                       " exceeds the tensor-core kernel's 32-bit k index (2^30)");
  }
  if (args.n > 65535LL * kBN) {
    throw Error(ErrorKind::kValue, "weight_only_mm: N=" + std::to_string(args.n) +
                                       " exceeds the grid of the tensor-core kernel");
  }
  const bool bf16 = args.dtype == DType::kBFloat16;
  if (bf16 && args.int4) launch<true, true>(args, block_m);
  else if (bf16) launch<true, false>(args, block_m);
  else if (args.int4) launch<false, true>(args, block_m);
  else launch<false, false>(args, block_m);
}

}  // namespace qgemm::detail
