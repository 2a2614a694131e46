// scaled_mm_cpu.h — CPU backend of the scaled GEMMs: exact reference
// semantics (int32 accumulation for int8, fp32 for fp8) and the oracle for
// every GPU test. The fp8 result is the precise one whether or not
// args.fp8_fast_accum is set (fast accumulation is a GPU rounding mode).
#pragma once

#include <cstdint>

#include "gemm/scaled_mm_args.h"

namespace qgemm::detail {

void scaled_mm_cpu(const ScaledMmArgs& args);
// out[n] = azp · Σ_k b[k,n] over an int8 [K,N] column-major b.
void azp_adj_cpu(int32_t* out, const int8_t* b, int64_t k, int64_t n, int64_t ldb, int32_t azp);

}  // namespace qgemm::detail
