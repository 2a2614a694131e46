// wonly_cpu.h — CPU twin of the weight-only GEMMs: the reference semantics
// of qgemm/weight_only.h and the oracle for every GPU test.
#pragma once

#include <cstdint>

#include "wonly/wonly_args.h"

namespace qgemm::detail {

void weight_only_mm_cpu(const WeightOnlyArgs& args);
// Plain weight (row stride ld_bytes) → prepacked layout (qgemm/weight_only.h).
void weight_only_prepack_cpu(uint8_t* out, const uint8_t* w, int64_t n, int64_t k,
                             int64_t ld_bytes, bool int4);

}  // namespace qgemm::detail
