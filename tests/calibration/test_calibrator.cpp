// The Calibrator (qgemm/calibration.h): its histogram (bins, widening,
// dtypes, strides, non-finite values), each method's threshold on data whose
// answer is known, the scale it hands to `quantize`, and every rejection.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "common/expect_error.h"
#include "core/numeric.h"
#include "qgemm/calibration.h"
#include "qgemm/quant.h"

namespace qgemm::test {
namespace {

TensorView view(std::vector<float>& x) { return TensorView(x.data(), DType::kFloat32, {static_cast<int64_t>(x.size())}); }

int64_t total(const std::vector<int64_t>& bins) { return std::accumulate(bins.begin(), bins.end(), int64_t{0}); }

// Normal activations (σ = 1) with a few outliers of magnitude 50 … 100, the
// shape that makes clipping pay for int8.
std::vector<float> normal_with_outliers(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> big(50.0f, 100.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = normal(rng);
  for (int i = 0; i < 8; ++i) x[static_cast<size_t>(i * 997 % n)] = (i % 2 ? -1.0f : 1.0f) * big(rng);
  return x;
}

// The mean squared error of quantizing x symmetrically to int8 at threshold t.
double int8_mse(const std::vector<float>& x, double t) {
  const double s = t / 127.0;
  double sum = 0;
  for (float v : x) {
    const double q = std::min(127.0, std::max(-127.0, std::nearbyint(v / s)));
    sum += (v - q * s) * (v - q * s);
  }
  return sum / x.size();
}

// The range lies just above max |x| (1 + 2^-16 times it); each |x| goes to
// bin floor(|x| · bins / range), max |x| to the last.
TEST(Calibrator, HistogramPlacesEachValue) {
  Calibrator c(128);
  std::vector<float> x = {0.0f, -0.5f, 1.0f, 0.3f, -1.0f, 0.75f};
  c.observe(view(x));
  EXPECT_EQ(c.count(), 6);
  EXPECT_EQ(c.amax(), 1.0f);
  EXPECT_EQ(c.range(), 1.0 + 0x1p-16);
  std::vector<int64_t> expected(128, 0);
  for (float v : x) ++expected[static_cast<size_t>(std::fabs(v) * 128.0 / c.range())];
  EXPECT_EQ(c.bins(), expected);
  EXPECT_EQ(c.bins()[0], 1);
  EXPECT_EQ(c.bins()[127], 2);  // ±1.0
  EXPECT_EQ(c.bins()[38], 1);   // 0.3 · 128 = 38.4
}

// A batch reaching the range doubles it (twice: from just above 1 to just
// above 4) and merges bins; the result is the histogram a calibrator whose
// first batch set the range gets, every value in the same bin.
TEST(Calibrator, WideningMergesBinsExactly) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<float> small(5000), large(5000);
  for (auto& v : small) v = unit(rng);
  for (auto& v : large) v = 4.0f * unit(rng);
  small[0] = 1.0f;   // max |x| of the first batch
  large[0] = -4.0f;  // of the second: four times it
  Calibrator widened(2048), direct(2048);
  widened.observe(view(small));
  widened.observe(view(large));
  direct.observe(view(large));
  direct.observe(view(small));
  EXPECT_EQ(widened.range(), direct.range());
  EXPECT_EQ(widened.range(), 4.0 * (1.0 + 0x1p-16));
  EXPECT_EQ(widened.bins(), direct.bins());
  EXPECT_EQ(widened.count(), 10000);
  EXPECT_EQ(widened.amax(), 4.0f);
}

// Values up to the largest float: the range (kept in double) still lies
// above them, and every method's threshold is finite.
TEST(Calibrator, HugeValues) {
  Calibrator c;
  std::vector<float> x = {std::numeric_limits<float>::max(), -1e38f, 3.0f, 0.0f};
  c.observe(view(x));
  EXPECT_EQ(c.amax(), std::numeric_limits<float>::max());
  EXPECT_GT(c.range(), static_cast<double>(std::numeric_limits<float>::max()));
  EXPECT_EQ(c.bins().back(), 1);
  EXPECT_EQ(total(c.bins()), 4);
  for (auto method : {CalibrationMethod::kMax, CalibrationMethod::kPercentile, CalibrationMethod::kMse,
                      CalibrationMethod::kEntropy}) {
    for (DType target : {DType::kInt8, DType::kFloat8E4M3}) {
      const float t = c.threshold({method, target});
      EXPECT_TRUE(std::isfinite(t) && t > 0.0f) << static_cast<int>(method);
      EXPECT_TRUE(std::isfinite(c.scale({method, target})));
    }
  }
}

TEST(Calibrator, LeavesOutNonFiniteValues) {
  Calibrator c;
  std::vector<float> x = {1.0f, std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity(),
                          2.0f, std::numeric_limits<float>::infinity()};
  c.observe(view(x));
  EXPECT_EQ(c.count(), 2);
  EXPECT_EQ(c.amax(), 2.0f);
  EXPECT_EQ(total(c.bins()), 2);
}

// Before any non-zero value the threshold is 0 and the scale 1; the zeros
// seen so far go to bin 0 once a range exists.
TEST(Calibrator, ZerosFirst) {
  Calibrator c;
  std::vector<float> zeros(10, 0.0f), ones(3, 1.0f);
  c.observe(view(zeros));
  for (auto method : {CalibrationMethod::kMax, CalibrationMethod::kPercentile, CalibrationMethod::kMse,
                      CalibrationMethod::kEntropy}) {
    EXPECT_EQ(c.threshold({method}), 0.0f);
    EXPECT_EQ(c.scale({method}), 1.0f);
  }
  c.observe(view(ones));
  EXPECT_EQ(c.bins()[0], 10);
  EXPECT_EQ(c.bins().back(), 3);
  EXPECT_EQ(c.count(), 13);
}

// fp16 and bf16 batches of the same (representable) values, contiguous or as
// a strided sub-matrix, fill the same histogram as fp32.
TEST(Calibrator, DtypesAndStrides) {
  const int64_t rows = 6, cols = 40, ld = 48;
  std::mt19937_64 rng(9);
  std::uniform_int_distribution<int> small(-128, 128);
  std::vector<float> dense(rows * cols);
  for (auto& v : dense) v = small(rng) / 16.0f;  // ≤ 8 significant bits: exact in fp16 and bf16
  std::vector<float> padded(rows * ld, 1e30f);    // the padding must not be read
  std::vector<uint16_t> half(rows * cols), brain(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < cols; ++k) padded[r * ld + k] = dense[r * cols + k];
  for (size_t i = 0; i < dense.size(); ++i) {
    half[i] = numeric::float_to_fp16_bits(dense[i]);
    brain[i] = numeric::float_to_bf16_bits(dense[i]);
  }
  Calibrator reference(256), f16(256), b16(256), strided(256), transposed(256);
  reference.observe(TensorView(dense.data(), DType::kFloat32, {rows, cols}));
  f16.observe(TensorView(half.data(), DType::kFloat16, {rows, cols}));
  b16.observe(TensorView(brain.data(), DType::kBFloat16, {rows * cols}));
  strided.observe(TensorView::strided(padded.data(), DType::kFloat32, {rows, cols}, {ld, 1}));
  transposed.observe(TensorView::strided(dense.data(), DType::kFloat32, {cols, rows}, {1, cols}));
  const std::pair<const char*, const Calibrator*> views[] = {
      {"fp16", &f16}, {"bf16", &b16}, {"strided", &strided}, {"transposed", &transposed}};
  for (const auto& [name, c] : views) {
    EXPECT_EQ(c->bins(), reference.bins()) << name;
    EXPECT_EQ(c->amax(), reference.amax()) << name;
    EXPECT_EQ(c->count(), rows * cols) << name;
  }
}

TEST(Calibrator, MaxAndPercentile) {
  // |x| uniform on (0, 1): the p-th percentile is p / 100, within a bin.
  const int n = 200000;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = (i % 2 ? -1.0f : 1.0f) * (i + 0.5f) / n;
  Calibrator c;
  c.observe(view(x));
  const double width = c.range() / 2048.0;
  EXPECT_EQ(c.threshold({CalibrationMethod::kMax}), c.amax());
  for (double p : {50.0, 99.0, 99.9, 99.99}) {
    EXPECT_NEAR(c.threshold({CalibrationMethod::kPercentile, DType::kInt8, p}), p / 100.0, width) << p;
  }
  EXPECT_EQ(c.threshold({CalibrationMethod::kPercentile, DType::kInt8, 100.0}), c.amax());
  EXPECT_FLOAT_EQ(c.scale({CalibrationMethod::kMax}), c.amax() / 127.0f);
  EXPECT_FLOAT_EQ(c.scale({CalibrationMethod::kMax, DType::kFloat8E4M3}), c.amax() / 448.0f);
}

// Student's t with 3 degrees of freedom: a continuous heavy tail.
std::vector<float> heavy_tailed(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::student_t_distribution<float> t3(3.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) v = t3(rng);
  return x;
}

// On a heavy tail, MSE and entropy clip well below max |x|, and MSE's
// threshold quantizes the data itself (not just the histogram) with less
// error than max |x|, half or twice the threshold; on uniform data both keep
// (nearly) the whole range.
TEST(Calibrator, MseAndEntropyClipTheTail) {
  const std::vector<float> x = heavy_tailed(100000, 5);
  Calibrator c;
  std::vector<float> copy = x;
  c.observe(view(copy));
  const float amax = c.amax();
  const float mse = c.threshold({CalibrationMethod::kMse});
  const float entropy = c.threshold({CalibrationMethod::kEntropy});
  // (Measured: max |x| 40.3, MSE 33.3, entropy 22.1: int8's 127 levels make
  // clipping this tail pay only a little.)
  EXPECT_GT(mse, 0.0f);
  EXPECT_LT(mse, 0.9f * amax);
  EXPECT_GT(entropy, 0.0f);
  EXPECT_LT(entropy, 0.75f * amax);
  EXPECT_LT(int8_mse(x, mse), int8_mse(x, amax));
  EXPECT_LT(int8_mse(x, mse), int8_mse(x, 0.5 * mse));
  // Within 1 % of the data's own error at 10 % either side (the search
  // models each bin's values as spread evenly over it).
  EXPECT_LT(int8_mse(x, mse), 1.01 * int8_mse(x, 0.9 * mse));
  EXPECT_LT(int8_mse(x, mse), 1.01 * int8_mse(x, std::min(1.1 * mse, double{amax})));

  std::vector<float> uniform(100000);
  for (size_t i = 0; i < uniform.size(); ++i) uniform[i] = (i % 2 ? -1.0f : 1.0f) * (i + 0.5f) / uniform.size();
  Calibrator u;
  u.observe(view(uniform));
  EXPECT_GT(u.threshold({CalibrationMethod::kMse}), 0.95f * u.amax());
  EXPECT_GT(u.threshold({CalibrationMethod::kEntropy}), 0.9f * u.amax());
  EXPECT_LE(u.threshold({CalibrationMethod::kEntropy}), u.amax());
}

// MSE's model takes each bin's values as spread evenly over the bin, so its
// threshold stays put as the bins get finer (within 1 % from 512 to 8192).
TEST(Calibrator, MseHardlyDependsOnTheBinCount) {
  std::vector<float> x = heavy_tailed(100000, 23);
  for (DType target : {DType::kInt8, DType::kFloat8E4M3}) {
    std::vector<float> thresholds;
    for (int bins : {512, 2048, 8192}) {
      Calibrator c(bins);
      c.observe(view(x));
      thresholds.push_back(c.threshold({CalibrationMethod::kMse, target}));
    }
    for (float t : thresholds) EXPECT_NEAR(t, thresholds.back(), 0.01 * thresholds.back()) << dtype_name(target);
  }
}

// fp8's levels are denser near 0: for the same data its MSE threshold clips
// no more than int8's, and every threshold stays within (0, max |x|].
TEST(Calibrator, Fp8Target) {
  std::vector<float> x = normal_with_outliers(50000, 11);
  Calibrator c;
  c.observe(view(x));
  for (auto method : {CalibrationMethod::kMax, CalibrationMethod::kPercentile, CalibrationMethod::kMse,
                      CalibrationMethod::kEntropy}) {
    const float t = c.threshold({method, DType::kFloat8E4M3});
    EXPECT_GT(t, 0.0f);
    EXPECT_LE(t, c.amax());
    EXPECT_FLOAT_EQ(c.scale({method, DType::kFloat8E4M3}), t / 448.0f);
  }
  EXPECT_GE(c.threshold({CalibrationMethod::kMse, DType::kFloat8E4M3}), c.threshold({CalibrationMethod::kMse}));
}

// The scale goes straight into static per-tensor quantize: on normal data
// with a few outliers 50–100σ out, the MSE scale's round trip has less error
// than the max scale's (measured: 0.036 against 0.050).
TEST(Calibrator, ScaleFeedsStaticQuantize) {
  const int64_t rows = 100, cols = 1000;
  std::vector<float> x = normal_with_outliers(rows * cols, 17);
  Calibrator c;
  c.observe(TensorView(x.data(), DType::kFloat32, {rows, cols}));
  const auto round_trip_error = [&](CalibrationMethod method) {
    std::vector<float> scale = {c.scale({method})}, back(x.size());
    std::vector<int8_t> q(x.size());
    QuantOptions options;
    options.mode = QuantMode::kStaticPerTensor;
    quantize(TensorView(q.data(), DType::kInt8, {rows, cols}), TensorView(scale.data(), DType::kFloat32, {1}),
             std::nullopt, TensorView(x.data(), DType::kFloat32, {rows, cols}), options);
    dequantize(TensorView(back.data(), DType::kFloat32, {rows, cols}), TensorView(q.data(), DType::kInt8, {rows, cols}),
               TensorView(scale.data(), DType::kFloat32, {1}), std::nullopt, options);
    double sum = 0;
    for (size_t i = 0; i < x.size(); ++i) sum += (x[i] - back[i]) * (x[i] - back[i]);
    return sum / x.size();
  };
  EXPECT_LT(round_trip_error(CalibrationMethod::kMse), 0.9 * round_trip_error(CalibrationMethod::kMax));
}

TEST(Calibrator, Rejections) {
  expect_error([] { Calibrator c(64); }, ErrorKind::kValue, {"bins", "128", "64"});
  expect_error([] { Calibrator c(1 << 17); }, ErrorKind::kValue, {"bins", "65536"});
  Calibrator c;
  std::vector<int8_t> codes(4, 1);
  expect_error([&] { c.observe(TensorView(codes.data(), DType::kInt8, {4})); }, ErrorKind::kType,
               {"x", "fp32, fp16 or bf16", "int8"});
  std::vector<float> x = {1.0f, 2.0f};
  expect_error([&] { c.observe(TensorView(x.data(), DType::kFloat32, {2}, Device::cuda(0))); }, ErrorKind::kValue,
               {"x", "CPU"});
  expect_error([&] { c.observe(TensorView(static_cast<float*>(nullptr), DType::kFloat32, {2})); }, ErrorKind::kValue,
               {"x", "null"});
  c.observe(view(x));
  expect_error([&] { c.threshold({CalibrationMethod::kMax, DType::kInt32}); }, ErrorKind::kType,
               {"target", "int8 or fp8e4m3", "int32"});
  for (double p : {0.0, -1.0, 100.5}) {
    expect_error([&] { c.threshold({CalibrationMethod::kPercentile, DType::kInt8, p}); }, ErrorKind::kValue,
                 {"percentile", "(0, 100]"});
  }
  EXPECT_EQ(c.count(), 2);  // nothing rejected was counted
}

}  // namespace
}  // namespace qgemm::test
