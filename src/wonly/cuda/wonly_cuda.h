// wonly_cuda.h — CUDA backend of the weight-only GEMMs (compiled only when
// QGEMM_WITH_CUDA). Arguments arrive validated.
#pragma once

#include <cstdint>

#include "wonly/wonly_args.h"

namespace qgemm::detail {

// Picks the kernel for M from the table in wonly_dispatch.cu and launches it.
void weight_only_mm_cuda(const WeightOnlyArgs& args);
void weight_only_prepack_cuda(uint8_t* out, const uint8_t* w, int64_t n, int64_t k,
                              int64_t ld_bytes, bool int4, Device device, Stream stream);

// The kernels (wonly_gemv.cu, wonly_mma.cu).
void launch_wonly_gemv(const WeightOnlyArgs& args, int token_blocks);  // M ≤ 8·token_blocks
void launch_wonly_mma(const WeightOnlyArgs& args, int block_m);        // block_m 64 or 128

}  // namespace qgemm::detail
