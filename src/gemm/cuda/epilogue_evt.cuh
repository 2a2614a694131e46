// epilogue_evt.cuh — the dequantization epilogue of the CUTLASS kernels as
// one small tree of visitor nodes, and the elementwise functors it uses.
//
// The tree computes exactly the scalar expression of gemm/epilogue_math.h:
//
//   corrected = acc − azp[m]·azp_adj[n]          int32, wrap-around (int8 only)
//   t         = __fmul_rn(scale_b[n], float(corrected))
//   D         = __fmaf_rn(scale_a[m], t, bias[n])  → output dtype, round to nearest even
//
// One tree serves all four epilogues of docs/gemm.md; what differs is data:
//   scale_a    column broadcast; stride 0 reads scale_a[0] (per-tensor), 1 per token
//   scale_b    row broadcast;    stride 0 reads scale_b[0] (per-tensor), 1 per channel
//   bias       row broadcast; a null pointer reads 0, and fma(a, t, 0) == a·t
//   azp        column broadcast; null reads 1 (per-tensor zero point folded in azp_adj)
//   azp_adj    row broadcast; null reads 0 (symmetric: the correction vanishes)
// so an absent bias or zero point is a null pointer, never another kernel.
#pragma once

#include <cstdint>

#include "cutlass/array.h"
#include "cutlass/cutlass.h"

namespace qgemm::detail::evt {

// Functors for Sm90Compute / VisitorCompute: each is called on fragments
// (cutlass::Array) of the compute type; the scalar specialisation exists only
// because the node inspects Fn<ElementCompute> for optional arguments.

// corrected = acc − azp·azp_adj in int32 with two's-complement wrap-around
// (computed in uint32, where overflow is defined).
template <class T>
struct AzpCorrect {
  CUTLASS_HOST_DEVICE T operator()(T acc, T azp, T azp_adj) const {
    return static_cast<T>(static_cast<uint32_t>(acc) -
                          static_cast<uint32_t>(azp) * static_cast<uint32_t>(azp_adj));
  }
};
template <class T, int N>
struct AzpCorrect<cutlass::Array<T, N>> {
  CUTLASS_HOST_DEVICE cutlass::Array<T, N> operator()(cutlass::Array<T, N> const& acc,
                                                      cutlass::Array<T, N> const& azp,
                                                      cutlass::Array<T, N> const& azp_adj) const {
    cutlass::Array<T, N> out;
    AzpCorrect<T> op;
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < N; ++i) out[i] = op(acc[i], azp[i], azp_adj[i]);
    return out;
  }
};

// t = scale_b · x, one rounding (never contracted into a later fma).
template <class T>
struct RoundedMultiply {
  CUTLASS_HOST_DEVICE T operator()(T scale, T x) const {
#if defined(__CUDA_ARCH__)
    return __fmul_rn(scale, x);
#else
    return scale * x;
#endif
  }
};
template <class T, int N>
struct RoundedMultiply<cutlass::Array<T, N>> {
  CUTLASS_HOST_DEVICE cutlass::Array<T, N> operator()(cutlass::Array<T, N> const& scale,
                                                      cutlass::Array<T, N> const& x) const {
    cutlass::Array<T, N> out;
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < N; ++i) out[i] = RoundedMultiply<T>{}(scale[i], x[i]);
    return out;
  }
};

// D = fma(scale_a, t, bias), a single rounding.
template <class T>
struct FusedMultiplyAdd {
  CUTLASS_HOST_DEVICE T operator()(T scale, T t, T bias) const {
#if defined(__CUDA_ARCH__)
    return __fmaf_rn(scale, t, bias);
#else
    return __builtin_fmaf(scale, t, bias);
#endif
  }
};
template <class T, int N>
struct FusedMultiplyAdd<cutlass::Array<T, N>> {
  CUTLASS_HOST_DEVICE cutlass::Array<T, N> operator()(cutlass::Array<T, N> const& scale,
                                                      cutlass::Array<T, N> const& t,
                                                      cutlass::Array<T, N> const& bias) const {
    cutlass::Array<T, N> out;
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < N; ++i) out[i] = FusedMultiplyAdd<T>{}(scale[i], t[i], bias[i]);
    return out;
  }
};

}  // namespace qgemm::detail::evt
