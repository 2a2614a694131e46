// fused_cuda.h — CUDA backend of the fused ops: the entry called by
// fused_api.cpp and the per-family launchers it dispatches to.
#pragma once

#include "fused/fused_args.h"

namespace qgemm::detail {

// How one call is launched: one block of `threads` per row, each thread
// holding `items` chunks of the row in registers (0: the streaming kernel),
// 16-byte vectors when `vector`, single elements otherwise (fused_configs.h).
struct FusedLaunch {
  int threads = 128;
  int items = 1;
  bool vector = false;
  // The grid holds fewer threads than kMinThreadsPerSm per SM (decode
  // batches): its time is one row's latency, and occupancy is no concern.
  bool few_rows = false;
};

void fused_cuda(const FusedArgs& args);

// RMSNorm and LayerNorm kernels (fused_norm_cuda.cu, fused_rms_cuda.cu).
void launch_fused_norm(const FusedArgs& args, const FusedLaunch& launch);
void launch_fused_rms(const FusedArgs& args, const FusedLaunch& launch);
// SiLU-and-mul and GELU kernels (fused_act_cuda.cu).
void launch_fused_act(const FusedArgs& args, const FusedLaunch& launch);

}  // namespace qgemm::detail
