// skinny_common.cuh — what the two skinny (M ≤ 64) kernels share: the
// m16n8k32 MMA on 8-bit inputs (and, for fp8 on sm_90, its f16 form with
// the operands converted once), the placement of a warp's accumulators in
// the CTA's partial-sum tile, and the epilogue that adds the warps' partial
// sums in a fixed order and stores the dequantized outputs.
//   skinny_gemm.cu         — register ring of 16-byte loads, sm_80+
//   skinny_stream_sm90.cu  — shared-memory stages filled by bulk copies, sm_90
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "core/numeric.h"
#include "gemm/epilogue_math.h"
#include "gemm/scaled_mm_args.h"

namespace qgemm::detail::skinny {

template <bool kFp8>
__device__ __forceinline__ void mma_16x8x32(uint32_t (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2,
                                            uint32_t a3, uint32_t b0, uint32_t b1) {
  if constexpr (!kFp8) {
    asm(
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  } else {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    asm(
        "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#else
    __trap();  // the dispatcher never picks fp8 below sm_89
#endif
  }
}

// fp8 on sm_90, whose mma.sync has no e4m3 form: ptxas lowers every e4m3
// m16n8k32 to conversions of both operands into f16 and two f16 MMAs, so an
// operand word feeding two MMAs is converted twice. These convert a lane's
// 16 bytes of one row once (e4m3 ⊂ f16: exact), h[i] = elements 2i, 2i + 1,
// for mma_16x8x16_f16: MMA step i takes the k slots {2t, 2t+1} from h[2i]
// and {2t+8, 2t+9} from h[2i+1] of every operand, i.e. elements 4i…4i+3 of
// the lane's 16 — the same k on both sides (any k order sums the same
// products; only the fp32 addition order differs from the e4m3 MMA's).
__device__ __forceinline__ void e4m3x16_to_f16x2(uint4 v, uint32_t (&h)[8]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  const uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int w = 0; w < 4; ++w) {
    asm("{\n .reg .b16 lo, hi;\n mov.b32 {lo, hi}, %2;\n cvt.rn.f16x2.e4m3x2 %0, lo;\n cvt.rn.f16x2.e4m3x2 %1, hi;\n}\n"
        : "=r"(h[2 * w]), "=r"(h[2 * w + 1])
        : "r"(words[w]));
  }
#else
  (void)v, (void)h;
  __trap();  // the dispatcher never picks fp8 below sm_89
#endif
}

__device__ __forceinline__ void mma_16x8x16_f16(uint32_t (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                                uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// The accumulator type: exact int32 sums for int8, fp32 for fp8.
template <bool kFp8>
using Acc = std::conditional_t<kFp8, float, int32_t>;

// One 16×8 MMA tile of accumulators (C layout: c0, c1 at MMA row g, columns
// 2t, 2t+1; c2, c3 at row g + 8) into this warp's partial-sum tile, whose
// rows are tokens and columns output columns: plain, the MMA's rows are
// tokens (row0 = 16·fragment − the pass's first token), its columns output
// columns; transposed (kTransposed), the MMA's rows are output columns.
template <bool kFp8, bool kTransposed, int kRows, int kPitch>
__device__ __forceinline__ void put_partials(Acc<kFp8> (&partial)[kRows][kPitch], const uint32_t (&acc)[4],
                                             int mma_row0, int mma_col0, int lane) {
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const int mma_row = mma_row0 + g + 8 * (r / 2), mma_col = mma_col0 + 2 * t + r % 2;
    Acc<kFp8> value;
    if constexpr (kFp8) value = __uint_as_float(acc[r]);
    else value = static_cast<int32_t>(acc[r]);
    if constexpr (kTransposed) partial[mma_col][mma_row] = value;
    else partial[mma_row][mma_col] = value;
  }
}

// The sum over the kWarps partial-sum tiles of (row_in, col_in), in warp
// order (deterministic; int8 exactly, with wrap-around as the MMA's own sums).
template <bool kFp8, int kWarps, int kRows, int kPitch>
__device__ __forceinline__ Acc<kFp8> sum_partials(const Acc<kFp8> (&partial)[kWarps][kRows][kPitch], int row_in,
                                                  int col_in) {
  Acc<kFp8> sum = partial[0][row_in][col_in];
#pragma unroll
  for (int w = 1; w < kWarps; ++w) {
    if constexpr (kFp8) sum = __fadd_rn(sum, partial[w][row_in][col_in]);
    else sum = static_cast<int32_t>(static_cast<uint32_t>(sum) + static_cast<uint32_t>(partial[w][row_in][col_in]));
  }
  return sum;
}

// The epilogue's per-column operands of one output column.
struct ColumnOperands {
  float scale_b = 0.0f;
  float bias = 0.0f;
  uint32_t azp_adj = 0;
};

__device__ __forceinline__ ColumnOperands load_column_operands(const ScaledMmArgs& args, int64_t col) {
  ColumnOperands c;
  c.scale_b = args.scale_b[args.scale_b_per_channel ? col : 0];
  if (args.bias != nullptr) {
    const uint16_t bits = static_cast<const uint16_t*>(args.bias)[col];
    c.bias = args.out_dtype == DType::kBFloat16 ? numeric::bf16_bits_to_float(bits) : numeric::fp16_bits_to_float(bits);
  }
  if (args.azp_adj != nullptr) c.azp_adj = static_cast<uint32_t>(args.azp_adj[col]);
  return c;
}

// Output (row, col) from its accumulator sum: the zero-point term
// subtracted, then the epilogue of gemm/epilogue_math.h, stored.
template <bool kFp8>
__device__ __forceinline__ void store_output(const ScaledMmArgs& args, Acc<kFp8> sum, int64_t row, int64_t col,
                                             const ColumnOperands& column) {
  float accumulator;
  if constexpr (kFp8) {
    accumulator = sum;
  } else {
    uint32_t corrected = static_cast<uint32_t>(sum);
    if (args.azp_adj != nullptr) {
      const uint32_t zero_point = static_cast<uint32_t>(args.azp ? args.azp[row] : 1);
      corrected -= zero_point * column.azp_adj;
    }
    accumulator = static_cast<float>(static_cast<int32_t>(corrected));
  }
  const float sa = args.scale_a[args.scale_a_per_token ? row : 0];
  const float value = dequant_epilogue(accumulator, sa, column.scale_b, column.bias, args.bias != nullptr);
  static_cast<uint16_t*>(args.out)[row * args.ldo + col] = args.out_dtype == DType::kBFloat16
                                                               ? numeric::float_to_bf16_bits(value)
                                                               : numeric::float_to_fp16_bits(value);
}

// Thread `thread` of `threads`: the outputs of tokens token0 + [0, kRows) ×
// columns n0 + [0, kColumns) inside M × N from the kWarps partial-sum tiles.
template <bool kFp8, int kWarps, int kRows, int kColumns>
__device__ __forceinline__ void store_partial_sums(const ScaledMmArgs& args,
                                                   const Acc<kFp8> (&partial)[kWarps][kRows][kColumns + 1],
                                                   int64_t token0, int64_t n0, int thread, int threads) {
  for (int idx = thread; idx < kRows * kColumns; idx += threads) {
    const int row_in = idx / kColumns, col_in = idx % kColumns;
    const int64_t row = token0 + row_in, col = n0 + col_in;
    if (row >= args.m || col >= args.n) continue;
    store_output<kFp8>(args, sum_partials<kFp8>(partial, row_in, col_in), row, col, load_column_operands(args, col));
  }
}

}  // namespace qgemm::detail::skinny
