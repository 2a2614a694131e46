// calibration_methods.h — the clipping threshold of each CalibrationMethod
// over a Calibrator's histogram (qgemm/calibration.h, docs/calibration.md).
#pragma once

#include "qgemm/calibration.h"

namespace qgemm::detail {

// The target's largest code magnitude: 127 (int8) or 448 (fp8 e4m3); any
// other dtype is a "target:" error.
float calibration_qmax(DType target);

// The threshold `options.method` picks (options validated here).
float calibration_threshold(const Calibrator& calibrator, const CalibrationOptions& options);

}  // namespace qgemm::detail
