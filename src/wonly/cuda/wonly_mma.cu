// Larger-M weight-only kernel (M > 16): a tiled tensor-core GEMM (mma.sync
// m16n8k16, sm_80+) whose weight tile is dequantized in registers on its
// way into shared memory, so the MMA reads ordinary T operands.
//
// Block tile: kBM tokens × 128 weight rows × 64 k, 8 warps laid out
// (kBM/64) × (8·64/kBM), each warp 64 tokens × (128·kBM/512) rows. Per k tile:
//   a  [kBM × 64] T       cp.async 16 B (rows past M, columns past K
//                         zero-filled) → As[stage]
//   w  [128 × 64] int4/8  each thread loads 32 elements of one row (one 16 B
//                         int4 chunk / two int8 chunks) into registers one
//                         tile ahead, then dequantizes them (ŵ = round_T(q·s_T
//                         + o_T), HFMA2) into Ws[stage] as T (zeros past K)
// Two stages: while tile kt is multiplied, tile kt+1's a is in flight and its
// weight bytes sit in registers. The k tile was 32 before issue 7: the loop
// is latency-bound (one memory round trip per k tile), so 64 halves the
// trips. Shared rows are padded to 72 elements (144 B) so the ldmatrix row
// addresses of an 8×8 matrix hit 8 distinct bank quads; the 55 / 74 KB of
// dynamic shared memory (kBM 64 / 128) need the opt-in above 48 KB.
// Blocks run M tiles fastest (blockIdx.x), so the blocks sharing a weight
// tile are co-scheduled and the weight is read from DRAM about once.
#include <atomic>
#include <cstdint>

#include "core/cuda_check.h"
#include "wonly/cuda/wonly_cuda.h"
#include "wonly/cuda/wonly_device.cuh"

namespace qgemm::detail {
namespace {

using namespace wonly;

constexpr int kThreads = 256;
constexpr int kBN = 128, kBK = 64, kLd = kBK + 8;

__device__ __forceinline__ uint32_t smem_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cp_async_16(void* dst, const void* src, bool fill) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(dst)),
               "l"(src), "r"(fill ? 16 : 0));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(p)));
}

// The raw weight slice a thread owns in one k tile: 32 elements of one row
// (one 16-byte int4 chunk, or two int8 chunks). valid = false past K (K is a
// multiple of 32, not necessarily of kBK): the slice then stores zeros.
struct WeightSlice {
  uint4 bytes[2];
  float scale, offset;
  bool valid;
};

template <bool kInt4>
__device__ __forceinline__ void load_weight(const WeightOnlyArgs& args, int64_t row_base,
                                            int64_t k0, WeightSlice& s) {
  const int row_in_tile = threadIdx.x / 2, part = threadIdx.x % 2;  // 32 elements each
  const int64_t row = min(row_base + row_in_tile, args.n - 1);
  const int64_t k = k0 + part * 32;
  s.valid = k < args.k;
  if (!s.valid) return;
  if constexpr (kInt4) {
    s.bytes[0] = __ldg(reinterpret_cast<const uint4*>(args.w + args.w_addr.chunk_offset(row, k / 32)));
  } else {
    s.bytes[0] = __ldg(reinterpret_cast<const uint4*>(args.w + args.w_addr.chunk_offset(row, k / 16)));
    s.bytes[1] = __ldg(reinterpret_cast<const uint4*>(args.w + args.w_addr.chunk_offset(row, k / 16 + 1)));
  }
  const int64_t group = k / args.group_size;
  s.scale = __ldg(args.scales + row * args.ld_scales + group);
  s.offset = args.offsets ? __ldg(args.offsets + row * args.ld_offsets + group) : 0.0f;
}

template <bool kBf16, bool kInt4>
__device__ __forceinline__ void store_weight(const WeightSlice& s, uint16_t (*tile)[kLd]) {
  const int row_in_tile = threadIdx.x / 2, part = threadIdx.x % 2;
  uint32_t pairs[16] = {};
  if (s.valid) {
    const uint32_t s2 = param2<kBf16>(s.scale), o2 = param2<kBf16>(s.offset);  // (s_T, s_T), (o_T, o_T)
    const uint32_t* words = reinterpret_cast<const uint32_t*>(s.bytes);
    if constexpr (kInt4) {
#pragma unroll
      for (int w = 0; w < 4; ++w) dequant_int4_word<kBf16>(words[w], s2, o2, pairs + 4 * w);
    } else {
#pragma unroll
      for (int w = 0; w < 8; ++w) dequant_int8_word<kBf16>(words[w], s2, o2, pairs + 2 * w);
    }
  }
  auto* dst = reinterpret_cast<uint4*>(&tile[row_in_tile][part * 32]);
#pragma unroll
  for (int v = 0; v < 4; ++v) dst[v] = make_uint4(pairs[4 * v], pairs[4 * v + 1], pairs[4 * v + 2], pairs[4 * v + 3]);
}

template <int kBM>
__device__ __forceinline__ void load_activations(const WeightOnlyArgs& args, int64_t token_base,
                                                 int64_t k0, uint16_t (*tile)[kLd]) {
  const auto* a = static_cast<const uint16_t*>(args.a);
#pragma unroll
  for (int i = threadIdx.x; i < kBM * 8; i += kThreads) {
    const int r = i / 8, part = i % 8;  // 8 × 8 elements per row
    const int64_t token = token_base + r;
    const int64_t col = k0 + part * 8;
    const bool inside = token < args.m && col < args.k;  // zero-filled otherwise
    const uint16_t* src = inside ? a + token * args.lda + col : a;
    cp_async_16(&tile[r][part * 8], src, inside);
  }
  asm volatile("cp.async.commit_group;\n" ::);
}

