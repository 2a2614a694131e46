// The clipping threshold of each CalibrationMethod (qgemm/calibration.h).
// kMse and kEntropy evaluate candidate thresholds at bin edges; each
// candidate costs one pass over the bins it keeps, so candidates are at most
// kMaxCandidates, evenly spaced.
#include "calibration/calibration_methods.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/check.h"
#include "core/numeric.h"

namespace qgemm::detail {
namespace {

constexpr int64_t kFirstCandidateBins = 128;
constexpr int64_t kMaxCandidates = 2048;

// The target's code (as an integer level) for v ≥ 0 at scale s, and the
// value it decodes to: int8 rounds half to even and saturates at 127; fp8
// e4m3 rounds as float_to_fp8e4m3_bits does and saturates at 448.
struct Grid {
  bool fp8;
  int level(double v, double s) const {
    const double scaled = v / s;
    if (fp8) return numeric::float_to_fp8e4m3_bits(static_cast<float>(scaled));
    const double q = std::nearbyint(scaled);  // the default rounding mode: half to even
    return static_cast<int>(q < 127.0 ? q : 127.0);
  }
  double decoded(int level, double s) const {
    const double code = fp8 ? numeric::fp8e4m3_bits_to_float(static_cast<uint8_t>(level)) : level;
    return code * s;
  }
  // Where rounding moves from `level` to the next larger one: halfway to its
  // value; the largest code (127, fp8's 0x7e = 448) saturates.
  double upper_edge(int level, double s) const {
    if (level >= (fp8 ? 0x7e : 127)) return std::numeric_limits<double>::infinity();
    return 0.5 * (decoded(level, s) + decoded(level + 1, s));
  }
};

// ∫ (v − Q(v))² dv over [a, b), Q the round trip at scale s: a sum over the
// levels [a, b) meets, each piece ∫ (v − q)² dv = ((e − q)³ − (v − q)³) / 3.
double squared_error_integral(double a, double b, double s, const Grid& grid) {
  double integral = 0, v = a;
  for (int level = grid.level(a, s); v < b; ++level) {
    const double q = grid.decoded(level, s), e = std::min(b, grid.upper_edge(level, s));
    if (e > v) integral += ((e - q) * (e - q) * (e - q) - (v - q) * (v - q) * (v - q)) / 3.0;
    v = std::max(v, e);
  }
  return integral;
}

// Numbers of bins to keep (each a candidate threshold kept · width), from
// kFirstCandidateBins up to every bin, at most kMaxCandidates of them; the
// last is always every bin.
std::vector<int64_t> candidate_bins(int64_t n) {
  const int64_t first = std::min(kFirstCandidateBins, n);
  const int64_t step = std::max<int64_t>(1, (n - first + kMaxCandidates - 1) / kMaxCandidates);
  std::vector<int64_t> kept;
  for (int64_t i = first; i < n; i += step) kept.push_back(i);
  kept.push_back(n);
  return kept;
}

float percentile_threshold(const Calibrator& c, double percentile) {
  if (percentile >= 100.0) return c.amax();
  const std::vector<int64_t>& bins = c.bins();
  const double width = c.range() / bins.size();
  const double wanted = percentile / 100.0 * static_cast<double>(c.count());
  double below = 0;
  for (size_t b = 0; b < bins.size(); ++b) {
    if (bins[b] > 0 && below + bins[b] >= wanted) {
      const double t = (b + (wanted - below) / bins[b]) * width;
      return static_cast<float>(std::min<double>(t, c.amax()));
    }
    below += bins[b];
  }
  return c.amax();
}

// The expected squared error of the round trip at scale t / qmax (values
// beyond t saturate), each bin's values taken as spread evenly over it:
// Σ count · (the mean of (v − Q(v))² over the bin).
double squared_error(const std::vector<int64_t>& bins, double width, double t, const Grid& grid, float qmax) {
  const double s = t / qmax;
  double error = 0;
  for (size_t b = 0; b < bins.size(); ++b) {
    if (bins[b] == 0) continue;
    error += static_cast<double>(bins[b]) * squared_error_integral(b * width, (b + 1) * width, s, grid) / width;
  }
  return error;
}

// KL(P ‖ Q) with the first `kept` bins (module docs in qgemm/calibration.h);
// +∞ where Q has no mass under some of P's.
double kl_divergence(const std::vector<int64_t>& bins, int64_t kept, double width, const Grid& grid, float qmax) {
  const double s = kept * width / qmax;
  std::vector<double> p(bins.begin(), bins.begin() + kept);
  for (size_t b = static_cast<size_t>(kept); b < bins.size(); ++b) p[kept - 1] += static_cast<double>(bins[b]);
  // Per level (a code of |x|: int8 0 … 127, fp8 0 … 0x7e): the histogram's
  // count over the kept bins, and P's non-empty bins.
  std::array<double, 256> level_count{};
  std::array<int64_t, 256> level_non_empty{};
  std::vector<int> level_of(static_cast<size_t>(kept));
  for (int64_t b = 0; b < kept; ++b) {
    level_of[b] = grid.level((b + 0.5) * width, s);
    level_count[level_of[b]] += static_cast<double>(bins[b]);
    if (p[b] > 0) ++level_non_empty[level_of[b]];
  }
  double p_total = 0, q_total = 0;
  std::vector<double> q(static_cast<size_t>(kept), 0.0);
  for (int64_t b = 0; b < kept; ++b) {
    if (p[b] == 0) continue;
    q[b] = level_count[level_of[b]] / level_non_empty[level_of[b]];
    p_total += p[b];
    q_total += q[b];
  }
  double kl = 0;
  for (int64_t b = 0; b < kept; ++b) {
    if (p[b] == 0) continue;
    if (q[b] == 0) return std::numeric_limits<double>::infinity();
    const double pn = p[b] / p_total, qn = q[b] / q_total;
    kl += pn * std::log(pn / qn);
  }
  return kl;
}

// The candidate threshold (kept · width, at most max |x|) with the least cost.
template <class Cost>
float best_threshold(const Calibrator& c, Cost&& cost) {
  const int64_t n = static_cast<int64_t>(c.bins().size());
  const double width = c.range() / n;
  double best_cost = std::numeric_limits<double>::infinity();
  double best = c.amax();
  for (int64_t kept : candidate_bins(n)) {
    const double t = std::min<double>(kept * width, c.amax());
    const double value = cost(kept, t);
    if (value < best_cost) best_cost = value, best = t;
  }
  return static_cast<float>(best);
}

}  // namespace

float calibration_qmax(DType target) {
  if (target == DType::kInt8) return 127.0f;
  if (target == DType::kFloat8E4M3) return numeric::kFp8E4M3Max;
  fail(ErrorKind::kType, std::string("target: expected int8 or fp8e4m3, got ") + dtype_name(target));
}

float calibration_threshold(const Calibrator& c, const CalibrationOptions& options) {
  const float qmax = calibration_qmax(options.target);
  if (options.method == CalibrationMethod::kPercentile &&
      !(options.percentile > 0.0 && options.percentile <= 100.0)) {
    fail(ErrorKind::kValue, "percentile: expected a value in (0, 100], got " + std::to_string(options.percentile));
  }
  if (c.amax() == 0.0f) return 0.0f;
  const Grid grid{options.target == DType::kFloat8E4M3};
  const std::vector<int64_t>& bins = c.bins();
  const double width = c.range() / bins.size();
  switch (options.method) {
    case CalibrationMethod::kMax: return c.amax();
    case CalibrationMethod::kPercentile: return percentile_threshold(c, options.percentile);
    case CalibrationMethod::kMse:
      return best_threshold(c, [&](int64_t, double t) { return squared_error(bins, width, t, grid, qmax); });
    case CalibrationMethod::kEntropy:
      return best_threshold(c, [&](int64_t kept, double) { return kl_divergence(bins, kept, width, grid, qmax); });
  }
  fail(ErrorKind::kValue, "method: unknown CalibrationMethod");
}

}  // namespace qgemm::detail
