// fused_ops.cuh — the per-op parts of the fused row kernel
// (fused_row_kernel.cuh): how a chunk of kVec consecutive columns of one row
// is computed from the inputs (prologue) and normalized. Every formula is a
// call into fused/fused_math.h, the code the CPU twin runs, except the
// activations' e^x and 1/x, which come from the SFU (fused_fast_math.cuh).
//
//   op               prologue v                              stats   normalize
//   RmsOp            x                                       Σv²     v·inv_rms·w
//   AddRmsOp         residual ← round(residual + x)          Σv²     v·inv_rms·w
//   LayerNormOp      x + bias + residual                     Σv, Σ(v−μ)²  (v−μ)·inv·γ + β
//   LayerNormInt32Op fma(sa, sw·acc, bias) + rs·residual_q   Σv, Σ(v−μ)²  (v−μ)·inv·γ + β
//   SiluMulOp        silu(gate)·up                           —       —
//   GeluOp           gelu(x + bias)                          —       —
//   GeluInt32Op      gelu(fma(sa, sw·acc, bias))             —       —
#pragma once

#include "fused/cuda/fused_access.cuh"
#include "fused/cuda/fused_fast_math.cuh"
#include "fused/fused_args.h"
#include "fused/fused_math.h"

namespace qgemm::detail::fused {

enum class RowStats { kNone, kRms, kMeanVar };

// Each op names the register cap of its row kernel (fused_row_kernel.cuh,
// kMinBlocksPerSm): how many 512-thread blocks per SM the allocation must
// allow with two and with four items per thread (1: ptxas's choice).

// The per-row normalization constants.
struct RowNorm {
  float mean = 0.0f;
  float inv = 1.0f;
};

// Per-hidden fp32 parameters p[col … col+N) of dtype kDtype (zero if absent).
template <DType kDtype, int N>
__device__ __forceinline__ void load_params(const void* p, int64_t col, float (&out)[N]) {
  if (p == nullptr) {
#pragma unroll
    for (int j = 0; j < N; ++j) out[j] = 0.0f;
    return;
  }
  load_floats<kDtype, N>(p, col, out);
}

// v = x[row, col … col+N) + bias[col …] (x alone without a bias): the
// first step of LayerNormOp's and GeluOp's prologues.
template <DType kX, int N>
__device__ __forceinline__ void load_x_plus_bias(const FusedArgs& a, int64_t row, int64_t col, float (&v)[N]) {
  load_floats<kX, N>(a.x, row * a.ldx + col, v);
  if (a.bias != nullptr) {
    float bias[N];
    load_floats<kX, N>(a.bias, col, bias);
#pragma unroll
    for (int j = 0; j < N; ++j) v[j] = f_add(v[j], bias[j]);
  }
}

// Dequantized int32 GEMM output: fma(scale_a[row], scale_w[col]·acc, bias[col]).
template <DType kParam, int N>
__device__ __forceinline__ void dequant_int32_chunk(const FusedArgs& a, int64_t row, int64_t col,
                                                    float (&v)[N]) {
  const auto acc = load_pack<int32_t, N>(static_cast<const int32_t*>(a.x) + row * a.ldx + col);
  const float sa = a.scale_a[a.scale_a_per_token ? row : 0];
  float sw[N], bias[N];
  if (a.scale_w_per_channel) {
    load_floats<DType::kFloat32, N>(a.scale_w, col, sw);
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) sw[j] = a.scale_w[0];
  }
  load_params<kParam, N>(a.bias, col, bias);
  const bool has_bias = a.bias != nullptr;
#pragma unroll
  for (int j = 0; j < N; ++j) v[j] = dequant_acc(acc.v[j], sa, sw[j], bias[j], has_bias);
}

