// Skinny scaled GEMM for M ≤ 64 (decode batches): the weight B is read once,
// with 16-byte loads spread over every SM, and the few activation rows ride
// along. Runs on sm_80+ for int8 and sm_89+ for fp8 (mma.sync only).
//
// Work split: one CTA per 32 output columns (grid = ⌈N/32⌉, so N = 4096
// already gives 128 CTAs: no split-K across CTAs, no workspace); its 8 warps
// split K: warp w takes the 64-element K chunks w, w+8, w+16, … and the 8
// partial sums are added in shared memory in a fixed order (deterministic).
//
// Per 64-element chunk, lane (g = lane/4, t = lane%4) loads 16 bytes at
// k = k0 + 16t of: B column n0 + 8j + g for j = 0..3, and A rows 16f + g and
// 16f + g + 8 for each 16-row fragment f. The 16 bytes are four 4-byte words
// w0..w3, fed to two m16n8k32 MMAs as
//     MMA 1: a = {A_g.w0, A_g8.w0, A_g.w1, A_g8.w1},  b = {B.w0, B.w1}
//     MMA 2: a = {A_g.w2, A_g8.w2, A_g.w3, A_g8.w3},  b = {B.w2, B.w3}
// The MMA's k index (4t + i for a0/a1/b0, 16 + 4t + i for a2/a3/b1) thus maps
// to the same physical k for A and B, so each MMA sums a permutation of the
// chunk's 32 products: the dot product is unchanged (exactly, for int8).
//
// Epilogue: gemm/epilogue_math.h, as in the CPU backend and the fallback.
#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda_check.h"
#include "core/numeric.h"
#include "gemm/cuda/kernels.h"
#include "gemm/epilogue_math.h"

namespace qgemm::detail {
namespace {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kColumns = 32;  // per CTA: 4 MMA n-tiles of 8
constexpr int kNTiles = kColumns / 8;
constexpr int kChunk = 64;  // K elements per warp iteration (16 bytes per lane)

struct Fragments {
  uint4 b[kNTiles];
};

template <bool kFp8>
__device__ __forceinline__ void mma_16x8x32(uint32_t (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                            uint32_t a3, uint32_t b0, uint32_t b1) {
  if constexpr (!kFp8) {
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  } else {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
    __trap();  // the dispatcher never picks fp8 below sm_89
#endif
  }
}

// 16 bytes at p when `valid`, else zeros (an absent row, column or K tail).
__device__ __forceinline__ uint4 load16(const uint8_t* p, bool valid) {
  return valid ? __ldg(reinterpret_cast<const uint4*>(p)) : make_uint4(0, 0, 0, 0);
}
__device__ __forceinline__ uint4 load16_streaming(const uint8_t* p, bool valid) {
  return valid ? __ldcs(reinterpret_cast<const uint4*>(p)) : make_uint4(0, 0, 0, 0);
}

// kMFrags 16-row fragments (M ≤ 16·kMFrags); kBatch chunks loaded before
// any is multiplied, so 16·kBatch·(4 + 2·kMFrags) bytes per lane are in flight.
template <int kMFrags, bool kFp8>
__global__ void __launch_bounds__(kThreads) skinny_gemm_kernel(const ScaledMmArgs args) {
  constexpr int kBatch = kMFrags == 1 ? 4 : kMFrags == 2 ? 2 : 1;
  using Acc = std::conditional_t<kFp8, float, int32_t>;
  __shared__ Acc partial[kWarps][16][kColumns + 1];

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * kColumns;
  const auto* a = static_cast<const uint8_t*>(args.a);
  const auto* b = static_cast<const uint8_t*>(args.b);

  // This lane's B columns and A rows (clamped pointers; `valid` masks loads).
  const uint8_t* b_col[kNTiles];
  bool col_ok[kNTiles];
#pragma unroll
  for (int j = 0; j < kNTiles; ++j) {
    const int64_t col = n0 + 8 * j + g;
    col_ok[j] = col < args.n;
    b_col[j] = b + (col_ok[j] ? col : 0) * args.ldb + 16 * t;
  }
  const uint8_t* a_row[kMFrags][2];
  bool row_ok[kMFrags][2];
#pragma unroll
  for (int f = 0; f < kMFrags; ++f) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t row = 16 * f + g + 8 * h;
      row_ok[f][h] = row < args.m;
      a_row[f][h] = a + (row_ok[f][h] ? row : 0) * args.lda + 16 * t;
    }
  }

