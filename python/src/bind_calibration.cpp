// Python bindings of qgemm/calibration.h: the Calibrator class. The
// method is a name ('max', 'percentile', 'mse', 'entropy') and the target a
// dtype name ('int8', 'fp8e4m3'); qgemm/calibration.py canonicalizes
// framework dtypes before they get here.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "qgemm/calibration.h"
#include "qgemm/error.h"
#include "tensor_arg.h"

namespace qgemm::python {
namespace {

CalibrationOptions make_options(const std::string& method, const std::string& target, double percentile) {
  CalibrationOptions options;
  if (method == "max") {
    options.method = CalibrationMethod::kMax;
  } else if (method == "percentile") {
    options.method = CalibrationMethod::kPercentile;
  } else if (method == "mse") {
    options.method = CalibrationMethod::kMse;
  } else if (method == "entropy") {
    options.method = CalibrationMethod::kEntropy;
  } else {
    throw Error(ErrorKind::kValue,
                "method: expected 'max', 'percentile', 'mse' or 'entropy', got '" + method + "'");
  }
  options.target = dtype_from_name(target, "target");
  options.percentile = percentile;
  return options;
}

}  // namespace

void bind_calibration(nb::module_& m) {
  nb::class_<Calibrator>(m, "Calibrator")
      .def(nb::init<int>(), nb::arg("bins") = 2048)
      .def(
          "observe",
          [](Calibrator& self, nb::handle x) {
            CallArrays arrays;
            const TensorView x_v = arrays.view(x, "x");
            nb::gil_scoped_release unlocked;
            self.observe(x_v);
          },
          nb::arg("x"))
      .def(
          "threshold",
          [](const Calibrator& self, const std::string& method, const std::string& target, double percentile) {
            return self.threshold(make_options(method, target, percentile));
          },
          nb::arg("method") = "max", nb::arg("target") = "int8", nb::arg("percentile") = 99.99)
      .def(
          "scale",
          [](const Calibrator& self, const std::string& method, const std::string& target, double percentile) {
            return self.scale(make_options(method, target, percentile));
          },
          nb::arg("method") = "max", nb::arg("target") = "int8", nb::arg("percentile") = 99.99)
      .def_prop_ro("amax", &Calibrator::amax)
      .def_prop_ro("count", &Calibrator::count)
      .def_prop_ro("range", &Calibrator::range)
      .def_prop_ro("bins", [](const Calibrator& self) { return self.bins(); });
}

}  // namespace qgemm::python