// RMSNorm without (kResidual = false) or with the residual add: two
// instantiations, because the plain form fits in fewer registers
// (fused_row_kernel.cuh, kMinBlocksPerSm).
template <DType kX, bool kResidual>
struct RmsOpT {
  static constexpr RowStats kStats = RowStats::kRms;
  static constexpr int kMinBlocksTwoItems = kResidual ? 1 : 4, kMinBlocksFourItems = 2;
  static constexpr bool kCodeByWarp0 = false;
  // `first`: the first pass over this chunk. Later passes (the streaming
  // kernel for very long rows) read the residual already stored.
  template <int N>
  __device__ static void prologue(const FusedArgs& a, int64_t row, int64_t col, float (&v)[N],
                                  bool first) {
    using E = Elem<kX>;
    if constexpr (!kResidual) return load_floats<kX, N>(a.x, row * a.ldx + col, v);
    auto* residual = static_cast<typename E::T*>(a.residual) + row * a.ld_residual + col;
    const auto stored = load_pack<typename E::T, N>(residual);
    if (!first) {
#pragma unroll
      for (int j = 0; j < N; ++j) v[j] = E::to_float(stored.v[j]);
      return;
    }
    float x[N];
    load_floats<kX, N>(a.x, row * a.ldx + col, x);
    Pack<typename E::T, N> updated;
#pragma unroll
    for (int j = 0; j < N; ++j) {
      updated.v[j] = E::from_float(f_add(E::to_float(stored.v[j]), x[j]));
      v[j] = E::to_float(updated.v[j]);
    }
    store_pack(residual, updated);
  }
  template <int N>
  struct NormParams {
    FloatPack<kX, N> w;
  };
  template <int N>
  __device__ static NormParams<N> load_norm_params(const FusedArgs& a, int64_t col) {
    return {load_float_pack<kX, N>(a.weight, col)};
  }
  template <int N>
  __device__ static void normalize(float (&v)[N], const RowNorm& norm, const NormParams<N>& p) {
    float w[N];
    widen<kX, N>(p.w, w);
#pragma unroll
    for (int j = 0; j < N; ++j) v[j] = rms_normalize(v[j], norm.inv, w[j]);
  }
};

template <DType kX>
using RmsOp = RmsOpT<kX, false>;
template <DType kX>
using AddRmsOp = RmsOpT<kX, true>;

// The LayerNorm normalization shared by the float and int32 forms.
template <DType kParam>
struct LayerNormBase {
  static constexpr RowStats kStats = RowStats::kMeanVar;
  static constexpr int kMinBlocksTwoItems = 1, kMinBlocksFourItems = 2;
  static constexpr bool kCodeByWarp0 = false;
  template <int N>
  struct NormParams {
    FloatPack<kParam, N> gamma, beta;
  };
  template <int N>
  __device__ static NormParams<N> load_norm_params(const FusedArgs& a, int64_t col) {
    return {load_float_pack<kParam, N>(a.weight, col), load_float_pack<kParam, N>(a.beta, col)};
  }
  template <int N>
  __device__ static void normalize(float (&v)[N], const RowNorm& norm, const NormParams<N>& p) {
    float gamma[N], beta[N];
    widen<kParam, N>(p.gamma, gamma);
    widen<kParam, N>(p.beta, beta);
#pragma unroll
    for (int j = 0; j < N; ++j) v[j] = layer_normalize(v[j], norm.mean, norm.inv, gamma[j], beta[j]);
  }
};

// kMergedStatsItems: the items per thread up to which the mean and variance
// take one merge tree (block_merge, fused_row_kernel.cuh) instead of two sum
// trees: a barrier round trip less per row, ~15 ALU instructions more per
// thread. H100, same call A B A B, merge tree against two trees
// (bench/results/fused-h100-layernorm-merge-ab.json): the int32 form 0.5–3 %
// faster at most shapes (6 % at 256×8192 static; within ±0.5 % at the
// others), the float form 3 % faster with one item (16 and 256 tokens at
// N = 4096) but 2–7 % slower with two (N = 8192 below 4096 tokens, every N
// from 4096 tokens on), so the float form merges one-item rows only; the
// int32 form ran two and four items there and merges up to four.
template <DType kX>
struct LayerNormOp : LayerNormBase<kX> {
  static constexpr int kMinBlocksTwoItems = 3;
  static constexpr int kMergedStatsItems = 1;
  template <int N>
  __device__ static void prologue(const FusedArgs& a, int64_t row, int64_t col, float (&v)[N], bool) {
    load_x_plus_bias<kX, N>(a, row, col, v);
    if (a.residual != nullptr) {
      float residual[N];
      load_floats<kX, N>(a.residual, row * a.ld_residual + col, residual);
#pragma unroll
      for (int j = 0; j < N; ++j) v[j] = f_add(v[j], residual[j]);
    }
  }
};

