// Larger-M weight-only kernel (M > 16): a tiled tensor-core GEMM (mma.sync
// m16n8k16, sm_80+) whose weight tile is dequantized in registers on its
// way into shared memory, so the MMA reads ordinary T operands.
//
// Block tile: kBM tokens × 128 weight rows × 32 k, 8 warps laid out
// (kBM/64) × (8·64/kBM), each warp 64 tokens × (128·kBM/512) rows. Per k tile:
//   a  [kBM × 32] T       cp.async 16 B (rows past M zero-filled) → As[stage]
//   w  [128 × 32] int4/8  each thread loads 16 elements of one row (8 B int4 /
//                         16 B int8) into registers one tile ahead, then
//                         dequantizes them (ŵ = round_T(fma(q, s, o))) into
//                         Ws[stage] as T
// Two stages: while tile kt is multiplied, tile kt+1's a is in flight and its
// weight bytes sit in registers. Shared rows are padded to 40 elements (80 B)
// so the ldmatrix row addresses of a 8×8 matrix hit 8 distinct bank quads.
// Blocks run M tiles fastest (blockIdx.x), so the blocks sharing a weight
// tile are co-scheduled and the weight is read from DRAM about once.
#include "core/cuda_check.h"
#include "wonly/cuda/wonly_cuda.h"
#include "wonly/cuda/wonly_device.cuh"

namespace qgemm::detail {
namespace {

using namespace wonly;

constexpr int kThreads = 256;
constexpr int kBN = 128, kBK = 32, kLd = kBK + 8;

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

// The raw weight slice a thread owns in one k tile: 16 elements of one row.
struct WeightSlice {
  uint4 bytes;  // int4: .x, .y hold the 16 nibbles; int8: all 16 bytes
  float scale, offset;
};

template <bool kInt4>
__device__ __forceinline__ void load_weight(const WeightOnlyArgs& args, int64_t row_base,
                                            int64_t k0, WeightSlice& s) {
  const int row_in_tile = threadIdx.x / 2, part = threadIdx.x % 2;  // 16 elements each
  const int64_t row = min(row_base + row_in_tile, args.n - 1);
  const int64_t k = k0 + part * 16;
  if constexpr (kInt4) {
    const int64_t chunk = k0 / 32;
    const uint8_t* p = args.w + args.w_addr.chunk_offset(row, chunk) + part * 8;
    const uint2 v = __ldg(reinterpret_cast<const uint2*>(p));
    s.bytes = make_uint4(v.x, v.y, 0, 0);
  } else {
    const int64_t chunk = k / 16;
    s.bytes = __ldg(reinterpret_cast<const uint4*>(args.w + args.w_addr.chunk_offset(row, chunk)));
  }
  const int64_t group = k / args.group_size;
  s.scale = __ldg(args.scales + row * args.ld_scales + group);
  s.offset = args.offsets ? __ldg(args.offsets + row * args.ld_offsets + group) : 0.0f;
}

template <bool kBf16, bool kInt4>
__device__ __forceinline__ void store_weight(const WeightSlice& s, uint16_t (*tile)[kLd]) {
  const int row_in_tile = threadIdx.x / 2, part = threadIdx.x % 2;
  uint32_t pairs[8];
  if constexpr (kInt4) {
    dequant_int4_word<kBf16>(s.bytes.x, s.scale, s.offset, pairs);
    dequant_int4_word<kBf16>(s.bytes.y, s.scale, s.offset, pairs + 4);
  } else {
    dequant_int8_word<kBf16>(s.bytes.x, s.scale, s.offset, pairs);
    dequant_int8_word<kBf16>(s.bytes.y, s.scale, s.offset, pairs + 2);
    dequant_int8_word<kBf16>(s.bytes.z, s.scale, s.offset, pairs + 4);
    dequant_int8_word<kBf16>(s.bytes.w, s.scale, s.offset, pairs + 6);
  }
  auto* dst = reinterpret_cast<uint4*>(&tile[row_in_tile][part * 16]);
  dst[0] = make_uint4(pairs[0], pairs[1], pairs[2], pairs[3]);
  dst[1] = make_uint4(pairs[4], pairs[5], pairs[6], pairs[7]);
}

template <int kBM>
__device__ __forceinline__ void load_activations(const WeightOnlyArgs& args, int64_t token_base,
                                                 int64_t k0, uint16_t (*tile)[kLd]) {
  const auto* a = static_cast<const uint16_t*>(args.a);
#pragma unroll
  for (int i = threadIdx.x; i < kBM * 4; i += kThreads) {
    const int r = i / 4, part = i % 4;  // 4 × 8 elements per row
    const int64_t token = token_base + r;
    const bool inside = token < args.m;
    const uint16_t* src = a + (inside ? token : 0) * args.lda + k0 + part * 8;
    cp_async_16(&tile[r][part * 8], src, inside);
  }
  asm volatile("cp.async.commit_group;\n" ::);
}

template <bool kBf16, bool kInt4, int kBM>
__global__ void __launch_bounds__(kThreads) wonly_mma_kernel(const WeightOnlyArgs args) {
  constexpr int kWarpsM = kBM / 64, kWarpsN = 8 / kWarpsM;
  constexpr int kWarpRows = kBN / kWarpsN;  // weight rows per warp: 16 or 32
  constexpr int kNB = kWarpRows / 8;        // n8 blocks per warp: 2 or 4
  __shared__ __align__(16) uint16_t as[2][kBM][kLd];
  __shared__ __align__(16) uint16_t ws[2][kBN][kLd];

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warp_m = warp / kWarpsN, warp_n = warp % kWarpsN;
  const int64_t token_base = static_cast<int64_t>(blockIdx.x) * kBM;
  const int64_t row_base = static_cast<int64_t>(blockIdx.y) * kBN;
  const int64_t k_tiles = args.k / kBK;

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

template <bool kBf16, bool kInt4>
void launch(const WeightOnlyArgs& args, int block_m) {
  const unsigned n_tiles = static_cast<unsigned>((args.n + kBN - 1) / kBN);
  cudaStream_t stream = as_cuda_stream(args.stream);
  if (block_m == 64) {
    const dim3 grid(static_cast<unsigned>((args.m + 63) / 64), n_tiles);
    wonly_mma_kernel<kBf16, kInt4, 64><<<grid, kThreads, 0, stream>>>(args);
  } else {
    const dim3 grid(static_cast<unsigned>((args.m + 127) / 128), n_tiles);
    wonly_mma_kernel<kBf16, kInt4, 128><<<grid, kThreads, 0, stream>>>(args);
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
