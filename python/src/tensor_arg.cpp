// DLPack → TensorView conversion (tensor_arg.h) and the module definition:
// the qgemm::Error → Python exception mapping and the build information.
#include "tensor_arg.h"

#include <nanobind/stl/string.h>

#include <string>

#include "qgemm/error.h"
#include "qgemm/launch.h"
#include "qgemm/version.h"

namespace qgemm::python {
namespace {

// DLPack 1.1 type code of OCP fp8 e4m3 "fn" (kDLFloat8_e4m3fn), exported by
// frameworks with a native fp8 dtype (e.g. recent PyTorch, ml_dtypes).
constexpr uint8_t kDLFloat8E4M3Fn = 10;

[[noreturn]] void fail(ErrorKind kind, const char* name, const std::string& what) {
  throw Error(kind, std::string(name) + ": " + what);
}

DType dtype_from_dlpack(const nb::dlpack::dtype& dt, const char* name) {
  using code = nb::dlpack::dtype_code;
  if (dt.lanes == 1) {
    const auto c = dt.code;
    if (c == static_cast<uint8_t>(code::Int) && dt.bits == 8) return DType::kInt8;
    if (c == static_cast<uint8_t>(code::Int) && dt.bits == 32) return DType::kInt32;
    if (c == static_cast<uint8_t>(code::Int) && dt.bits == 64) return DType::kInt64;
    if (c == static_cast<uint8_t>(code::UInt) && dt.bits == 8) return DType::kUInt8;
    if (c == static_cast<uint8_t>(code::Float) && dt.bits == 16) return DType::kFloat16;
    if (c == static_cast<uint8_t>(code::Float) && dt.bits == 32) return DType::kFloat32;
    if (c == static_cast<uint8_t>(code::Bfloat) && dt.bits == 16) return DType::kBFloat16;
    if (c == kDLFloat8E4M3Fn && dt.bits == 8) return DType::kFloat8E4M3;
  }
  fail(ErrorKind::kType, name,
       "expected dtype int8, uint8, int32, int64, fp8e4m3, fp16, bf16 or fp32, got a DLPack dtype (code " +
           std::to_string(dt.code) + ", " + std::to_string(dt.bits) + " bits, " +
           std::to_string(dt.lanes) + " lanes)");
}

Device device_from_dlpack(int32_t type, int32_t id, const char* name) {
  if (type == nb::device::cpu::value || type == nb::device::cuda_host::value) return Device::cpu();
  if (type == nb::device::cuda::value || type == nb::device::cuda_managed::value) return Device::cuda(id);
  fail(ErrorKind::kValue, name,
       "expected CPU or CUDA memory, got DLPack device type " + std::to_string(type));
}

}  // namespace

DType dtype_from_name(const std::string& dtype, const char* name) {
  for (DType d : {DType::kInt8, DType::kUInt8, DType::kInt32, DType::kFloat8E4M3, DType::kFloat16,
                  DType::kBFloat16, DType::kFloat32, DType::kInt64}) {
    if (dtype == dtype_name(d)) return d;
  }
  fail(ErrorKind::kType, name, "unknown dtype name '" + dtype + "'");
}

TensorView CallArrays::view(nb::handle object, const char* name) {
  if (object.is_none()) fail(ErrorKind::kValue, name, "a tensor is required, got None");
  nb::handle array = object;
  std::optional<DType> reinterpret;
  if (nb::isinstance<nb::tuple>(object)) {
    nb::tuple pair = nb::borrow<nb::tuple>(object);
    if (pair.size() != 2 || !nb::isinstance<nb::str>(pair[1])) {
      fail(ErrorKind::kType, name, "expected an array or an (array, dtype name) pair");
    }
    array = pair[0];
    reinterpret = dtype_from_name(nb::cast<std::string>(pair[1]), name);
  }
  nb::ndarray<nb::ro> nd;
  if (!nb::try_cast(array, nd, false)) {
    fail(ErrorKind::kType, name,
         "expected an array supporting DLPack (torch, cupy, jax, numpy), got " +
             nb::cast<std::string>(nb::str(array.type())));
  }
  DType dtype = dtype_from_dlpack(nd.dtype(), name);
  if (reinterpret) {
    if (dtype_size(*reinterpret) != dtype_size(dtype)) {
      fail(ErrorKind::kType, name,
           std::string("cannot view ") + dtype_name(dtype) + " as " + dtype_name(*reinterpret) +
               " (element sizes differ)");
    }
    dtype = *reinterpret;
  }
  if (nd.ndim() > static_cast<size_t>(TensorView::kMaxRank)) {
    fail(ErrorKind::kValue, name,
         "expected rank <= " + std::to_string(TensorView::kMaxRank) + ", got " + std::to_string(nd.ndim()));
  }
  int64_t shape[TensorView::kMaxRank] = {}, strides[TensorView::kMaxRank] = {};
  for (size_t d = 0; d < nd.ndim(); ++d) {
    shape[d] = static_cast<int64_t>(nd.shape(d));
    strides[d] = nd.stride(d);
  }
  const Device device = device_from_dlpack(nd.device_type(), nd.device_id(), name);
  TensorView view(nd.data(), dtype, static_cast<int>(nd.ndim()), shape, strides, device);
  keep_.push_back(std::move(nd));
  return view;
}

std::optional<TensorView> CallArrays::optional_view(nb::handle object, const char* name) {
  if (object.is_none()) return std::nullopt;
  return view(object, name);
}

Stream to_stream(nb::handle stream) {
  if (stream.is_none()) return nullptr;
  if (!nb::isinstance<nb::int_>(stream)) {
    throw Error(ErrorKind::kType, "stream: expected None or an int cudaStream_t handle, got " +
                                      nb::cast<std::string>(nb::str(stream.type())));
  }
  return reinterpret_cast<Stream>(nb::cast<uintptr_t>(stream));
}

}  // namespace qgemm::python

NB_MODULE(_qgemm, m) {
  namespace nb = nanobind;
  using qgemm::Error;
  using qgemm::ErrorKind;
  m.doc() = "qgemm's C++ ops over DLPack (out-parameter forms); use the qgemm package";
  // qgemm::Error → the Python exception of its kind, with the same message.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      switch (e.kind()) {
        case ErrorKind::kType: PyErr_SetString(PyExc_TypeError, e.what()); break;
        case ErrorKind::kValue: PyErr_SetString(PyExc_ValueError, e.what()); break;
        case ErrorKind::kNotImplemented: PyErr_SetString(PyExc_NotImplementedError, e.what()); break;
        case ErrorKind::kBackend: PyErr_SetString(PyExc_RuntimeError, e.what()); break;
      }
    }
  });
  m.def("version", &qgemm::version);
  m.def("built_with_cuda", &qgemm::built_with_cuda);
  m.def("cuda_archs", &qgemm::cuda_archs);
  m.def("cuda_device_count", &qgemm::cuda_device_count);
  m.def("set_programmatic_dependent_launch", &qgemm::set_programmatic_dependent_launch, nb::arg("enabled"));
  m.def("programmatic_dependent_launch", &qgemm::programmatic_dependent_launch);
  qgemm::python::bind_gemm(m);
  qgemm::python::bind_quant(m);
  qgemm::python::bind_fused(m);
  qgemm::python::bind_weight_only(m);
  qgemm::python::bind_calibration(m);
  qgemm::python::bind_kv_cache(m);
}
