// test_util.h — shared helpers for the GoogleTest suites: seeded random data
// (never zeros), poisoning, ulp-aware comparisons and optional CUDA buffers.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/numeric.h"
#include "qgemm/tensor.h"
#include "qgemm/version.h"

namespace qgemm::test {

// One generator per test, seeded from the test's name so failures reproduce.
inline std::mt19937_64 make_rng(uint64_t salt = 0) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  uint64_t seed = 0x9e3779b97f4a7c15ull ^ salt;
  if (info != nullptr) {
    for (const char* p = info->name(); *p; ++p) seed = seed * 131 + static_cast<uint8_t>(*p);
  }
  return std::mt19937_64(seed);
}

inline std::vector<int8_t> random_int8(std::mt19937_64& rng, size_t count, int lo = -128,
                                       int hi = 127) {
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<int8_t> v(count);
  for (auto& x : v) x = static_cast<int8_t>(dist(rng));
  return v;
}

inline std::vector<int32_t> random_int32(std::mt19937_64& rng, size_t count, int lo, int hi) {
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<int32_t> v(count);
  for (auto& x : v) x = dist(rng);
  return v;
}

inline std::vector<float> random_float(std::mt19937_64& rng, size_t count, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(count);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Random finite fp8 e4m3 bit patterns (any sign, magnitudes up to `max_abs`).
inline std::vector<uint8_t> random_fp8(std::mt19937_64& rng, size_t count, float max_abs = 8.0f) {
  std::normal_distribution<float> dist(0.0f, max_abs / 3.0f);
  std::vector<uint8_t> v(count);
  for (auto& x : v) {
    const float f = std::fmax(-max_abs, std::fmin(max_abs, dist(rng)));
    x = numeric::float_to_fp8e4m3_bits(f);
  }
  return v;
}

// Bits of a 16/32-bit float output dtype, rounded from a float.
inline std::vector<uint16_t> to_half_bits(const std::vector<float>& values, DType dtype) {
  std::vector<uint16_t> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    out[i] = dtype == DType::kBFloat16 ? numeric::float_to_bf16_bits(values[i])
                                       : numeric::float_to_fp16_bits(values[i]);
  }
  return out;
}

// Relative precision (one ulp at the top of a binade) of an output dtype.
inline double unit_roundoff(DType dtype) {
  switch (dtype) {
    case DType::kBFloat16: return std::ldexp(1.0, -7);
    case DType::kFloat16: return std::ldexp(1.0, -10);
    case DType::kFloat32: return std::ldexp(1.0, -22);
    case DType::kFloat8E4M3: return std::ldexp(1.0, -3);
    default: return 0.0;
  }
}

// Spacing of the subnormals of an output dtype: the absolute rounding error
// floor near zero.
inline double subnormal_spacing(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return std::ldexp(1.0, -24);
    case DType::kFloat8E4M3: return std::ldexp(1.0, -9);
    case DType::kBFloat16: return std::ldexp(1.0, -133);
    default: return std::ldexp(1.0, -149);
  }
}

// Fills a buffer with a NaN-like byte pattern so an unwritten output shows.
inline void poison(void* data, size_t bytes) { std::memset(data, 0xff, bytes); }

inline bool has_cuda_device() { return qgemm::cuda_device_count() > 0; }

#define QGEMM_SKIP_WITHOUT_GPU()                                         \
  do {                                                                   \
    if (!::qgemm::test::has_cuda_device()) GTEST_SKIP() << "no CUDA GPU"; \
  } while (0)

}  // namespace qgemm::test
