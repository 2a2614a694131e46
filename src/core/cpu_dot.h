// cpu_dot.h — the fp32 dot product of the CPU backends, with a fixed
// summation order so every SIMD clone and every caller gives the same bits.
#pragma once

#include <cstdint>

namespace qgemm::detail {

// Σ a[i]·b[i] in fp32: lane l (of 16) sums the terms i ≡ l (mod 16) in order,
// then the lanes are added pairwise.
float dot_float(const float* a, const float* b, int64_t k);

}  // namespace qgemm::detail
