// The scalar dequantization of wonly_math.h, ŵ = round_T(q·s_T + o_T) rounded
// once, against a brute-force reference in exact integer arithmetic: every q
// of int8 (−128…127, which contains int4's 0…15) × edge and random (s_T, o_T)
// pairs, for bf16 and fp16. The reference turns each T value into a 320-bit
// fixed-point integer (unit 2^-150), forms q·s + o exactly, and finds the
// nearest T value by binary search over the ordered bit patterns, ties to the
// even pattern, overflow to ±inf; signed zeros and NaN follow IEEE 754 fma.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/numeric.h"
#include "wonly/wonly_math.h"

namespace qgemm::test {
namespace {

using detail::wonly::dequant_exact;
using detail::wonly::dequant_weight;
using detail::wonly::round_to_act;

// Two's-complement fixed point, value = int · 2^-150.
struct Fix {
  static constexpr int kLimbs = 5;
  std::array<uint64_t, kLimbs> l{};

  static Fix from(uint64_t mantissa, int exponent) {  // mantissa · 2^exponent, ≥ 0
    Fix f;
    const int shift = exponent + 150;
    const int limb = shift / 64, bit = shift % 64;
    f.l[limb] |= mantissa << bit;
    if (bit != 0 && limb + 1 < kLimbs) f.l[limb + 1] |= mantissa >> (64 - bit);
    return f;
  }
  Fix operator+(const Fix& o) const {
    Fix r;
    unsigned carry = 0;
    for (int i = 0; i < kLimbs; ++i) {
      const uint64_t s = l[i] + o.l[i];
      const unsigned c1 = s < l[i];
      r.l[i] = s + carry;
      const unsigned c2 = r.l[i] < s;
      carry = c1 | c2;
    }
    return r;
  }
  Fix neg() const {
    Fix r;
    for (int i = 0; i < kLimbs; ++i) r.l[i] = ~l[i];
    Fix one;
    one.l[0] = 1;
    return r + one;
  }
  Fix operator-(const Fix& o) const { return *this + o.neg(); }
  bool negative() const { return (l[kLimbs - 1] >> 63) != 0; }
  bool zero() const {
    for (uint64_t v : l)
      if (v) return false;
    return true;
  }
  // Signed comparison.
  friend bool operator<(const Fix& a, const Fix& b) { return (a - b).negative(); }
  friend bool operator==(const Fix& a, const Fix& b) { return (a - b).zero(); }
};

struct Format {
  bool bf16;
  uint16_t inf_bits() const { return bf16 ? 0x7f80 : 0x7c00; }
  bool is_nan(uint16_t b) const { return (b & 0x7fff) > inf_bits(); }
  bool is_inf(uint16_t b) const { return (b & 0x7fff) == inf_bits(); }
  bool sign(uint16_t b) const { return (b & 0x8000) != 0; }
  // |value| of a finite pattern, or 2^(emax+1) for the infinity pattern.
  void decode(uint16_t b, uint64_t& mantissa, int& exponent) const {
    const int mbits = bf16 ? 7 : 10, bias = bf16 ? 127 : 15;
    const int e = (b & 0x7fff) >> mbits;
    const uint64_t m = b & ((1u << mbits) - 1);
    if (e == 0) {
      mantissa = m, exponent = 1 - bias - mbits;
    } else {
      mantissa = m | (1u << mbits), exponent = e - bias - mbits;
    }
  }
  Fix magnitude(uint16_t b) const {
    uint64_t m;
    int e;
    decode(b, m, e);
    return Fix::from(m, e);
  }
  float to_float(uint16_t b) const {
    return bf16 ? numeric::bf16_bits_to_float(b) : numeric::fp16_bits_to_float(b);
  }
  uint16_t from_float(float f) const {
    return bf16 ? numeric::float_to_bf16_bits(f) : numeric::float_to_fp16_bits(f);
  }
};

// Exact round_T(q·s + o) as T bits (a canonical NaN for NaN).
uint16_t reference(const Format& t, int q, uint16_t s, uint16_t o) {
  const uint16_t nan = t.bf16 ? 0x7fc0 : 0x7e00;
  if (t.is_nan(s) || t.is_nan(o)) return nan;
  const bool p_sign = t.sign(s) != (q < 0);
  const bool s_zero = (s & 0x7fff) == 0, o_zero = (o & 0x7fff) == 0;
  if (t.is_inf(s)) {
    if (q == 0) return nan;  // 0 · inf
    if (t.is_inf(o) && t.sign(o) != p_sign) return nan;
    return static_cast<uint16_t>(t.inf_bits() | (p_sign ? 0x8000 : 0));
  }
  if (t.is_inf(o)) return o;
  const bool p_zero = q == 0 || s_zero;
  if (p_zero && o_zero) return (p_sign && t.sign(o)) ? 0x8000 : 0x0000;

  uint64_t sm;
  int se;
  t.decode(s, sm, se);
  Fix p = Fix::from(sm * static_cast<uint64_t>(q < 0 ? -q : q), se);
  if (p_sign) p = p.neg();
  Fix ov = t.magnitude(o);
  if (t.sign(o)) ov = ov.neg();
  const Fix x = p + ov;
  if (x.zero()) return 0x0000;  // exact cancellation: +0 under RNE
  const bool neg = x.negative();
  const Fix a = neg ? x.neg() : x;
  // Largest pattern b ≤ inf_bits with value(b) ≤ a.
  uint32_t lo = 0, hi = t.inf_bits();
  while (lo < hi) {
    const uint32_t mid = (lo + hi + 1) / 2;
    if (a < t.magnitude(static_cast<uint16_t>(mid))) hi = mid - 1;
    else lo = mid;
  }
  uint32_t b = lo;
  if (b < t.inf_bits() && !(a == t.magnitude(static_cast<uint16_t>(b)))) {
    const Fix below = a - t.magnitude(static_cast<uint16_t>(b));
    const Fix above = t.magnitude(static_cast<uint16_t>(b + 1)) - a;
    if (above < below || (above == below && (b & 1))) ++b;
  }
  return static_cast<uint16_t>(b | (neg ? 0x8000 : 0));
}

struct Tally {
  int64_t checked = 0, mismatches = 0, naive_differs = 0, subnormal = 0, overflow = 0;
};

void check(const Format& t, int q, uint16_t s, uint16_t o, Tally& tally) {
  const uint16_t want = reference(t, q, s, o);
  const float got_f = dequant_exact(q, t.to_float(s), t.to_float(o), t.bf16);
  const uint16_t got = t.from_float(got_f);
  ++tally.checked;
  const bool same = t.is_nan(want) ? std::isnan(got_f) : got == want;
  if (!same && tally.mismatches++ < 10) {
    ADD_FAILURE() << (t.bf16 ? "bf16" : "fp16") << " q=" << q << " s=0x" << std::hex << s << " o=0x" << o
                  << ": got 0x" << got << ", exact 0x" << want;
  }
  // The fp32 fma then RNE to T (the former semantics) double-rounds.
  const float naive = round_to_act(std::fma(static_cast<float>(q), t.to_float(s), t.to_float(o)), t.bf16);
  if (!t.is_nan(want) && t.from_float(naive) != want) ++tally.naive_differs;
  if ((want & 0x7fff) != 0 && (want & 0x7fff) < (t.bf16 ? 0x0080 : 0x0400)) ++tally.subnormal;
  if (t.is_inf(want) && !t.is_inf(s) && !t.is_inf(o)) ++tally.overflow;
}

std::vector<uint16_t> edge_values(const Format& t) {
  std::vector<float> floats = {0.0f, 1.0f, 1.5f, 3.0f, 0.5f, 128.0f, 1.0f / 128, 0.1f, 1e-3f, 7.0f};
  std::vector<uint16_t> bits;
  for (float f : floats) bits.push_back(t.from_float(f));
  const uint16_t more[] = {0x0001, 0x0002, 0x0003,  // smallest subnormals
                           static_cast<uint16_t>(t.bf16 ? 0x007f : 0x03ff),  // largest subnormal
                           static_cast<uint16_t>(t.bf16 ? 0x0080 : 0x0400),  // smallest normal
                           static_cast<uint16_t>(t.bf16 ? 0x3f81 : 0x3c01),  // 1 + ulp
                           static_cast<uint16_t>(t.bf16 ? 0x3fff : 0x3fff),  // just below 2
                           static_cast<uint16_t>(t.inf_bits() - 1),          // largest finite
                           static_cast<uint16_t>(t.inf_bits() - 0x100),      // a large value
                           t.inf_bits(),                                     // inf
                           static_cast<uint16_t>(t.inf_bits() + 1)};         // NaN
  for (uint16_t b : more) bits.push_back(b);
  const size_t n = bits.size();
  for (size_t i = 0; i < n; ++i) bits.push_back(static_cast<uint16_t>(bits[i] ^ 0x8000));
  return bits;
}

class WonlyDequantExact : public ::testing::TestWithParam<bool> {};

TEST_P(WonlyDequantExact, MatchesIntegerReference) {
  const Format t{GetParam()};
  Tally tally;
  const auto edges = edge_values(t);
  for (uint16_t s : edges)
    for (uint16_t o : edges)
      for (int q = -128; q <= 127; ++q) check(t, q, s, o, tally);

  std::mt19937_64 rng(GetParam() ? 11 : 12);
  const int mbits = t.bf16 ? 7 : 10;
  const int max_e = t.bf16 ? 254 : 30;
  auto pattern = [&](int e) {  // random sign and mantissa, biased exponent e (0: subnormal)
    const uint16_t m = static_cast<uint16_t>(rng() & ((1u << mbits) - 1));
    return static_cast<uint16_t>((rng() & 1 ? 0x8000 : 0) | (e << mbits) | m);
  };
  std::uniform_int_distribution<int> exp_any(0, max_e), near(-mbits - 2, 9);
  for (int i = 0; i < 12000; ++i) {
    // s anywhere; o at an exponent where q·s and o overlap in bits, so the
    // sum needs rounding and lands on ties now and then.
    const int es = exp_any(rng);
    const int eo = std::min(max_e, std::max(0, es + near(rng)));
    const uint16_t s = pattern(es);
    const uint16_t o = i % 8 == 0 ? pattern(exp_any(rng)) : pattern(eo);
    for (int q = -128; q <= 127; ++q) check(t, q, s, o, tally);
  }
  EXPECT_EQ(tally.mismatches, 0) << "of " << tally.checked;
  // The test reaches the cases that need care.
  EXPECT_GT(tally.naive_differs, 100) << "double-rounding cases exercised";
  EXPECT_GT(tally.subnormal, 100);
  EXPECT_GT(tally.overflow, 100);
  std::printf("[ %s ] %lld checked, %lld where fp32 fma + RNE differs, %lld subnormal, %lld overflow\n",
              t.bf16 ? "bf16" : "fp16", static_cast<long long>(tally.checked),
              static_cast<long long>(tally.naive_differs), static_cast<long long>(tally.subnormal),
              static_cast<long long>(tally.overflow));
}

// The API takes fp32 scales/offsets: dequant_weight rounds them to T first.
TEST_P(WonlyDequantExact, Fp32ParamsRoundToTFirst) {
  const Format t{GetParam()};
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> scale(1e-4f, 0.2f), offset(-1.0f, 1.0f);
  for (int i = 0; i < 20000; ++i) {
    const float s = scale(rng), o = offset(rng);
    const int q = static_cast<int>(rng() % 256) - 128;
    const uint16_t want = reference(t, q, t.from_float(s), t.from_float(o));
    ASSERT_EQ(t.from_float(dequant_weight(q, s, o, t.bf16)), want) << q << " " << s << " " << o;
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, WonlyDequantExact, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "bf16" : "fp16"; });

}  // namespace
}  // namespace qgemm::test
