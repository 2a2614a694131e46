// DLPack → TensorView conversion (tensor_arg.h) and the module definition.
#include "tensor_arg.h"

#include <nanobind/stl/string.h>

#include <string>

#include "qgemm/error.h"
#include "qgemm/version.h"

namespace qgemm::python {
namespace {

// DLPack 1.x type code of OCP fp8 e4m3 "fn" (kDLFloat8_e4m3fn).
constexpr uint8_t kDLFloat8E4M3Fn = 10;

DType dtype_from_dlpack(const nb::dlpack::dtype& dt, const char* name) {
  using code = nb::dlpack::dtype_code;
  if (dt.lanes == 1) {
    if (dt.code == static_cast<uint8_t>(code::Int) && dt.bits == 8) return DType::kInt8;
    if (dt.code == static_cast<uint8_t>(code::Int) && dt.bits == 32) return DType::kInt32;
    if (dt.code == static_cast<uint8_t>(code::UInt) && dt.bits == 8) return DType::kUInt8;
    if (dt.code == static_cast<uint8_t>(code::Float) && dt.bits == 16) return DType::kFloat16;
    if (dt.code == static_cast<uint8_t>(code::Float) && dt.bits == 32) return DType::kFloat32;
    if (dt.code == static_cast<uint8_t>(code::Bfloat) && dt.bits == 16) return DType::kBFloat16;
    if (dt.code == kDLFloat8E4M3Fn && dt.bits == 8) return DType::kFloat8E4M3;
  }
  throw Error(ErrorKind::kType, std::string(name) + ": unsupported DLPack dtype (code " +
                                    std::to_string(dt.code) + ", " + std::to_string(dt.bits) + " bits)");
}

DType dtype_from_name(const std::string& dtype, const char* name) {
  for (DType d : {DType::kInt8, DType::kUInt8, DType::kInt32, DType::kFloat8E4M3, DType::kFloat16,
                  DType::kBFloat16, DType::kFloat32}) {
    if (dtype == dtype_name(d)) return d;
  }
  throw Error(ErrorKind::kType, std::string(name) + ": unknown dtype name '" + dtype + "'");
}

Device device_from_dlpack(int32_t type, int32_t id, const char* name) {
  if (type == nb::device::cpu::value || type == nb::device::cuda_host::value) return Device::cpu();
  if (type == nb::device::cuda::value || type == nb::device::cuda_managed::value) return Device::cuda(id);
  throw Error(ErrorKind::kValue, std::string(name) + ": unsupported device (DLPack device type " +
                                     std::to_string(type) + "); expected CPU or CUDA memory");
}

}  // namespace

TensorView to_view(nb::handle object, const char* name) {
  if (object.is_none()) throw Error(ErrorKind::kValue, std::string(name) + ": a tensor is required, got None");
  nb::handle array = object;
  std::optional<DType> reinterpret;
  if (nb::isinstance<nb::tuple>(object)) {
    nb::tuple pair = nb::borrow<nb::tuple>(object);
    if (pair.size() != 2) throw Error(ErrorKind::kValue, std::string(name) + ": expected an array or (array, dtype)");
    array = pair[0];
    reinterpret = dtype_from_name(nb::cast<std::string>(pair[1]), name);
  }
  nb::ndarray<> nd;
  if (!nb::try_cast(array, nd, false)) {
    throw Error(ErrorKind::kType, std::string(name) + ": expected an array supporting DLPack "
                                                      "(torch, cupy, jax, numpy), got " +
                                      nb::cast<std::string>(nb::str(array.type())));
  }
  DType dtype = dtype_from_dlpack(nd.dtype(), name);
  if (reinterpret) {
    if (dtype_size(*reinterpret) != dtype_size(dtype)) {
      throw Error(ErrorKind::kType, std::string(name) + ": cannot view " + dtype_name(dtype) + " as " +
                                        dtype_name(*reinterpret) + " (element sizes differ)");
    }
    dtype = *reinterpret;
  }
  if (nd.ndim() > static_cast<size_t>(TensorView::kMaxRank)) {
    throw Error(ErrorKind::kValue, std::string(name) + ": rank " + std::to_string(nd.ndim()) + " exceeds " +
                                       std::to_string(TensorView::kMaxRank));
  }
  int64_t shape[TensorView::kMaxRank], strides[TensorView::kMaxRank];
  for (size_t d = 0; d < nd.ndim(); ++d) {
    shape[d] = static_cast<int64_t>(nd.shape(d));
    strides[d] = nd.stride(d);
  }
  return TensorView(nd.data(), dtype, static_cast<int>(nd.ndim()), shape, strides,
                    device_from_dlpack(nd.device_type(), nd.device_id(), name));
}

std::optional<TensorView> to_optional_view(nb::handle object, const char* name) {
  if (object.is_none()) return std::nullopt;
  return to_view(object, name);
}

Stream to_stream(nb::handle stream) {
  if (stream.is_none()) return nullptr;
  return reinterpret_cast<Stream>(nb::cast<uintptr_t>(stream));
}

}  // namespace qgemm::python

NB_MODULE(_qgemm, m) {
  namespace nb = nanobind;
  using qgemm::Error;
  using qgemm::ErrorKind;
  m.doc() = "qgemm: quantized transformer-inference kernels (C++ core, DLPack binding)";
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      switch (e.kind()) {
        case ErrorKind::kType: PyErr_SetString(PyExc_TypeError, e.what()); break;
        case ErrorKind::kNotImplemented: PyErr_SetString(PyExc_NotImplementedError, e.what()); break;
        case ErrorKind::kBackend: PyErr_SetString(PyExc_RuntimeError, e.what()); break;
        default: PyErr_SetString(PyExc_ValueError, e.what()); break;
      }
    }
  });
  m.def("version", &qgemm::version);
  m.def("built_with_cuda", &qgemm::built_with_cuda);
  m.def("cuda_archs", &qgemm::cuda_archs);
  m.def("cuda_device_count", &qgemm::cuda_device_count);
  qgemm::python::bind_gemm(m);
  qgemm::python::bind_quant(m);
}
