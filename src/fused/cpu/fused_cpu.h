// fused_cpu.h — CPU backend of the fused ops (qgemm/fused.h): the reference
// semantics every CUDA kernel is tested against.
#pragma once

#include "fused/fused_args.h"

namespace qgemm::detail {

void fused_cpu(const FusedArgs& args);

}  // namespace qgemm::detail
