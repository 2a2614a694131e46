// operand_layout.h — the layout test shared by the CUDA scaled-GEMM kernels
// that load A and B 16 bytes at a time (TMA, bulk copies, 16-byte loads):
// host code, read by the dispatcher and by each launcher's own contract.
#pragma once

#include <cstdint>

#include "gemm/scaled_mm_args.h"

namespace qgemm::detail {

// A null pointer counts as aligned (an absent vector).
inline bool aligned16(const void* p) { return p == nullptr || reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// A and B loadable 16 bytes at a time: 16-byte aligned bases, and K and the
// leading dimensions multiples of 16 bytes (8-bit inputs: 16 elements).
inline bool operands_aligned(const ScaledMmArgs& args) {
  return args.k % 16 == 0 && args.lda % 16 == 0 && args.ldb % 16 == 0 && aligned16(args.a) && aligned16(args.b);
}

}  // namespace qgemm::detail