  uint32_t acc[kMFrags][kNTiles][4] = {};
  const int64_t chunks = (args.k + kChunk - 1) / kChunk;
  for (int64_t first = warp; first < chunks; first += kWarps * kBatch) {
    uint4 bv[kBatch][kNTiles], av[kBatch][kMFrags][2];
#pragma unroll
    for (int s = 0; s < kBatch; ++s) {
      const int64_t k = (first + s * kWarps) * kChunk + 16 * t;
      const bool k_ok = k < args.k;  // K % 16 == 0: a lane's 16 bytes are all in or all out
      const int64_t offset = k_ok ? k - 16 * t : 0;
#pragma unroll
      for (int j = 0; j < kNTiles; ++j) bv[s][j] = load16_streaming(b_col[j] + offset, k_ok && col_ok[j]);
#pragma unroll
      for (int f = 0; f < kMFrags; ++f)
#pragma unroll
        for (int h = 0; h < 2; ++h) av[s][f][h] = load16(a_row[f][h] + offset, k_ok && row_ok[f][h]);
    }
#pragma unroll
    for (int s = 0; s < kBatch; ++s) {
#pragma unroll
      for (int f = 0; f < kMFrags; ++f) {
        const uint4 lo = av[s][f][0], hi = av[s][f][1];
#pragma unroll
        for (int j = 0; j < kNTiles; ++j) {
          auto& c = acc[f][j];
          if constexpr (kFp8) {
            auto& cf = reinterpret_cast<uint32_t(&)[4]>(c);
            mma_16x8x32<true>(cf, lo.x, hi.x, lo.y, hi.y, bv[s][j].x, bv[s][j].y);
            mma_16x8x32<true>(cf, lo.z, hi.z, lo.w, hi.w, bv[s][j].z, bv[s][j].w);
          } else {
            mma_16x8x32<false>(c, lo.x, hi.x, lo.y, hi.y, bv[s][j].x, bv[s][j].y);
            mma_16x8x32<false>(c, lo.z, hi.z, lo.w, hi.w, bv[s][j].z, bv[s][j].w);
          }
        }
      }
    }
  }

  // Per fragment: partial sums to shared memory (C layout: c0,c1 at row g,
  // columns 2t, 2t+1; c2,c3 at row g+8), a fixed-order sum over the warps,
  // then the epilogue, two outputs per thread.
#pragma unroll
  for (int f = 0; f < kMFrags; ++f) {
    if (16 * f >= args.m) break;
#pragma unroll
    for (int j = 0; j < kNTiles; ++j) {
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int row = g + 8 * (r / 2), col = 8 * j + 2 * t + r % 2;
        Acc value;
        if constexpr (kFp8) value = __uint_as_float(acc[f][j][r]);
        else value = static_cast<int32_t>(acc[f][j][r]);
        partial[warp][row][col] = value;
      }
    }
    __syncthreads();
    for (int idx = threadIdx.x; idx < 16 * kColumns; idx += kThreads) {
      const int row_in = idx / kColumns, col_in = idx % kColumns;
      const int64_t row = 16 * f + row_in, col = n0 + col_in;
      if (row >= args.m || col >= args.n) continue;
      Acc sum = partial[0][row_in][col_in];
#pragma unroll
      for (int w = 1; w < kWarps; ++w) {
        if constexpr (kFp8) sum = __fadd_rn(sum, partial[w][row_in][col_in]);
        else sum = static_cast<int32_t>(static_cast<uint32_t>(sum) + static_cast<uint32_t>(partial[w][row_in][col_in]));
      }
      float accumulator;
      if constexpr (kFp8) {
        accumulator = sum;
      } else {
        uint32_t corrected = static_cast<uint32_t>(sum);
        if (args.azp_adj != nullptr) {
          const uint32_t zero_point = static_cast<uint32_t>(args.azp ? args.azp[row] : 1);
          corrected -= zero_point * static_cast<uint32_t>(args.azp_adj[col]);
        }
        accumulator = static_cast<float>(static_cast<int32_t>(corrected));
      }
      const bool bf16 = args.out_dtype == DType::kBFloat16;
      const float sa = args.scale_a[args.scale_a_per_token ? row : 0];
      const float sb = args.scale_b[args.scale_b_per_channel ? col : 0];
      float bias = 0.0f;
      if (args.bias != nullptr) {
        const uint16_t bits = static_cast<const uint16_t*>(args.bias)[col];
        bias = bf16 ? numeric::bf16_bits_to_float(bits) : numeric::fp16_bits_to_float(bits);
      }
      const float value = dequant_epilogue(accumulator, sa, sb, bias, args.bias != nullptr);
      static_cast<uint16_t*>(args.out)[row * args.ldo + col] =
          bf16 ? numeric::float_to_bf16_bits(value) : numeric::float_to_fp16_bits(value);
    }
    __syncthreads();
  }
}

template <int kMFrags>
void launch(const ScaledMmArgs& args) {
  const dim3 grid(static_cast<unsigned>((args.n + kColumns - 1) / kColumns));
  const auto stream = as_cuda_stream(args.stream);
  if (args.input_dtype == DType::kInt8) {
    skinny_gemm_kernel<kMFrags, false><<<grid, kThreads, 0, stream>>>(args);
  } else {
    skinny_gemm_kernel<kMFrags, true><<<grid, kThreads, 0, stream>>>(args);
  }
  QGEMM_CUDA_CHECK(cudaGetLastError());
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

bool skinny_gemm(const ScaledMmArgs& args, int /*sm_count*/) {
  // 16-byte loads: K, the leading dimensions and the bases must be multiples
  // of 16 bytes (8-bit inputs, so 16 elements).
  if (args.m > 64 || args.k % 16 != 0 || args.lda % 16 != 0 || args.ldb % 16 != 0 ||
      !aligned16(args.a) || !aligned16(args.b)) {
    return false;
  }
  if (args.m <= 16) launch<1>(args);
  else if (args.m <= 32) launch<2>(args);
  else launch<4>(args);
  return true;
}

}  // namespace qgemm::detail
