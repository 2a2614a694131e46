// bench_quant_peers.cuh — the peers `qgemm bench quant` times next to the
// fused qgemm kernels (bench_quant_peers.cu):
//
//   eager composite — the kernel sequence PyTorch eager launches for the same
//     quantization, one simple CUDA kernel per op with torch's intermediate
//     dtypes (bf16 / fp32 tensors of [T,H] between ops), e.g. per token:
//       a = x.abs(); m = a.amax(-1); s = m / 127; y = x / s; y = y.round();
//       y = y.clamp(-128, 127); q = y.to(int8)
//     The real torch peers (torch.compile / torch eager) are timed by
//     `python -m qgemm.bench quant`, which writes records with the same op and
//     shape keys (impl "torch-eager", "torch-compile") for the same table.
//   unfused pair — what a hand-written two-kernel implementation does: a row
//     amax kernel, then one divide/round/clamp/cast kernel (x read twice).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace qgemm::tools::quant_peers {

// Which quantization the eager composite reproduces (bf16 input, [T,H]).
enum class EagerOp {
  kTokenInt8,      // abs, amax, /127, div, round, clamp, to(int8)
  kTokenInt8Asym,  // amin, amax, scale & zero point, div, round, add, clamp, to(int8)
  kTokenFp8,       // abs, amax, /448, div, clamp(±448), to(fp8)
  kGroupInt8,      // as kTokenInt8 over rows of `group` elements (x.view(T, H/g, g))
  kStaticInt8,     // div (scalar), round, clamp, to(int8)
  kDequantInt8,    // to(fp32), mul (per-token scale), to(bf16)
};

// Intermediate tensors of the eager composite: two fp32 [T,H], one bf16
// [T,H], two fp32 [rows]. Allocated once per shape by the bench; group sizes
// of the per-group peer are ≥ 32.
struct EagerWorkspace {
  float* f32_a = nullptr;
  float* f32_b = nullptr;
  uint16_t* bf16 = nullptr;
  float* row_a = nullptr;
  float* row_b = nullptr;
  static size_t bytes(int64_t tokens, int64_t hidden) {
    const auto n = static_cast<size_t>(tokens * hidden);
    return n * (4 + 4 + 2) + 2 * (row_floats(tokens, hidden) * 4) + 5 * 256;  // + 256-byte alignment each
  }
  // Rows of a reduction: T (per token) or T·H/group (group ≥ 32).
  static size_t row_floats(int64_t tokens, int64_t hidden) {
    return static_cast<size_t>(tokens + tokens * hidden / 32 + 1);
  }
  static EagerWorkspace carve(void* base, int64_t tokens, int64_t hidden);
};

// Enqueues the eager composite of `op`: x bf16 [T,H] → q [T,H] (int8 / fp8)
// with scale (fp32 [rows]); for kDequantInt8 q is read and x written.
// group: row length of the reductions (H for per-token).
void eager_composite(EagerOp op, const void* x, void* q, float* scale, int64_t tokens, int64_t hidden,
                     int64_t group, const EagerWorkspace& ws, cudaStream_t stream);

// Enqueues the unfused pair for per-token symmetric int8 (scale: fp32 [T]).
void unfused_pair(const void* x, void* q, float* scale, int64_t tokens, int64_t hidden, cudaStream_t stream);

}  // namespace qgemm::tools::quant_peers
