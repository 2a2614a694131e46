// tensor_arg.h — turning Python arguments into qgemm::TensorView over DLPack,
// zero-copy. A tensor argument is any object nanobind accepts as an ndarray
// (PyTorch, CuPy, JAX, NumPy: anything with __dlpack__), or a tuple
// (array, "dtype") that reinterprets the array's bytes as another dtype of
// the same size (how fp8 travels from frameworks whose DLPack export lacks
// it: the Python layer passes a uint8 view with "fp8e4m3").
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <optional>

#include "qgemm/tensor.h"

namespace qgemm::python {

namespace nb = nanobind;

TensorView to_view(nb::handle object, const char* name);
std::optional<TensorView> to_optional_view(nb::handle object, const char* name);
Stream to_stream(nb::handle stream);

void bind_gemm(nb::module_& m);
void bind_quant(nb::module_& m);

}  // namespace qgemm::python
