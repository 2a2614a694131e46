// The fixed-order fp32 dot product of cpu_dot.h, compiled for several ISAs.
#include "core/cpu_dot.h"

#include <algorithm>
#include <cstring>

#include "core/cpu_simd.h"

namespace qgemm::detail {

namespace {

#if defined(__GNUC__)
// (Internal, always inlined: the vector ABI of the baseline clone does not matter.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
// Eight floats as one value, so that the compiler keeps partial sums in
// vector registers (with arrays GCC 12 kept them on the stack); a group of
// kDotLanes lanes is two of them. The operations are lane-wise IEEE mul and
// add: the same bits as scalar code.
typedef float Half __attribute__((vector_size(8 * sizeof(float))));
#define QGEMM_INLINE inline __attribute__((always_inline))
QGEMM_INLINE Half load_half(const float* p) {
  Half v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
QGEMM_INLINE void store_half(float* p, Half v) { std::memcpy(p, &v, sizeof(v)); }

// Four pairs sharing one a vector (each x vector loaded once for the four
// rows), and one pair; the partial sums are named values, not an array, so
// that they stay in registers over the whole length.
QGEMM_INLINE void dot_lanes_rows4(float* lanes, const float* x, const float* b, int64_t ldb, int64_t len) {
  Half s0 = load_half(lanes), t0 = load_half(lanes + 8), s1 = load_half(lanes + 16), t1 = load_half(lanes + 24),
       s2 = load_half(lanes + 32), t2 = load_half(lanes + 40), s3 = load_half(lanes + 48), t3 = load_half(lanes + 56);
  const float *y0 = b, *y1 = b + ldb, *y2 = b + 2 * ldb, *y3 = b + 3 * ldb;
  for (int64_t i = 0; i < len; i += kDotLanes) {
    const Half xa = load_half(x + i), xb = load_half(x + i + 8);
    s0 += xa * load_half(y0 + i), t0 += xb * load_half(y0 + i + 8);
    s1 += xa * load_half(y1 + i), t1 += xb * load_half(y1 + i + 8);
    s2 += xa * load_half(y2 + i), t2 += xb * load_half(y2 + i + 8);
    s3 += xa * load_half(y3 + i), t3 += xb * load_half(y3 + i + 8);
  }
  store_half(lanes, s0), store_half(lanes + 8, t0), store_half(lanes + 16, s1), store_half(lanes + 24, t1);
  store_half(lanes + 32, s2), store_half(lanes + 40, t2), store_half(lanes + 48, s3), store_half(lanes + 56, t3);
}
QGEMM_INLINE void dot_lanes_rows1(float* lanes, const float* x, const float* y, int64_t len) {
  Half s = load_half(lanes), t = load_half(lanes + 8);
  for (int64_t i = 0; i < len; i += kDotLanes) {
    s += load_half(x + i) * load_half(y + i);
    t += load_half(x + i + 8) * load_half(y + i + 8);
  }
  store_half(lanes, s), store_half(lanes + 8, t);
}
#pragma GCC diagnostic pop
#else
inline void dot_lanes_rows1(float* lanes, const float* x, const float* y, int64_t len) {
  for (int64_t i = 0; i < len; i += kDotLanes) {
    for (int l = 0; l < kDotLanes; ++l) lanes[l] += x[i + l] * y[i + l];
  }
}
inline void dot_lanes_rows4(float* lanes, const float* x, const float* b, int64_t ldb, int64_t len) {
  for (int r = 0; r < 4; ++r) dot_lanes_rows1(lanes + r * kDotLanes, x, b + r * ldb, len);
}
#endif

}  // namespace

QGEMM_CPU_CLONES void dot_lanes_block(float* lanes, const float* a, int64_t lda, int64_t tokens, const float* b,
                                      int64_t ldb, int64_t rows, int64_t len) {
  for (int64_t t = 0; t < tokens; ++t) {
    float* row_lanes = lanes + t * rows * kDotLanes;
    const float* x = a + t * lda;
    int64_t r = 0;
    for (; r + 4 <= rows; r += 4) dot_lanes_rows4(row_lanes + r * kDotLanes, x, b + r * ldb, ldb, len);
    for (; r < rows; ++r) dot_lanes_rows1(row_lanes + r * kDotLanes, x, b + r * ldb, len);
  }
}

float dot_lanes_total(const float* lanes) {
  float sums[kDotLanes];
  for (int l = 0; l < kDotLanes; ++l) sums[l] = lanes[l];
  for (int width = kDotLanes / 2; width >= 1; width /= 2) {
    for (int l = 0; l < width; ++l) sums[l] += sums[l + width];
  }
  return sums[0];
}

void dot_panel(float* dots, float* lanes, const float* a, int64_t lda, int64_t tokens, const float* b, int64_t ldb,
               int64_t rows, int64_t k) {
  constexpr int64_t kBlock = 512;  // k per pass: 2 KB of each token's and each row's vector
  const int64_t pairs = tokens * rows;
  std::fill(lanes, lanes + pairs * kDotLanes, 0.0f);
  const int64_t k_main = k - k % kDotLanes;
  for (int64_t k0 = 0; k0 < k_main; k0 += kBlock) {
    dot_lanes_block(lanes, a + k0, lda, tokens, b + k0, ldb, rows, std::min(kBlock, k_main - k0));
  }
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t r = 0; r < rows; ++r) {
      float* sums = lanes + (t * rows + r) * kDotLanes;
      for (int64_t i = k_main; i < k; ++i) sums[i - k_main] += a[t * lda + i] * b[r * ldb + i];  // dot_float's tail
      dots[t * rows + r] = dot_lanes_total(sums);
    }
  }
}

float dot_float(const float* a, const float* b, int64_t k) {
  float lanes[kDotLanes], dot;
  dot_panel(&dot, lanes, a, 0, 1, b, 0, 1, k);
  return dot;
}

}  // namespace qgemm::detail
