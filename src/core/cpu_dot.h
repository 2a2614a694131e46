// cpu_dot.h — the fp32 dot product of the CPU backends, with a fixed
// summation order so every SIMD clone and every caller gives the same bits.
#pragma once

#include <cstdint>

namespace qgemm::detail {

// Σ a[i]·b[i] in fp32: lane l (of kDotLanes) sums the terms i ≡ l (mod 16) in
// order, then the lanes are added pairwise.
float dot_float(const float* a, const float* b, int64_t k);

constexpr int kDotLanes = 16;

// dot_float in pieces, for many pairs at once: for t < tokens and r < rows,
// the kDotLanes partial sums at lanes + (t·rows + r)·kDotLanes advance over
// a[t·lda + i] · b[r·ldb + i], i < len (len a multiple of kDotLanes). Zeroed
// lanes advanced over consecutive pieces of a pair of vectors, then
// dot_lanes_total, give exactly dot_float of the whole vectors (whose length
// is a multiple of kDotLanes).
void dot_lanes_block(float* lanes, const float* a, int64_t lda, int64_t tokens, const float* b, int64_t ldb,
                     int64_t rows, int64_t len);

// The pairwise sum of kDotLanes partial sums (dot_float's last step).
float dot_lanes_total(const float* lanes);

// dots[t·rows + r] = dot_float(a + t·lda, b + r·ldb, k) for t < tokens and
// r < rows, bit for bit, computed k block by k block so that a block of
// tokens and a panel of rows stay in cache. `lanes`: scratch of
// tokens·rows·kDotLanes floats.
void dot_panel(float* dots, float* lanes, const float* a, int64_t lda, int64_t tokens, const float* b, int64_t ldb,
               int64_t rows, int64_t k);

}  // namespace qgemm::detail
