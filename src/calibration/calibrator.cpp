// Calibrator: the running max |x| and the histogram of |x| (observe), and
// the scale from a threshold. The threshold methods: calibration_methods.cpp.
#include <cmath>
#include <string>

#include "calibration/calibration_methods.h"
#include "core/check.h"
#include "gemm/cpu/output_store.h"
#include "qgemm/calibration.h"

namespace qgemm {
namespace {

constexpr int kMinBins = 128;
constexpr int kMaxBins = 1 << 16;

// Calls visit(|x|) for every finite element of x, in any rank and strides.
template <class Visit>
void for_each_finite_abs(const TensorView& x, Visit&& visit) {
  const int rank = x.rank();
  int64_t shape[TensorView::kMaxRank] = {1, 1, 1, 1}, strides[TensorView::kMaxRank] = {0, 0, 0, 0};
  for (int d = 0; d < rank; ++d) {  // right-aligned into four dimensions
    shape[TensorView::kMaxRank - rank + d] = x.size(d);
    strides[TensorView::kMaxRank - rank + d] = x.stride(d);
  }
  for (int64_t i0 = 0; i0 < shape[0]; ++i0)
    for (int64_t i1 = 0; i1 < shape[1]; ++i1)
      for (int64_t i2 = 0; i2 < shape[2]; ++i2)
        for (int64_t i3 = 0; i3 < shape[3]; ++i3) {
          const int64_t offset = i0 * strides[0] + i1 * strides[1] + i2 * strides[2] + i3 * strides[3];
          const float v = detail::load_float(x.data(), offset, x.dtype());
          if (std::isfinite(v)) visit(std::fabs(v));
        }
}

}  // namespace

Calibrator::Calibrator(int bins) {
  if (bins < kMinBins || bins > kMaxBins) {
    detail::fail(ErrorKind::kValue, "bins: expected 128 … " + std::to_string(kMaxBins) + ", got " +
                                        std::to_string(bins));
  }
  bins_.assign(static_cast<size_t>(bins), 0);
}

// The first range lies just above the first non-zero max |x|, so that no
// value sits on the range's edge: bin b then holds [b, b + 1) · range / bins
// for every value, and the doubling below is exact — each value lands in the
// bin a histogram with the doubled range from the start would give it.
constexpr double kRangeMargin = 1.0 + 0x1p-16;

// Doubles the range until it exceeds `amax`, each doubling merging bins 2j
// and 2j + 1 into bin j (equal bins stay equal and aligned).
void Calibrator::widen_to(double amax) {
  if (range_ == 0.0) {
    range_ = amax * kRangeMargin;
    bins_[0] += zeros_before_range_;
    zeros_before_range_ = 0;
    return;
  }
  int doublings = 0;
  double range = range_;
  while (range <= amax) range *= 2.0, ++doublings;
  if (doublings == 0) return;
  std::vector<int64_t> merged(bins_.size(), 0);
  const int shift = doublings < 31 ? doublings : 31;  // beyond that every bin lands in bin 0
  for (size_t b = 0; b < bins_.size(); ++b) merged[b >> shift] += bins_[b];
  bins_.swap(merged);
  range_ = range;
}

void Calibrator::observe(const TensorView& x) {
  detail::check_dtype(x, "x", {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
  if (!x.device().is_cpu()) {
    detail::fail(ErrorKind::kValue,
                 "x: expected a CPU tensor (calibration reads the batch on the host), got a CUDA tensor");
  }
  detail::check_not_null(x, "x");
  detail::check_element_aligned(x, "x");
  if (x.numel() == 0) return;
  float batch_amax = 0.0f;
  for_each_finite_abs(x, [&](float a) { batch_amax = a > batch_amax ? a : batch_amax; });
  if (batch_amax > 0.0f && batch_amax >= range_) widen_to(batch_amax);
  amax_ = batch_amax > amax_ ? batch_amax : amax_;
  const int64_t last = static_cast<int64_t>(bins_.size()) - 1;
  const double per_unit = range_ > 0.0 ? static_cast<double>(bins_.size()) / range_ : 0.0;
  for_each_finite_abs(x, [&](float a) {
    ++count_;
    if (range_ == 0.0) {
      ++zeros_before_range_;  // a == 0: no range yet
      return;
    }
    const int64_t b = static_cast<int64_t>(a * per_unit);
    ++bins_[static_cast<size_t>(b < last ? b : last)];
  });
}

float Calibrator::threshold(const CalibrationOptions& options) const {
  return detail::calibration_threshold(*this, options);
}

float Calibrator::scale(const CalibrationOptions& options) const {
  const float t = threshold(options);
  if (t == 0.0f) return 1.0f;
  // As `quantize` stores a scale that would be subnormal: the smallest normal.
  return std::fmax(t / detail::calibration_qmax(options.target), 0x1p-126f);
}

}  // namespace qgemm