template <DType kParam>
struct LayerNormInt32Op : LayerNormBase<kParam> {
  static constexpr int kMergedStatsItems = 4;  // as measured (above); eight items keep two trees
  template <int N>
  __device__ static void prologue(const FusedArgs& a, int64_t row, int64_t col, float (&v)[N], bool) {
    dequant_int32_chunk<kParam, N>(a, row, col, v);
    const auto rq = load_pack<int8_t, N>(static_cast<const int8_t*>(a.residual) + row * a.ld_residual + col);
    const float rs = a.residual_scale[a.residual_scale_per_token ? row : 0];
#pragma unroll
    for (int j = 0; j < N; ++j) v[j] = f_add(v[j], dequant_residual(rq.v[j], rs));
  }
};

// Elementwise ops: no statistics, nothing to normalize.
struct ElementwiseBase {
  static constexpr RowStats kStats = RowStats::kNone;
  static constexpr int kMinBlocksTwoItems = 4, kMinBlocksFourItems = 2;
  // Who computes a dynamic row's code (fused_row_kernel.cuh,
  // dynamic_code_in_registers): every warp, or warp 0 for the block.
  static constexpr bool kCodeByWarp0 = false;
  template <int N>
  struct NormParams {};
  template <int N>
  __device__ static NormParams<N> load_norm_params(const FusedArgs&, int64_t) {
    return {};
  }
  template <int N>
  __device__ static void normalize(float (&)[N], const RowNorm&, const NormParams<N>&) {}
};

template <DType kX>
struct SiluMulOp : ElementwiseBase {
  template <int N>
  __device__ static void prologue(const FusedArgs& a, int64_t row, int64_t col, float (&v)[N], bool) {
    float gate[N], up[N];
    load_floats<kX, N>(a.x, row * a.ldx + col, gate);
    load_floats<kX, N>(a.x, row * a.ldx + a.hidden + col, up);
#pragma unroll
    for (int j = 0; j < N; ++j) v[j] = silu_fast(gate[j]) * up[j];
  }
};

// One uniform branch per chunk for the GELU form, not one per element.
template <int N>
__device__ __forceinline__ void apply_gelu(bool tanh_form, float (&v)[N]) {
  if (tanh_form) {
#pragma unroll
    for (int j = 0; j < N; ++j) v[j] = gelu_tanh_fast(v[j]);
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) v[j] = gelu_erf_fast(v[j]);
  }
}

// GELU from 16-bit input: warp 0 computes the row's code (kCodeByWarp0; the
// erf form is issue-bound, and the code's ~30 instructions per warp are ~2
// per element). H100, same call, every warp → warp 0: dynamic int8 erf at
// 16384×4096 85.1 → 83.3 µs, 16384×8192 173.6 → 170.4 µs, tanh (static)
// unchanged; the int32 form was 1–2 % slower with it, so GeluInt32Op keeps
// every warp computing it.
template <DType kX>
struct GeluOp : ElementwiseBase {
  static constexpr bool kCodeByWarp0 = true;
  template <int N>
  __device__ static void prologue(const FusedArgs& a, int64_t row, int64_t col, float (&v)[N], bool) {
    load_x_plus_bias<kX, N>(a, row, col, v);
    apply_gelu(a.gelu_tanh, v);
  }
};

template <DType kParam>
struct GeluInt32Op : ElementwiseBase {
  static constexpr int kMinBlocksFourItems = 3;
  template <int N>
  __device__ static void prologue(const FusedArgs& a, int64_t row, int64_t col, float (&v)[N], bool) {
    dequant_int32_chunk<kParam, N>(a, row, col, v);
    apply_gelu(a.gelu_tanh, v);
  }
};

}  // namespace qgemm::detail::fused
