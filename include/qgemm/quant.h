// qgemm/quant.h — quantization and dequantization of activations and
// weights (docs/quantization.md has every formula and edge case).
//
// Activations x [T,H] (fp32 / fp16 / bf16, row-major, row stride >= H) are
// quantized into q [T,H] (int8 or fp8 e4m3) with scales s (and, for asymmetric
// int8, int32 zero points z) so that x ≈ s·(q − z):
//
//   static per-tensor   s, z given (one each)          q = sat(rne(x · (1/s)) + z)
//   dynamic per-token   s[t] = amax(|x[t,:]|) / qmax   q = sat(rne(x · (1/s[t])))
//                       asymmetric: s[t] = (hi − lo) / 255 with lo = min(0, min x),
//                       hi = max(0, max x), z[t] = rne(−128 − lo · (1/s[t]))
//   dynamic per-group   the same per group of `group_size` (32, 64, 128)
//                       consecutive elements of a row; s, z are [T, H/group]
//                       in row-major (stride (G,1)) or column-major
//                       (stride (1,T)) layout, as their views say.
//
// 1/s is one IEEE fp32 division per row/group; rne = round half to even;
// sat = clamp to [qmin, qmax] (int8: −128, or −127 with narrow_range, to 127,
// the sum with z exact; fp8: ±448, saturating). Non-finite inputs are left out
// of amax / lo / hi; ±Inf saturates; NaN becomes z (int8) or 0x7f (fp8). A
// scale that would be 0 (an all-zero row) is stored as 1 (outputs 0 or z), a
// subnormal one as 2^-126. CPU and CUDA results are bit-identical.
#pragma once

#include <cstdint>
#include <optional>

#include "qgemm/tensor.h"

