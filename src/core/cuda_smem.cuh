// cuda_smem.cuh — the shared-memory address of a generic pointer, as the
// 32-bit operand that PTX shared-memory instructions (cp.async, ldmatrix,
// mbarrier, bulk copies) take.
#pragma once

#include <cstdint>

namespace qgemm::detail {

__device__ __forceinline__ uint32_t smem_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

}  // namespace qgemm::detail
