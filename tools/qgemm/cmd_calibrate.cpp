// `qgemm calibrate`: the static scale of one activation tensor by each
// calibration method and target (qgemm/calibration.h), with the error each
// leaves after the round trip through static quantize / dequantize on the
// same data. Batches come from .npy files (one batch each, float16 / 32 / 64,
// any shape with the hidden size last) or, without --npy, are synthetic:
// Student's t with 3 degrees of freedom, the heavy tail activations have.
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_common.h"
#include "commands.h"
#include "npy.h"
#include "qgemm/calibration.h"
#include "qgemm/quant.h"

namespace qgemm::tools {
namespace {

struct Batch {
  int64_t rows, cols;
  std::vector<float> x;
};

std::vector<Batch> npy_batches(const std::string& list) {
  std::vector<Batch> batches;
  std::stringstream paths(list);
  for (std::string path; std::getline(paths, path, ',');) {
    NpyArray array = read_npy(path);
    const int64_t cols = array.shape.empty() ? 1 : array.shape.back();
    if (cols == 0 || array.data.empty()) throw std::invalid_argument(path + ": no elements");
    batches.push_back({static_cast<int64_t>(array.data.size()) / cols, cols, std::move(array.data)});
  }
  return batches;
}

std::vector<Batch> synthetic_batches(int count, int64_t rows, int64_t cols) {
  std::mt19937_64 rng(2026);
  std::student_t_distribution<float> t3(3.0f);
  std::vector<Batch> batches(static_cast<size_t>(count), Batch{rows, cols, {}});
  for (Batch& b : batches) {
    b.x.resize(static_cast<size_t>(rows * cols));
    for (float& v : b.x) v = t3(rng);
  }
  return batches;
}

// sqrt(Σ (x − x̂)² / Σ x²) over every batch, x̂ the static round trip at `scale`.
double relative_rms_error(const std::vector<Batch>& batches, float scale, DType target) {
  double error = 0, signal = 0;
  QuantOptions options;
  options.mode = QuantMode::kStaticPerTensor;
  std::vector<float> s = {scale};
  for (const Batch& b : batches) {
    std::vector<uint8_t> q(b.x.size());
    std::vector<float> back(b.x.size());
    const TensorView codes(q.data(), target, {b.rows, b.cols});
    quantize(codes, TensorView(s.data(), DType::kFloat32, {1}), std::nullopt,
             TensorView(b.x.data(), DType::kFloat32, {b.rows, b.cols}), options);
    dequantize(TensorView(back.data(), DType::kFloat32, {b.rows, b.cols}), codes,
               TensorView(s.data(), DType::kFloat32, {1}), std::nullopt, options);
    for (size_t i = 0; i < b.x.size(); ++i) {
      if (!std::isfinite(b.x[i])) continue;
      error += (b.x[i] - back[i]) * static_cast<double>(b.x[i] - back[i]);
      signal += b.x[i] * static_cast<double>(b.x[i]);
    }
  }
  return signal > 0 ? std::sqrt(error / signal) : 0.0;
}

}  // namespace

int cmd_calibrate(int argc, char** argv) {
  const Options options(argc, argv, 2, {"npy", "bins", "percentile", "batches", "tokens", "hidden"});
  const std::vector<Batch> batches =
      options.has("npy") ? npy_batches(options.get("npy", ""))
                         : synthetic_batches(options.get_int("batches", 8), options.get_int("tokens", 128),
                                             options.get_int("hidden", 4096));
  Calibrator calibrator(options.get_int("bins", 2048));
  int64_t values = 0;
  for (const Batch& b : batches) {
    calibrator.observe(TensorView(b.x.data(), DType::kFloat32, {b.rows, b.cols}));
    values += static_cast<int64_t>(b.x.size());
  }
  const double percentile = options.get_double("percentile", 99.99);
  std::printf("%zu batches (%s), %lld values (%lld finite), max |x| %g, %zu bins over [0, %g)\n", batches.size(),
              options.has("npy") ? "--npy" : "synthetic Student's t, 3 degrees of freedom",
              static_cast<long long>(values), static_cast<long long>(calibrator.count()), calibrator.amax(),
              calibrator.bins().size(), calibrator.range());
  std::printf("%-11s %-8s %12s %12s %24s\n", "method", "target", "threshold", "scale", "round-trip rel. rms error");
  const std::pair<const char*, CalibrationMethod> methods[] = {{"max", CalibrationMethod::kMax},
                                                               {"percentile", CalibrationMethod::kPercentile},
                                                               {"mse", CalibrationMethod::kMse},
                                                               {"entropy", CalibrationMethod::kEntropy}};
  for (DType target : {DType::kInt8, DType::kFloat8E4M3}) {
    for (const auto& [name, method] : methods) {
      const CalibrationOptions choice{method, target, percentile};
      const float scale = calibrator.scale(choice);
      std::printf("%-11s %-8s %12.5g %12.5g %24.3e\n", name, dtype_name(target), calibrator.threshold(choice), scale,
                  relative_rms_error(batches, scale, target));
    }
  }
  return 0;
}

}  // namespace qgemm::tools
