// check.h — the argument-validation vocabulary shared by every op's host
// entry. Each helper throws qgemm::Error with a message that names the
// argument, what it got and what was expected, e.g.
//   "scale_a: expected 1 or M=512 elements, got 511".
// Validation happens only here, at the API boundary, before any backend runs.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "qgemm/error.h"
#include "qgemm/tensor.h"

namespace qgemm::detail {

[[noreturn]] void fail(ErrorKind kind, const std::string& message);

// "M=512" style label for a dimension in messages.
std::string dim_label(const char* symbol, int64_t value);
std::string shape_string(const TensorView& t);
std::string strides_string(const TensorView& t);  // "(4096, 1)"

void check_not_null(const TensorView& t, const char* name);
void check_dtype(const TensorView& t, const char* name, std::initializer_list<DType> allowed);
void check_same_dtype(const TensorView& t, const char* name, const TensorView& ref,
                      const char* ref_name);
void check_rank(const TensorView& t, const char* name, int rank);
// Data pointer aligned to the element size (the minimum any backend needs).
void check_element_aligned(const TensorView& t, const char* name);

// A 2-D matrix of `rows` × `cols` whose rows are contiguous (stride(1) == 1)
// and whose leading dimension stride(0) >= cols (sub-matrix views allowed).
void check_row_major(const TensorView& t, const char* name, const char* rows_symbol,
                     int64_t rows, const char* cols_symbol, int64_t cols);
// A 2-D matrix of `rows` × `cols` whose columns are contiguous
// (stride(0) == 1) and whose leading dimension stride(1) >= rows.
void check_col_major(const TensorView& t, const char* name, const char* rows_symbol,
                     int64_t rows, const char* cols_symbol, int64_t cols);

// Element (r, c) of a matrix is at r·row + c·col elements from its data.
struct MatrixSteps {
  int64_t row, col;
};
// A 2-D `rows` × `cols` matrix that may be either layout: column-major
// (check_col_major) when it has more than one row and column and stores its
// columns contiguously (stride(0) == 1, stride(1) != 1: a row-major
// [cols, rows] tensor viewed transposed), row-major (check_row_major)
// otherwise. Returns its steps (one row: row = cols).
MatrixSteps check_row_or_col_major(const TensorView& t, const char* name, const char* rows_symbol,
                                   int64_t rows, const char* cols_symbol, int64_t cols);

// Which 2-D shape a broadcast vector of length n may take besides [n]:
// a column [n,1] (per-row quantities) or a row [1,n] (per-column ones).
enum class VectorOrientation { kColumn, kRow };
// A vector of exactly n contiguous elements ([n], or [n,1]/[1,n] by
// orientation). Returns nothing; throws on mismatch.
void check_vector(const TensorView& t, const char* name, const char* n_symbol, int64_t n,
                  VectorOrientation orientation);
// A broadcast vector with 1 or n contiguous elements: [], [1], [1,1], [n],
// and [n,1] or [1,n] by orientation. Returns true when it holds n elements
// with n > 1 (i.e. it is per-row / per-column rather than per-tensor).
bool check_broadcast_vector(const TensorView& t, const char* name, const char* n_symbol,
                            int64_t n, VectorOrientation orientation);

// Two views whose memory ranges (first to last element, strides included)
// intersect, where the op cannot work in place: "out: must not overlap x".
void check_no_overlap(const TensorView& t, const char* name, const TensorView& other,
                      const char* other_name);

// A tensor of the call and its name in messages.
struct NamedView {
  const TensorView* view;
  const char* name;
};

// A scratch workspace: uint8, rank 1, contiguous, on `device`, at least
// `needed` bytes (`needed_from` names the function that says how many),
// 16-byte aligned where not empty, and apart from every tensor in `others`.
void check_workspace(const TensorView& workspace, Device device, int64_t needed, const char* needed_from,
                     std::initializer_list<NamedView> others);

// Every tensor of the call on `device`; `device_owner` names the tensor that
// fixed the device in messages.
void check_device(const TensorView& t, const char* name, Device device, const char* device_owner);
std::string device_string(Device device);

// A CUDA tensor in a build without the CUDA backend, or a CPU tensor where an
// op needs CUDA: a clear kNotImplemented error.
void check_backend_available(Device device, const char* op);

}  // namespace qgemm::detail