template <int kBM>
constexpr int smem_bytes() {
  return 2 * (kBM + kBN) * kLd * 2;  // two stages of a and ŵ tiles, T = 2 bytes
}

template <bool kBf16, bool kInt4, int kBM>
__global__ void __launch_bounds__(kThreads, 2) wonly_mma_kernel(const WeightOnlyArgs args) {
  constexpr int kWarpsM = kBM / 64, kWarpsN = 8 / kWarpsM;
  constexpr int kWarpRows = kBN / kWarpsN;  // weight rows per warp: 16 or 32
  constexpr int kNB = kWarpRows / 8;        // n8 blocks per warp: 2 or 4
  extern __shared__ __align__(16) uint16_t smem[];  // as[2][kBM][kLd], then ws[2][kBN][kLd]
  auto as = reinterpret_cast<uint16_t(*)[kBM][kLd]>(smem);
  auto ws = reinterpret_cast<uint16_t(*)[kBN][kLd]>(smem + 2 * kBM * kLd);

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warp_m = warp / kWarpsN, warp_n = warp % kWarpsN;
  const int64_t token_base = static_cast<int64_t>(blockIdx.x) * kBM;
  const int64_t row_base = static_cast<int64_t>(blockIdx.y) * kBN;
  const int64_t k_tiles = (args.k + kBK - 1) / kBK;

  float acc[4][kNB][4] = {};
  WeightSlice slice;
  load_activations<kBM>(args, token_base, 0, as[0]);
  load_weight<kInt4>(args, row_base, 0, slice);

  for (int64_t kt = 0; kt < k_tiles; ++kt) {
    const int stage = static_cast<int>(kt & 1);
    store_weight<kBf16, kInt4>(slice, ws[stage]);
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncthreads();
    if (kt + 1 < k_tiles) {
      load_activations<kBM>(args, token_base, (kt + 1) * kBK, as[stage ^ 1]);
      load_weight<kInt4>(args, row_base, (kt + 1) * kBK, slice);
    }
#pragma unroll
    for (int ks = 0; ks < kBK / 16; ++ks) {
      uint32_t a_frag[4][4], b_frag[kNB][2];
#pragma unroll
      for (int mb = 0; mb < 4; ++mb) {
        ldmatrix_x4(a_frag[mb], &as[stage][warp_m * 64 + mb * 16 + (lane & 15)][ks * 16 + (lane >> 4) * 8]);
      }
#pragma unroll
      for (int nb = 0; nb < kNB; nb += 2) {
        uint32_t r[4];
        ldmatrix_x4(r, &ws[stage][warp_n * kWarpRows + nb * 8 + (lane & 7) + ((lane >> 4) << 3)]
                          [ks * 16 + ((lane >> 3) & 1) * 8]);
        b_frag[nb][0] = r[0];
        b_frag[nb][1] = r[1];
        b_frag[nb + 1][0] = r[2];
        b_frag[nb + 1][1] = r[3];
      }
#pragma unroll
      for (int mb = 0; mb < 4; ++mb)
#pragma unroll
        for (int nb = 0; nb < kNB; ++nb) mma_16816<kBf16>(acc[mb][nb], a_frag[mb], b_frag[nb]);
    }
  }

  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int mb = 0; mb < 4; ++mb) {
#pragma unroll
    for (int nb = 0; nb < kNB; ++nb) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int64_t token = token_base + warp_m * 64 + mb * 16 + g + (e >= 2 ? 8 : 0);
        const int64_t row = row_base + warp_n * kWarpRows + nb * 8 + 2 * t + (e & 1);
        if (token < args.m && row < args.n) store_output<kBf16>(args, token, row, acc[mb][nb][e]);
      }
    }
  }
}

template <bool kBf16, bool kInt4, int kBM>
void launch_tile(const WeightOnlyArgs& args, dim3 grid, cudaStream_t stream) {
  constexpr int bytes = smem_bytes<kBM>();  // > 48 KB: opt in once per kernel and device
  static std::atomic<uint64_t> opted_in{0};
  int device = 0;
  QGEMM_CUDA_CHECK(cudaGetDevice(&device));
  const uint64_t bit = uint64_t{1} << (device & 63);
  if ((opted_in.load(std::memory_order_acquire) & bit) == 0) {
    QGEMM_CUDA_CHECK(cudaFuncSetAttribute(wonly_mma_kernel<kBf16, kInt4, kBM>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    opted_in.fetch_or(bit, std::memory_order_acq_rel);
  }
  wonly_mma_kernel<kBf16, kInt4, kBM><<<grid, kThreads, bytes, stream>>>(args);
}

template <bool kBf16, bool kInt4>
void launch(const WeightOnlyArgs& args, int block_m) {
  const unsigned n_tiles = static_cast<unsigned>((args.n + kBN - 1) / kBN);
  cudaStream_t stream = as_cuda_stream(args.stream);
  if (block_m == 64) {
    launch_tile<kBf16, kInt4, 64>(args, dim3(static_cast<unsigned>((args.m + 63) / 64), n_tiles), stream);
  } else {
    launch_tile<kBf16, kInt4, 128>(args, dim3(static_cast<unsigned>((args.m + 127) / 128), n_tiles), stream);
  }
  QGEMM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void launch_wonly_mma(const WeightOnlyArgs& args, int block_m) {
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
