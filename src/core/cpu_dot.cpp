// The fixed-order fp32 dot product of cpu_dot.h, compiled for several ISAs.
#include "core/cpu_dot.h"

#include "core/cpu_simd.h"

namespace qgemm::detail {

namespace {
constexpr int kLanes = 16;
}  // namespace

QGEMM_CPU_CLONES float dot_float(const float* a, const float* b, int64_t k) {
  float lanes[kLanes] = {};
  const int64_t k_main = k - k % kLanes;
  for (int64_t i = 0; i < k_main; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] += a[i + l] * b[i + l];
  }
  for (int64_t i = k_main; i < k; ++i) lanes[i - k_main] += a[i] * b[i];
  for (int width = kLanes / 2; width >= 1; width /= 2) {
    for (int l = 0; l < width; ++l) lanes[l] += lanes[l + width];
  }
  return lanes[0];
}

}  // namespace qgemm::detail
