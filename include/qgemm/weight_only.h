// qgemm/weight_only.h — weight-only quantized GEMM / GEMV (W8A16, W4A16):
// 16-bit activations times int8 or int4 weights dequantized on the fly
// (docs/weight_only.md has every formula, layout and edge case).
//
// Notation: a [M,K] activations (bf16 or fp16; M = tokens), q [N,K] the
// quantized weight, s and o [N, K/group_size] its scales and offsets (fp32,
// or 16-bit in T), T the activation dtype. For every output element:
//
//   g        = k / group_size                     (group_size == K: per channel)
//   s_T, o_T = round_T(s[n,g]), round_T(o[n,g])   (RNE; o = 0 without offsets)
//   ŵ[n,k]   = round_T( q[n,k]·s_T + o_T )        the exact value rounded ONCE
//   acc[m,n] = Σ_k float(a[m,k]) · float(ŵ[n,k])  (fp32; the products are exact)
//   out[m,n] = round_T( acc[m,n] + float(bias[n]) )
//
// ŵ is a 16-bit fused multiply-add (PTX fma.rn.bf16x2 / fma.rn.f16x2), the
// dequantization of every fast W4A16 kernel; scales and offsets are rounded
// to T first (lossless for fp16 GPTQ/AWQ scales with fp16 activations). They
// may be fp32 or already T: 16-bit parameters give exactly the result of fp32
// ones holding the same values and halve their bytes (with offsets, an int4
// weight's 12.5 % extra bytes at group 128 become 6.25 %; 50 % → 25 % at
// group 32). The CPU backend computes exactly
// the same ŵ; only the fp32 summation order differs between backends.
//
// Weight encodings (the "plain" layout, [N, ...] row-major, rows 16-byte
// aligned on CUDA):
//   int8  w dtype int8,  shape [N, K],   q = the signed byte (−128…127)
//   int4  w dtype uint8, shape [N, K/2], q = an UNSIGNED nibble (0…15):
//         element k of row n is in byte k/2, bits 0–3 when k is even and
//         bits 4–7 when k is odd (qgemm::pack_int4 / quantize_weight_int4).
//         A symmetric int4 code (−8…7) is expressed as offset = −8·scale.
// Or the prepacked layout written by weight_only_prepack (a rank-3 tensor).
//
// Shapes: out [M,N] row-major (stride(1) == 1, stride(0) >= N), dtype T;
// a [M,K] row-major, dtype T; K a multiple of 32; group_size 32, 64, 128
// (dividing K) or K; scales / offsets fp32 or T [N, K/group_size] row-major
// ([N] or [N,1] also accepted per channel), or group-major: a [K/group_size,
// N] row-major tensor viewed transposed (strides (1, ld), ld >= N), which the
// decode kernels read faster (up to 9 % at M <= 16 with group 128 on the
// H100: docs/weight_only.md, "Group-major scales and offsets"); offsets in
// the dtype, the layout and the group stride of scales; bias [N] of dtype T.
// All tensors on one device; CUDA work is enqueued on `stream` and the call
// returns without synchronizing. On the GPU, M <= 32 runs the decode kernel,
// which reads w, the scales / offsets and a through 32-bit byte offsets: a
// call where one of them spans more than 4 GiB is refused (kValue); larger
// M has its own limits (K <= 2^30, a group stride below 2^31).
#pragma once

#include <cstdint>
#include <optional>

#include "qgemm/tensor.h"

namespace qgemm {

// out = a · ŵᵀ + bias with ŵ dequantized on the fly (formula above).
void weight_only_mm(const TensorView& out, const TensorView& a, const TensorView& w,
                    const TensorView& scales, const std::optional<TensorView>& offsets,
                    int group_size, const std::optional<TensorView>& bias = std::nullopt,
                    Stream stream = nullptr);

// The same with a workspace: scratch memory the CUDA kernels may use to
// balance the tensor-core kernel's tiles over the SMs (stream-K: where the
// output tiles split unevenly over the CTAs that fit on the GPU, every CTA
// takes an equal share of the k loop and the split tiles' fp32 partial sums
// meet in the workspace; the result is deterministic, and equal to the call
// without a workspace up to the fp32 summation order). `workspace`: uint8,
// contiguous, 16-byte aligned, on out's device, at least
// weight_only_workspace_bytes(device) bytes; it needs no initialization
// and holds nothing between calls, but calls that run at the same time (on
// different streams) need workspaces of their own. The CPU backend ignores it.
void weight_only_mm(const TensorView& out, const TensorView& a, const TensorView& w,
                    const TensorView& scales, const std::optional<TensorView>& offsets,
                    int group_size, const std::optional<TensorView>& bias, const TensorView& workspace,
                    Stream stream = nullptr);

// Bytes of weight_only_mm's workspace on `device`: 128 KiB per SM and a
// flag word per CTA (17.3 MB on a 132-SM H100); 0 on the CPU.
int64_t weight_only_workspace_bytes(Device device);

// Bytes of a workspace that also opens the dense prefill path for an [N,K]
// weight: N·K 16-bit values (rounded up to 256 bytes), at least
// weight_only_workspace_bytes(device); 0 on the CPU. With a workspace this
// large, calls with many tokens (sm_90: M ≥ 4096 int4, ≥ 3072 int8; other
// sm_80+ GPUs: M ≥ 1024; src/wonly/cuda/wonly_dispatch.cu) dequantize the
// weight once into it, ŵ = round_T(q·s_T + o_T), and run a dense
// tensor-core GEMM on ŵ instead of dequantizing every weight tile once per
// token tile: the same values up to the fp32 summation order
// (docs/weight_only.md, "Dense prefill path"). Smaller workspaces, older
// GPUs and fewer tokens keep the fused kernels.
int64_t weight_only_dense_workspace_bytes(Device device, int64_t n, int64_t k);

// Bytes of one 16-byte weight chunk: 32 int4 or 16 int8 elements along K.
constexpr int64_t kWeightOnlyChunkBytes = 16;
// The prepacked layout groups the weight into tiles of 16 rows × 64 bytes
// (4 chunks of 16 bytes = 128 int4 / 64 int8 elements along K), row-major
// inside the tile, tiles ordered [row block][K tile]:
//   w_prepacked [ceil(N/16), ceil(K/kc), 1024]   kc = 128 (int4) or 64 (int8)
//   plain byte j of row n  →  ((n/16)·ceil(K/kc) + j/64)·1024 + (n%16)·64 + j%64
// Padding rows and the tail of a partial K tile are zero. Each warp of the
// small-M kernel then reads its 16 rows × 64 bytes as two contiguous
// 512-byte runs.
//
// Reorders a plain weight (int8 [N,K] or packed int4 uint8 [N,K/2]) into that
// layout; out has w's dtype and the shape above. CPU or CUDA (w and out on
// one device). Values are moved, never changed: weight_only_mm gives the same
// result for the plain and the prepacked weight.
void weight_only_prepack(const TensorView& out, const TensorView& w, Stream stream = nullptr);

// Shape [rows, cols, 1024] of weight_only_prepack's output for an [N,K] weight.
struct PrepackedShape {
  int64_t row_blocks = 0, k_tiles = 0, tile_bytes = 1024;
};
PrepackedShape weight_only_prepacked_shape(int64_t n, int64_t k, bool int4);

}  // namespace qgemm