namespace qgemm {

enum class QuantMode : uint8_t {
  kStaticPerTensor,   // scale (and zero point) are inputs with one element
  kDynamicPerToken,   // scale (and zero point) are outputs, one per row
  kDynamicPerGroup,   // scale (and zero point) are outputs, one per row × group
};

struct QuantOptions {
  QuantMode mode = QuantMode::kDynamicPerToken;
  // Dynamic modes: symmetric (no zero point) or asymmetric (int8 only; azp
  // is written). Static mode: asymmetric exactly when azp is given.
  bool symmetric = true;
  // int8 symmetric range ±127 (FasterTransformer) instead of −128…127.
  bool narrow_range = false;
  // kDynamicPerGroup: 32, 64 or 128, dividing H.
  int group_size = 128;
};

// q = quantize(x). `scale` and `azp` are inputs (static) or outputs (dynamic);
// shapes: static [1]; per-token [T] or [T,1]; per-group [T, H/group_size].
void quantize(const TensorView& out, const TensorView& scale, const std::optional<TensorView>& azp,
              const TensorView& in, const QuantOptions& options, Stream stream = nullptr);

// x̂ = s·(q − z) into fp32 / fp16 / bf16, for every mode above (the scale
// and zero point are inputs here; `options.mode` says their granularity).
void dequantize(const TensorView& out, const TensorView& in, const TensorView& scale,
                const std::optional<TensorView>& azp, const QuantOptions& options,
                Stream stream = nullptr);

// Symmetric weight quantization (int8 or fp8 e4m3), per output channel
// (group_size == 0) or per group of `group_size` along K: for w [N,K]
// (fp32 / fp16 / bf16, row-major), s = amax / qmax over the channel or group
// and q = sat(rne(w · (1/s))), the formulas of `quantize` in its dynamic
// symmetric modes. scale is fp32 [N] (or [N,1]) per channel, [N, K/group_size]
// per group (row- or column-major). narrow_range (int8): codes in ±127, so
// that w and −w quantize to opposite codes (the usual weight convention).
// Viewed transposed, TensorView::strided(out.data(), dtype, {K, N}, {1, K}),
// out is the `b` operand of scaled_mm; azp_adj (qgemm/gemm.h) then gives the
// column sums scaled_mm_azp needs. CPU or CUDA, like quantize.
void quantize_weight(const TensorView& out, const TensorView& scale, const TensorView& w, int group_size = 0,
                     bool narrow_range = true, Stream stream = nullptr);

// Asymmetric 4-bit weight quantization (the W4A16 format, docs/quantization.md):
// for each row n of w [N,K] and each group of `group_size` along K
// (group_size == K: per channel), offset = min, scale = (max − min) / 15
// (over the group with 0 included), q = clamp(rne((w − offset) / scale), 0, 15),
// so that w ≈ q·scale + offset. q is written packed: out [N, K/2] uint8,
// element k in the low nibble of byte k/2 when k is even, the high nibble
// when odd. scale and offset are fp32 [N, K/group_size], each row-major or
// group-major (a [K/group_size, N] row-major tensor viewed transposed,
// strides (1, ld >= N): the layout weight_only_mm reads fastest). CPU only
// (offline).
void quantize_weight_int4(const TensorView& out_packed, const TensorView& scale,
                          const TensorView& offset, const TensorView& w, int group_size);

// Packs unsigned 4-bit values (uint8 [N,K], each 0…15) two per byte as above,
// and back. CPU only (offline weight preparation).
void pack_int4(const TensorView& out_packed, const TensorView& values);
void unpack_int4(const TensorView& out_values, const TensorView& packed);

// GPTQ and AWQ int4 checkpoints (docs/weight_only.md, "GPTQ and AWQ
// checkpoints"). Both store one linear layer as 4-bit codes q (0…15) eight to
// an int32 word (nibble i = bits 4i…4i+3), 4-bit zero points z per group and
// output channel, and scales s [K/group, N], with
//   w[n, k] = (q[n, k] − z[g, n]) · s[g, n],   g = k / group_size,
// which is weight_only_mm's ŵ = round_T(q·s_T + o_T) with o = −z·s. These
// write the codes as the plain int4 weight (out_w uint8 [N, K/2], as
// pack_int4) and the offsets o (out_offsets [N, K/group], fp32: exact; fp16 /
// bf16: −z·s rounded once). The checkpoint's scales are used as they are,
// viewed transposed — a row-major [K/group, N] tensor viewed as [N, K/group]
// with strides (1, N) is the group-major layout weight_only_mm reads fastest:
//   TensorView::strided(scales.data(), scales.dtype(), {N, G}, {1, N})
// and weight_only_mm wants the offsets in the scales' layout, so pass
// out_offsets group-major the same way (a row-major one is written too, for
// scales re-laid row-major).
// (weight_only_mm takes scales and offsets in one dtype: with fp32 offsets,
// widen the scales to fp32 as well.) The group count G is scales.size(0);
// group_size = K / G.
//
// GPTQ (AutoGPTQ, GPTQModel): qweight int32 [K/8, N] packed along K (nibble
// i of word [r, n]: q[n, 8r + i]); qzeros int32 [K/group, N/8] packed along N
// (nibble i of word [g, c]: column 8c + i) holding z − zero_offset: 1 for
// "gptq" (v1) checkpoints, which store z − 1, 0 for "gptq_v2". g_idx (int32
// or int64 [K]), when given, must be k / group_size: act-order (desc_act)
// checkpoints permute the groups over K, which contiguous groups cannot
// express, and are refused.
void int4_from_gptq(const TensorView& out_w, const TensorView& out_offsets, const TensorView& qweight,
                    const TensorView& qzeros, const TensorView& scales,
                    const std::optional<TensorView>& g_idx = std::nullopt, int zero_offset = 1);

// AWQ (AutoAWQ "gemm" packing): qweight int32 [K, N/8] and qzeros int32
// [K/group, N/8], both packed along N in AWQ's order: nibble i of word c holds
// column 8c + kAwqOrder[i]. CPU only, as int4_from_gptq.
constexpr int kAwqOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};
void int4_from_awq(const TensorView& out_w, const TensorView& out_offsets, const TensorView& qweight,
                   const TensorView& qzeros, const TensorView& scales);

}  // namespace qgemm
