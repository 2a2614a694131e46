// scaled_mm_cuda.h — CUDA backend entry points of the scaled GEMMs (compiled
// only when QGEMM_WITH_CUDA). Arguments arrive validated.
#pragma once

#include <cstdint>

#include "gemm/cuda/kernels.h"
#include "gemm/scaled_mm_args.h"

namespace qgemm::detail {

// Enqueues the GEMM on args.stream with the kernel dispatch_table.h picks.
void scaled_mm_cuda(const ScaledMmArgs& args);
// scaled_mm_workspace_bytes on a CUDA device: stream_k_workspace_bytes on
// Hopper, 0 elsewhere (no kernel takes a workspace there).
int64_t scaled_mm_workspace_bytes_cuda(int device);
void azp_adj_cuda(int32_t* out, const int8_t* b, int64_t k, int64_t n, int64_t ldb, int32_t azp,
                  Device device, Stream stream);

// What the dispatch table picks: a kernel, and for fp8 whether it runs with
// fast accumulation (false where the precise kernel runs instead:
// fp8_fast_runs_precise, dispatch_table.h).
struct GemmChoice {
  GemmKernel kernel;
  bool fp8_fast_accum;
};

// For tests and benchmarks: the choice scaled_mm_cuda would run (fallback
// included) or just its kernel, and a run with a given kernel, false when
// that kernel cannot take the arguments or is not built for this device.
GemmChoice scaled_mm_cuda_choice(const ScaledMmArgs& args);
GemmKernel scaled_mm_cuda_kernel(const ScaledMmArgs& args);
bool scaled_mm_cuda_with(const ScaledMmArgs& args, GemmKernel kernel);

}  // namespace qgemm::detail
