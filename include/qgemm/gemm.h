// qgemm/gemm.h — scaled GEMMs with fused dequantization epilogues (W8A8).
//
// Notation (docs/gemm.md): Â [M,K] and B̂ [K,N] are the quantized operands,
// s_a the activation scale (per-tensor or per-token), s_b the weight scale
// (per-tensor or per-channel), z_a the activation zero point, C the bias.
//
//   D = s_a · s_b · (Â·B̂ − z_a·J·B̂) + C
//
// Layouts (the same as vLLM's, so engines can switch):
//   a       [M,K] row-major (stride(1) == 1, stride(0) >= K), int8 or fp8 e4m3
//   b       [K,N] column-major (stride(0) == 1, stride(1) >= K), same dtype as a;
//           i.e. a weight stored [N,K] row-major, viewed transposed
//   scale_a fp32, 1 or M elements; shapes [1], [1,1], [M], [M,1]
//   scale_b fp32, 1 or N elements; shapes [1], [1,1], [N], [1,N]
//   bias    [N], the output dtype
//   out     [M,N] row-major (stride(1) == 1, stride(0) >= N), bf16 or fp16
//           (fp32 as well on the CPU)
// All tensors live on one device; CUDA work is enqueued on `stream` and the
// call returns without synchronizing.
#pragma once

#include <cstdint>
#include <optional>

#include "qgemm/tensor.h"

namespace qgemm {

// How an fp8 scaled_mm may accumulate A·B on the GPU (docs/gemm.md, "fp8 fast
// accumulation").
//   kPrecise  the default: partial sums of the fp8 tensor-core instructions
//             are promoted into fp32 registers every 128 elements of K.
//   kFast     opt-in: the tensor core keeps accumulating over the whole K
//             (CUTLASS's FP8FastAccum schedules, PyTorch's
//             _scaled_mm(use_fast_accum=True)). On Hopper the tensor core
//             adds each group of 32 products to the running sum keeping 13
//             fraction bits (truncated), so the error grows with K: at most
//             34·2^-13 · ceil(K/32) · Σ_k|a_k·b_k| (worst case, before the
//             scales); in exchange fp8 runs on the int8 tiles, near int8
//             speed: on the H100 1.05–1.1× faster than kPrecise at M > 256,
//             about the same below (docs/performance.md).
// Fast accumulation is a rounding mode of the GPU's tensor cores, not a
// different formula: the CPU backend computes the exact fp32-accumulated
// result for either value, and so does every GPU kernel that has no faster
// fp8 variant (the skinny kernel of most M ≤ 16 on sm_90a, every fp8 kernel
// off Hopper), and the precise kernel wherever the dispatch table measured
// it faster than every fast one (sm_90a: M = 65–96 with N ≥ 6144, M =
// 193–256 with N < 6144). kFast permits the faster
// mode; it never makes a call slower. For int8
// inputs the value is ignored: the int32 accumulation is exact, which meets
// either request.
enum class Fp8Accumulation : uint8_t { kPrecise = 0, kFast = 1 };

// D = scale_a · scale_b · (A·B) + bias.
// Accumulation is int32 for int8 (exact) and fp32 for fp8 (see
// Fp8Accumulation); the epilogue is fp32 and rounds to nearest-even into the
// output dtype. An fp8_accumulation outside the enum throws ErrorKind::kValue.
void scaled_mm(const TensorView& out, const TensorView& a, const TensorView& b,
               const TensorView& scale_a, const TensorView& scale_b,
               const std::optional<TensorView>& bias = std::nullopt, Stream stream = nullptr,
               Fp8Accumulation fp8_accumulation = Fp8Accumulation::kPrecise);

// The same with a workspace: scratch memory that lets the Hopper kernels
// balance a problem's output tiles over the SMs (stream-K: where the tiles
// would leave the last wave of CTAs partly idle, every SM takes an equal
// share of those tiles' k loops, and the peers of a split tile add their
// partial accumulators in the workspace, in a fixed order, so a call gives
// the same bits on every run; int8 results are identical to the call
// without a workspace, fp8 ones equal up to the fp32 summation order). At
// M ≤ 16 on large weights it also lets them run the decode GEMM on wgmma
// with the operands swapped, its weight tiles split along K over the SMs in
// the same way (docs/gemm.md, "M ≤ 16 on large weights").
// `workspace`: uint8, contiguous, 16-byte aligned, on out's device, at least
// scaled_mm_workspace_bytes(device) bytes, apart from every other tensor of
// the call. It needs no initialization and holds nothing between calls (the
// call clears the flags it uses with a cudaMemsetAsync on `stream`), but
// calls that may run at the same time (on different streams) need
// workspaces of their own. The CPU backend and GPUs before Hopper ignore it
// (scaled_mm_workspace_bytes is 0 there, so an empty one will do).
void scaled_mm(const TensorView& out, const TensorView& a, const TensorView& b,
               const TensorView& scale_a, const TensorView& scale_b,
               const std::optional<TensorView>& bias, const TensorView& workspace, Stream stream = nullptr,
               Fp8Accumulation fp8_accumulation = Fp8Accumulation::kPrecise);

// Bytes of scaled_mm's / scaled_mm_azp's workspace on `device`: two
// 128×256 tiles of 32-bit partial sums and their flags per SM (34.6 MB on a
// 132-SM H100; the most stream-K ever splits is two waves of tiles); 0 on
// the CPU.
int64_t scaled_mm_workspace_bytes(Device device);

// Asymmetric (zero-point) activations, int8 only.
//   per-tensor zero point (azp absent): azp_adj [N] int32 holds z_a·(1·B̂),
//     D = scale_a · scale_b · (A·B − azp_adj) + bias
//   per-token zero points (azp [M] int32 given): azp_adj [N] holds 1·B̂,
//     D = scale_a · scale_b · (A·B − azp ⊗ azp_adj) + bias
// The subtraction is done in int32, so the corrected accumulator stays exact.
void scaled_mm_azp(const TensorView& out, const TensorView& a, const TensorView& b,
                   const TensorView& scale_a, const TensorView& scale_b,
                   const TensorView& azp_adj, const std::optional<TensorView>& azp = std::nullopt,
                   const std::optional<TensorView>& bias = std::nullopt, Stream stream = nullptr);
// The same with a workspace, as scaled_mm's above.
void scaled_mm_azp(const TensorView& out, const TensorView& a, const TensorView& b,
                   const TensorView& scale_a, const TensorView& scale_b,
                   const TensorView& azp_adj, const std::optional<TensorView>& azp,
                   const std::optional<TensorView>& bias, const TensorView& workspace,
                   Stream stream = nullptr);

// Offline precomputation of the zero-point correction for scaled_mm_azp:
//   out[n] = azp · Σ_k b[k,n]   (azp defaults to 1: plain column sums)
// out is int32 [N]; b is int8 [K,N] column-major as in scaled_mm.
void azp_adj(const TensorView& out, const TensorView& b, std::optional<int32_t> azp = std::nullopt,
             Stream stream = nullptr);

}  // namespace qgemm
