// fused_configs.h — the launch table of the fused row kernels, by the number
// of vectors in a row, V = ceil(N / kVec) (kVec = 16 bytes / element size on
// the vector path, 1 on the scalar path). One block per token row; every
// config keeps the whole row in registers (items × kVec floats per thread).
//
//   V ≤     threads  items  bf16 rows (N)   why
//   128     128      1      ≤ 1024          short rows: few idle lanes
//   256     128      2      ≤ 2048
//   512     256      2      ≤ 4096          Llama-7B hidden
//   1024    512      2      ≤ 8192
//   2048    512      4      ≤ 16384         Llama-70B MLP (14336)
//   4096    512      8      ≤ 32768         64 floats of row per thread, under 128 registers
//   larger  512      0 (streaming: one pass per step, re-reading the row from L2)
//
// Two items per thread: each thread has two 16-byte loads in flight and the
// block is wide enough that its reductions are short. The H100 sweep
// (`qgemm bench fused --sweep`, bench/results/fused-h100-sweep.json, 16384
// tokens, % of copy bandwidth) puts 256×2 ahead of 128×4 and 64×8 at
// N = 4096 for add+RMSNorm (95 vs 92 and 76), the float LayerNorm (78 vs 70
// and 57), SiLU-and-mul (98 vs 94 and 93) and GELU (64 vs 57 and 44), and
// 512×2 ahead of or within 2 points of 256×4 at N = 8192 — except plain RMSNorm
// and the int32 LayerNorm, which take four items (prefers_four_items below).
// `--sweep` times every (threads, items) pair per shape to re-derive this
// table on a new GPU.
//
// Few rows (decode batches, T·threads below kMinThreadsPerSm per SM): the
// grid of T blocks cannot fill the GPU, and each thread would work through
// its items one after another, so the row is spread over more threads
// (threads ×2, items ÷2, same coverage) up to 512 threads: the kernel's
// time is then one row's latency, shorter with fewer items per thread.
// 512 threads is the ceiling so that __launch_bounds__(512) leaves 128
// registers per thread for the 8-item rows. A grid still below that
// (few_rows) runs two-item norm rows on the kFewRows build of the kernel
// (fused_row_kernel.cuh), which loads w / γ / β with the row. H100, same call
// A B A B (bench/results/fused-h100-few-rows-params-ab.json): through Python
// with the parameters rotated with the inputs, 16 tokens 3–10 % faster
// (LayerNorm 16×8192 4.87 → 4.41 µs), 256 tokens 0–4 %; no shape slower.
#pragma once

#include <cstdint>

#include "fused/cuda/fused_cuda.h"

namespace qgemm::detail {

struct FusedRowConfig {
  int64_t max_vectors;
  int threads;
  int items;
};

inline constexpr FusedRowConfig kFusedRowConfigs[] = {
    {128, 128, 1}, {256, 128, 2}, {512, 256, 2}, {1024, 512, 2}, {2048, 512, 4}, {4096, 512, 8},
};
inline constexpr FusedRowConfig kFusedStreamingConfig = {0, 512, 0};

// Every register-path launch is a power-of-two number of warps (the rules
// below only halve or double a row's threads): LayerNorm's merge tree relies
// on it (block_merge, fused_row_kernel.cuh; the streaming path does not use it).
constexpr bool fused_row_warps_are_powers_of_two() {
  for (const auto& c : kFusedRowConfigs) {
    if (c.threads < 32 || (c.threads & (c.threads - 1)) != 0) return false;
  }
  return true;
}
static_assert(fused_row_warps_are_powers_of_two(), "fused row launches must be a power-of-two number of warps");

inline constexpr int kFusedMaxThreads = 512;
inline constexpr int64_t kMinThreadsPerSm = 1024;  // half of an SM's 2048 resident threads

// four_items: a two-item config of ≥ 256 threads runs half the threads with
// four items, for the ops measured faster that way (prefers_four_items).
// H100 sweep (bench/results/fused-h100-sweep.json), % of copy bandwidth,
// four items against the table's two:
//   int32 LayerNorm  16384×4096: 96 against 86  (at N = 8192 the table
//                    already gives it four items)
//   plain RMSNorm    16384×4096: 89 against 81;  16384×8192: 93 against 84;
//                    4096×8192: 77 against 72  (the two-item rows are capped at
//                    32 registers, fused_row_kernel.cuh; four items are not)
// The residual RMSNorm (98 against 96 at 16384×8192 with two), the float
// LayerNorm (within 1 point at N = 8192, 9 slower at N = 4096) and the activations
// keep the table.
inline bool prefers_four_items(FusedOp op, DType x_dtype, bool residual) {
  return (op == FusedOp::kLayerNorm && x_dtype == DType::kInt32) || (op == FusedOp::kRmsNorm && !residual);
}

inline FusedLaunch select_fused_launch(int64_t tokens, int64_t hidden, int vec_width, bool vector,
                                       int sm_count, bool four_items = false) {
  const int64_t vectors = vector ? (hidden + vec_width - 1) / vec_width : hidden;
  FusedLaunch launch;
  launch.vector = vector;
  launch.threads = kFusedStreamingConfig.threads;
  launch.items = kFusedStreamingConfig.items;
  for (const auto& c : kFusedRowConfigs) {
    if (vectors <= c.max_vectors) {
      launch.threads = c.threads;
      launch.items = c.items;
      break;
    }
  }
  if (four_items && launch.items == 2 && launch.threads >= 256) {
    launch.threads /= 2;
    launch.items = 4;
  }
  while (launch.items > 1 && launch.threads < kFusedMaxThreads &&
         tokens * launch.threads < kMinThreadsPerSm * sm_count) {
    launch.threads *= 2;
    launch.items /= 2;
  }
  launch.few_rows = tokens * launch.threads < kMinThreadsPerSm * sm_count;
  return launch;
}

}  // namespace qgemm::detail
