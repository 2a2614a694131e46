// Bit-exact conversions of core/numeric.h against independent oracles: the
// compiler's _Float16 for fp16, exhaustive nearest-value search for fp8 and
// bf16, and exhaustive round trips.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "common/test_util.h"
#include "core/numeric.h"

namespace qgemm::test {
namespace {

using namespace qgemm::numeric;

// Oracle for float → fp8: the nearest of all 127 non-negative finite codes
// by exhaustive search (ties to the even code), with the sign copied.
uint8_t nearest_fp8(float x) {
  const double magnitude = std::fabs(static_cast<double>(x));
  uint8_t best = 0;
  double best_err = std::numeric_limits<double>::infinity();
  for (uint32_t code = 0; code <= 0x7e; ++code) {
    const double err = std::fabs(fp8e4m3_bits_to_float(static_cast<uint8_t>(code)) - magnitude);
    if (err < best_err || (err == best_err && (code & 1u) == 0)) {
      best = static_cast<uint8_t>(code);
      best_err = err;
    }
  }
  return static_cast<uint8_t>((std::signbit(x) ? 0x80 : 0) | best);
}

TEST(Numeric, Fp8RoundTripIsExactForEveryCode) {
  for (uint32_t code = 0; code < 256; ++code) {
    const float f = fp8e4m3_bits_to_float(static_cast<uint8_t>(code));
    if ((code & 0x7f) == 0x7f) {
      EXPECT_TRUE(std::isnan(f));
      continue;
    }
    EXPECT_EQ(float_to_fp8e4m3_bits(f), code) << "code " << code;
  }
}

TEST(Numeric, Fp8KnownValues) {
  EXPECT_EQ(fp8e4m3_bits_to_float(0x7e), 448.0f);
  EXPECT_EQ(fp8e4m3_bits_to_float(0x01), 0.001953125f);  // smallest subnormal 2^-9
  EXPECT_EQ(fp8e4m3_bits_to_float(0x08), 0.015625f);     // smallest normal 2^-6
  EXPECT_EQ(float_to_fp8e4m3_bits(1000.0f), 0x7e);       // saturates
  EXPECT_EQ(float_to_fp8e4m3_bits(-INFINITY), 0xfe);
  EXPECT_EQ(float_to_fp8e4m3_bits(NAN) & 0x7f, 0x7f);
  EXPECT_EQ(float_to_fp8e4m3_bits(464.0f), 0x7e);  // tie between 448 and (absent) 480
}

TEST(Numeric, Fp8RoundsToNearestEven) {
  auto rng = make_rng();
  std::uniform_real_distribution<float> log_mag(-12.0f, 9.5f);
  for (int i = 0; i < 20000; ++i) {
    float x = std::exp2(log_mag(rng)) * (i % 2 ? -1.0f : 1.0f);
    if (i % 7 == 0) {  // exact midpoints between neighbours
      const uint8_t c = static_cast<uint8_t>(rng() % 0x7e);
      x = 0.5f * (fp8e4m3_bits_to_float(c) + fp8e4m3_bits_to_float(c + 1));
    }
    const float clamped = std::fmax(-448.0f, std::fmin(448.0f, x));
    const uint8_t want = nearest_fp8(clamped);
    EXPECT_EQ(float_to_fp8e4m3_bits(x), want) << "x = " << x;
  }
}

TEST(Numeric, Fp16MatchesCompilerConversion) {
  auto rng = make_rng();
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    // Random bit patterns concentrated on fp16's range, plus any float.
    uint32_t u = bits(rng);
    if (i % 2) u = (u & 0x807fffffu) | ((100u + u % 45u) << 23);
    const float f = bits_float(u);
    const _Float16 h = static_cast<_Float16>(f);
    uint16_t want;
    std::memcpy(&want, &h, 2);
    const uint16_t got = float_to_fp16_bits(f);
    if (std::isnan(f)) {
      EXPECT_EQ(got & 0x7c00, 0x7c00);
      EXPECT_NE(got & 0x3ff, 0);
    } else {
      ASSERT_EQ(got, want) << "f = " << f << " bits 0x" << std::hex << u;
    }
  }
}

TEST(Numeric, HalfRoundTripsAreExact) {
  for (uint32_t code = 0; code < 65536; ++code) {
    const auto h = static_cast<uint16_t>(code);
    const float f16 = fp16_bits_to_float(h);
    _Float16 ref;
    std::memcpy(&ref, &h, 2);
    if (std::isnan(f16)) {
      EXPECT_TRUE(std::isnan(static_cast<float>(ref)));
    } else {
      EXPECT_EQ(f16, static_cast<float>(ref));
      EXPECT_EQ(float_to_fp16_bits(f16), h);
    }
    const float fb = bf16_bits_to_float(h);
    if (!std::isnan(fb)) EXPECT_EQ(float_to_bf16_bits(fb), h);
  }
}

TEST(Numeric, Bf16RoundsToNearestEven) {
  auto rng = make_rng();
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    const uint32_t u = bits(rng);
    const float f = bits_float(u);
    if (std::isnan(f)) continue;
    const uint16_t got = float_to_bf16_bits(f);
    // Oracle: the two neighbours by truncation, choose the nearer, ties even.
    const uint16_t low = static_cast<uint16_t>(u >> 16);
    const uint32_t remainder = u & 0xffffu;
    uint16_t want = low;
    if (remainder > 0x8000u || (remainder == 0x8000u && (low & 1u))) want = static_cast<uint16_t>(low + 1);
    ASSERT_EQ(got, want) << "bits 0x" << std::hex << u;
  }
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::max()), 0x7f80);  // overflows to inf
}

}  // namespace
}  // namespace qgemm::test
