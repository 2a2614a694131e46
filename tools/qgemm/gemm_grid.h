// gemm_grid.h — the scaled-GEMM shapes `qgemm bench gemm` and
// `qgemm dispatch` take by default: issue 3's grid, M ∈ {1 … 8192} × eight
// (N, K) of Llama-class layers (8192³ is M = 8192 of (8192, 8192)).
#pragma once

#include <cstdint>
#include <vector>

namespace qgemm::tools {

inline std::vector<std::vector<int64_t>> gemm_grid_shapes() {
  const int64_t ms[] = {1, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192};
  const int64_t nks[][2] = {{6144, 4096},  {4096, 4096}, {28672, 4096}, {4096, 14336},
                            {10240, 8192}, {8192, 8192}, {57344, 8192}, {8192, 28672}};
  std::vector<std::vector<int64_t>> shapes;
  for (const auto& nk : nks)
    for (int64_t m : ms) shapes.push_back({m, nk[0], nk[1]});
  return shapes;
}

}  // namespace qgemm::tools
