// tensor_arg.h — Python arguments → qgemm::TensorView over DLPack, zero-copy.
//
// A tensor argument is anything nanobind imports as an ndarray: an object
// with __dlpack__ (PyTorch, CuPy, JAX, NumPy), a DLPack capsule, or a buffer;
// or a tuple (array, "dtype") that reinterprets the array's bytes as another
// dtype of the same element size. The tuple is how fp8 travels from
// frameworks whose DLPack export lacks it: the Python layer passes a uint8
// view with "fp8e4m3" (qgemm/_arrays.py). Strides are in elements, as in
// DLPack and TensorView.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <optional>
#include <string>
#include <vector>

#include "qgemm/tensor.h"

namespace qgemm::python {

namespace nb = nanobind;

// The imported arrays of one call: they keep the DLPack exports (and so the
// memory behind a capsule passed without another owner) alive until the op
// has returned, while the GIL is released.
class CallArrays {
 public:
  TensorView view(nb::handle object, const char* name);
  std::optional<TensorView> optional_view(nb::handle object, const char* name);

 private:
  std::vector<nb::ndarray<nb::ro>> keep_;
};

// None → the legacy default stream (nullptr); else an int cudaStream_t handle.
Stream to_stream(nb::handle stream);

// qgemm's dtype name ("int8", "fp8e4m3", "bf16", …) → DType; another name is
// a TypeError naming the argument.
DType dtype_from_name(const std::string& dtype, const char* name);

void bind_gemm(nb::module_& m);
void bind_quant(nb::module_& m);
void bind_fused(nb::module_& m);
void bind_weight_only(nb::module_& m);
void bind_calibration(nb::module_& m);
void bind_kv_cache(nb::module_& m);

}  // namespace qgemm::python
