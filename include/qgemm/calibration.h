// qgemm/calibration.h — a static per-tensor activation scale from
// calibration data (docs/calibration.md has every formula and edge case).
//
// A Calibrator observes calibration batches of one tensor (say, the input of
// one linear layer over a few hundred prompts) and keeps the largest |x| and
// a histogram of |x| with `bins` equal bins over [0, range). The range lies
// just above the first non-zero batch's max |x| (by a factor 1 + 2^-16); a
// later batch reaching it doubles the range as often as needed, merging pairs
// of bins, so every batch lands in the same histogram, each value in the bin
// it would have had with the final range from the start. Non-finite values are left out, as `quantize` leaves them out of
// its amax. From the histogram, `threshold` picks the clipping threshold t,
// and `scale` returns the static per-tensor scale s = t / qmax that `quantize`
// takes in QuantMode::kStaticPerTensor (qmax 127 for int8, 448 for fp8 e4m3):
//
//   kMax         t = max |x|
//   kPercentile  t = the `percentile`-th percentile of |x|, linear within a bin
//   kMse         t minimizes the squared error of the round trip through the
//                target at scale t / qmax (values beyond t saturate), each
//                bin's count taken as spread evenly over the bin
//   kEntropy     t minimizes KL(P ‖ Q) (TensorRT's entropy calibration): P is
//                the histogram up to t with the counts beyond t added to its
//                last bin; Q is P's bins merged by the target level their
//                centres round to, each level's count spread evenly over its
//                non-empty bins
//
// kMse and kEntropy try every bin edge from bin min(128, bins) up as t, and
// no t beyond max |x|. Host code: observe reads CPU tensors.
#pragma once

#include <cstdint>
#include <vector>

#include "qgemm/tensor.h"

namespace qgemm {

enum class CalibrationMethod : uint8_t { kMax, kPercentile, kMse, kEntropy };

struct CalibrationOptions {
  CalibrationMethod method = CalibrationMethod::kMax;
  DType target = DType::kInt8;  // int8 (symmetric, ±127) or fp8 e4m3 (±448)
  double percentile = 99.99;    // kPercentile: in (0, 100]
};

class Calibrator {
 public:
  // bins: 128 … 65536 (2048 is TensorRT's and PyTorch's choice).
  explicit Calibrator(int bins = 2048);

  // Adds every finite element of x (fp32, fp16 or bf16, any rank and strides,
  // on the CPU) to the histogram.
  void observe(const TensorView& x);

  // The clipping threshold t (0 before any non-zero value was observed) and
  // the scale t / qmax, stored as `quantize` stores a dynamic scale: 1 where
  // t is 0 (every value then quantizes to 0), 2^-126 where it would be
  // subnormal.
  float threshold(const CalibrationOptions& options) const;
  float scale(const CalibrationOptions& options) const;

  float amax() const { return amax_; }
  // Finite elements observed, and the histogram: bins()[b] counts the |x| in
  // [b, b + 1) · range() / bins.
  int64_t count() const { return count_; }
  double range() const { return range_; }
  const std::vector<int64_t>& bins() const { return bins_; }

 private:
  void widen_to(double amax);

  std::vector<int64_t> bins_;
  double range_ = 0.0;  // 0 until a non-zero value is seen (double: no overflow past FLT_MAX)
  float amax_ = 0.0f;
  int64_t count_ = 0;
  int64_t zeros_before_range_ = 0;  // zeros seen while range_ was 0: bin 0's, once it exists
};

}  // namespace qgemm
