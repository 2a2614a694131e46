// Implementation of the validation vocabulary in check.h.
#include "core/check.h"

#include <sstream>
#include <utility>

#include "qgemm/version.h"

namespace qgemm::detail {

void fail(ErrorKind kind, const std::string& message) { throw Error(kind, message); }

std::string dim_label(const char* symbol, int64_t value) {
  return std::string(symbol) + "=" + std::to_string(value);
}

std::string shape_string(const TensorView& t) {
  std::ostringstream os;
  os << "[";
  for (int d = 0; d < t.rank(); ++d) os << (d ? ", " : "") << t.size(d);
  os << "]";
  return os.str();
}

std::string strides_string(const TensorView& t) {
  std::ostringstream os;
  os << "(";
  for (int d = 0; d < t.rank(); ++d) os << (d ? ", " : "") << t.stride(d);
  os << ")";
  return os.str();
}

std::string device_string(Device device) {
  return device.is_cpu() ? std::string("cpu") : "cuda:" + std::to_string(device.index);
}

void check_not_null(const TensorView& t, const char* name) {
  if (t.data() == nullptr && t.numel() > 0) {
    fail(ErrorKind::kValue, std::string(name) + ": data pointer is null");
  }
}

void check_dtype(const TensorView& t, const char* name, std::initializer_list<DType> allowed) {
  for (DType d : allowed) {
    if (t.dtype() == d) return;
  }
  std::string expected;
  size_t i = 0;
  for (DType d : allowed) {
    if (i > 0) expected += (i + 1 == allowed.size()) ? " or " : ", ";
    expected += dtype_name(d);
    ++i;
  }
  fail(ErrorKind::kType,
       std::string(name) + ": expected dtype " + expected + ", got " + dtype_name(t.dtype()));
}

void check_same_dtype(const TensorView& t, const char* name, const TensorView& ref,
                      const char* ref_name) {
  if (t.dtype() != ref.dtype()) {
    fail(ErrorKind::kType, std::string(name) + ": expected dtype " + dtype_name(ref.dtype()) +
                               " (the dtype of " + ref_name + "), got " + dtype_name(t.dtype()));
  }
}

void check_rank(const TensorView& t, const char* name, int rank) {
  if (t.rank() != rank) {
    fail(ErrorKind::kValue, std::string(name) + ": expected a " + std::to_string(rank) +
                                "-D tensor, got shape " + shape_string(t));
  }
}

void check_element_aligned(const TensorView& t, const char* name) {
  const auto address = reinterpret_cast<uintptr_t>(t.data());
  const size_t size = dtype_size(t.dtype());
  if (address % size != 0) {
    fail(ErrorKind::kValue, std::string(name) + ": data pointer must be aligned to " +
                                std::to_string(size) + " bytes for " + dtype_name(t.dtype()) +
                                ", got address 0x" + [&] {
                                  std::ostringstream os;
                                  os << std::hex << address;
                                  return os.str();
                                }());
  }
}

static void check_matrix_shape(const TensorView& t, const char* name, const char* rows_symbol,
                               int64_t rows, const char* cols_symbol, int64_t cols) {
  check_rank(t, name, 2);
  if (t.size(0) != rows || t.size(1) != cols) {
    fail(ErrorKind::kValue, std::string(name) + ": expected shape [" +
                                dim_label(rows_symbol, rows) + ", " + dim_label(cols_symbol, cols) +
                                "], got " + shape_string(t));
  }
}

void check_row_major(const TensorView& t, const char* name, const char* rows_symbol, int64_t rows,
                     const char* cols_symbol, int64_t cols) {
  check_matrix_shape(t, name, rows_symbol, rows, cols_symbol, cols);
  if (cols > 1 && t.stride(1) != 1) {
    fail(ErrorKind::kValue, std::string(name) +
                                ": expected a row-major matrix with contiguous rows (stride(1) "
                                "== 1), got strides " +
                                strides_string(t));
  }
  if (rows > 1 && t.stride(0) < cols) {
    fail(ErrorKind::kValue, std::string(name) + ": expected row stride stride(0) >= " +
                                dim_label(cols_symbol, cols) + ", got strides " +
                                strides_string(t));
  }
}

void check_col_major(const TensorView& t, const char* name, const char* rows_symbol, int64_t rows,
                     const char* cols_symbol, int64_t cols) {
  check_matrix_shape(t, name, rows_symbol, rows, cols_symbol, cols);
  if (rows > 1 && t.stride(0) != 1) {
    fail(ErrorKind::kValue, std::string(name) +
                                ": expected a column-major matrix with contiguous columns "
                                "(stride(0) == 1; a [N,K] row-major weight viewed transposed), "
                                "got strides " +
                                strides_string(t));
  }
  if (cols > 1 && t.stride(1) < rows) {
    fail(ErrorKind::kValue, std::string(name) + ": expected column stride stride(1) >= " +
                                dim_label(rows_symbol, rows) + ", got strides " +
                                strides_string(t));
  }
}

static bool stores_columns_contiguously(const TensorView& t) {
  return t.rank() == 2 && t.size(0) > 1 && t.size(1) > 1 && t.stride(0) == 1 && t.stride(1) != 1;
}

MatrixSteps check_row_or_col_major(const TensorView& t, const char* name, const char* rows_symbol,
                                   int64_t rows, const char* cols_symbol, int64_t cols) {
  if (stores_columns_contiguously(t)) {
    check_col_major(t, name, rows_symbol, rows, cols_symbol, cols);
    return {1, t.stride(1)};
  }
  check_row_major(t, name, rows_symbol, rows, cols_symbol, cols);
  return {rows > 1 ? t.stride(0) : cols, 1};
}

// The stride of the one dimension that may have more than one element, or 1.
static int64_t vector_stride(const TensorView& t) {
  for (int d = 0; d < t.rank(); ++d) {
    if (t.size(d) > 1) return t.stride(d);
  }
  return 1;
}

static bool vector_shape_ok(const TensorView& t, int64_t length, VectorOrientation orientation) {
  if (t.numel() != length) return false;
  if (t.rank() == 0) return length == 1;
  if (t.rank() == 1) return true;
  if (t.rank() != 2) return false;
  if (length == 1) return true;
  return orientation == VectorOrientation::kColumn ? t.size(1) == 1 : t.size(0) == 1;
}

static std::string vector_shapes(const char* n_symbol, int64_t n, VectorOrientation orientation,
                                 bool allow_scalar) {
  const std::string label = dim_label(n_symbol, n);
  const std::string two_d = orientation == VectorOrientation::kColumn ? "[" + label + ", 1]"
                                                                      : "[1, " + label + "]";
  return (allow_scalar ? "[1], [1, 1], " : "") + ("[" + label + "] or " + two_d);
}

void check_vector(const TensorView& t, const char* name, const char* n_symbol, int64_t n,
                  VectorOrientation orientation) {
  if (!vector_shape_ok(t, n, orientation)) {
    fail(ErrorKind::kValue, std::string(name) + ": expected " + dim_label(n_symbol, n) +
                                " elements shaped " + vector_shapes(n_symbol, n, orientation, false) +
                                ", got shape " + shape_string(t));
  }
  if (n > 1 && vector_stride(t) != 1) {
    fail(ErrorKind::kValue, std::string(name) + ": expected contiguous elements (stride 1), got "
                                                "strides " +
                                strides_string(t));
  }
}

bool check_broadcast_vector(const TensorView& t, const char* name, const char* n_symbol, int64_t n,
                            VectorOrientation orientation) {
  const bool scalar = vector_shape_ok(t, 1, orientation);
  const bool full = vector_shape_ok(t, n, orientation);
  if (!scalar && !full) {
    fail(ErrorKind::kValue, std::string(name) + ": expected 1 or " + dim_label(n_symbol, n) +
                                " elements shaped " + vector_shapes(n_symbol, n, orientation, true) +
                                ", got shape " + shape_string(t) + " (" +
                                std::to_string(t.numel()) + " elements)");
  }
  if (!scalar && vector_stride(t) != 1) {
    fail(ErrorKind::kValue, std::string(name) + ": expected contiguous elements (stride 1), got "
                                                "strides " +
                                strides_string(t));
  }
  return !scalar;
}

// [first byte, one past the last byte] of a view's elements (0, 0 if empty).
static std::pair<uintptr_t, uintptr_t> byte_extent(const TensorView& t) {
  if (t.numel() == 0 || t.data() == nullptr) return {0, 0};
  int64_t low = 0, high = 0;
  for (int d = 0; d < t.rank(); ++d) {
    const int64_t span = (t.size(d) - 1) * t.stride(d);
    (span < 0 ? low : high) += span;
  }
  const auto base = reinterpret_cast<uintptr_t>(t.data());
  const auto size = static_cast<int64_t>(dtype_size(t.dtype()));
  return {base + low * size, base + (high + 1) * size};
}

void check_no_overlap(const TensorView& t, const char* name, const TensorView& other,
                      const char* other_name) {
  if (t.device() != other.device()) return;
  const auto a = byte_extent(t), b = byte_extent(other);
  if (a.first < a.second && b.first < b.second && a.first < b.second && b.first < a.second) {
    fail(ErrorKind::kValue, std::string(name) + ": must not overlap " + other_name +
                                " in memory (this op does not work in place)");
  }
}

void check_workspace(const TensorView& workspace, Device device, int64_t needed, const char* needed_from,
                     std::initializer_list<NamedView> others) {
  check_dtype(workspace, "workspace", {DType::kUInt8});
  check_device(workspace, "workspace", device, "out");
  check_rank(workspace, "workspace", 1);
  if (workspace.size(0) > 1 && workspace.stride(0) != 1) {
    fail(ErrorKind::kValue, "workspace: must be contiguous (stride 1), got stride " +
                                std::to_string(workspace.stride(0)));
  }
  if (workspace.size(0) < needed) {
    fail(ErrorKind::kValue, std::string("workspace: needs at least ") + needed_from + " = " +
                                std::to_string(needed) + " bytes, got " + std::to_string(workspace.size(0)));
  }
  if (workspace.size(0) == 0) return;
  check_not_null(workspace, "workspace");
  const auto address = reinterpret_cast<uintptr_t>(workspace.data());
  if (address % 16 != 0) {
    fail(ErrorKind::kValue, "workspace: the CUDA kernels need a 16-byte aligned data pointer, got one at offset " +
                                std::to_string(address % 16) + " from 16");
  }
  for (const NamedView& other : others) {
    if (other.view != nullptr) check_no_overlap(workspace, "workspace", *other.view, other.name);
  }
}

void check_device(const TensorView& t, const char* name, Device device, const char* device_owner) {
  if (t.device() != device) {
    fail(ErrorKind::kValue, std::string(name) + ": expected a tensor on " + device_string(device) +
                                " (the device of " + device_owner + "), got one on " +
                                device_string(t.device()));
  }
}

void check_backend_available(Device device, const char* op) {
  if (device.is_cuda() && !built_with_cuda()) {
    fail(ErrorKind::kNotImplemented, std::string(op) +
                                         ": tensors are on " + device_string(device) +
                                         " but this qgemm build has no CUDA backend");
  }
  if (device.is_cuda() && device.index >= cuda_device_count()) {
    fail(ErrorKind::kValue, std::string(op) + ": tensors are on " + device_string(device) +
                                " but only " + std::to_string(cuda_device_count()) +
                                " CUDA device(s) are visible");
  }
}

}  // namespace qgemm::detail
