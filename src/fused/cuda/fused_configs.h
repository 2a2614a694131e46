// fused_configs.h — the launch table of the fused row kernels, by the number
// of vectors in a row, V = ceil(N / kVec) (kVec = 16 bytes / element size on
// the vector path, 1 on the scalar path). One block per token row; every
// config keeps the whole row in registers (items × kVec floats per thread).
//
//   V ≤     threads  items  bf16 rows (N)   why
//   128     128      1      ≤ 1024          short rows: few idle lanes
//   256     128      2      ≤ 2048
//   512     128      4      ≤ 4096          Llama-7B hidden: 4 loads in flight per thread,
//                                           ~60 registers → 8 blocks (rows) per SM
//   1024    256      4      ≤ 8192          4 rows of 16 KB per SM
//   2048    512      4      ≤ 16384         Llama-70B MLP (14336)
//   4096    512      8      ≤ 32768         64 floats of row per thread, under 128 registers
//   larger  512      0 (streaming: one pass per step, re-reading the row from L2)
//
// Small blocks with several items keep many rows in flight per SM, so that
// while one row sits in its block reductions (between its loads and its
// stores) the others keep DRAM busy; `qgemm bench fused --sweep` times every
// (threads, items) pair per shape to re-derive this table on a new GPU.
// 512 threads is the ceiling so that __launch_bounds__(512) leaves 128
// registers per thread for the 8-item rows.
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
    {128, 128, 1}, {256, 128, 2}, {512, 128, 4}, {1024, 256, 4}, {2048, 512, 4}, {4096, 512, 8},
};
inline constexpr FusedRowConfig kFusedStreamingConfig = {0, 512, 0};

inline FusedLaunch select_fused_launch(int64_t hidden, int vec_width, bool vector) {
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
  return launch;
}

}  // namespace qgemm::detail
