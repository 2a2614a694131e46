// TensorView construction and the dtype helpers declared in qgemm/tensor.h.
#include <algorithm>

#include "qgemm/error.h"
#include "qgemm/tensor.h"

namespace qgemm {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kFloat8E4M3:
      return 1;
    case DType::kFloat16:
    case DType::kBFloat16:
      return 2;
    case DType::kInt32:
    case DType::kFloat32:
      return 4;
    case DType::kInt64:
      return 8;
  }
  return 0;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kInt8: return "int8";
    case DType::kUInt8: return "uint8";
    case DType::kInt32: return "int32";
    case DType::kFloat8E4M3: return "fp8e4m3";
    case DType::kFloat16: return "fp16";
    case DType::kBFloat16: return "bf16";
    case DType::kFloat32: return "fp32";
    case DType::kInt64: return "int64";
  }
  return "unknown";
}

namespace {
void fill_contiguous_strides(int rank, const int64_t* shape, int64_t* strides) {
  int64_t running = 1;
  for (int d = rank - 1; d >= 0; --d) {
    strides[d] = running;
    running *= std::max<int64_t>(shape[d], 1);
  }
}
}  // namespace

TensorView::TensorView(void* data, DType dtype, std::initializer_list<int64_t> shape, Device device)
    : TensorView(static_cast<const void*>(data), dtype, shape, device) {}

TensorView::TensorView(const void* data, DType dtype, std::initializer_list<int64_t> shape,
                       Device device)
    : data_(const_cast<void*>(data)), dtype_(dtype), device_(device) {
  if (shape.size() > static_cast<size_t>(kMaxRank)) {
    throw Error(ErrorKind::kValue, "TensorView: rank " + std::to_string(shape.size()) +
                                       " exceeds the maximum of " + std::to_string(kMaxRank));
  }
  rank_ = static_cast<int>(shape.size());
  std::copy(shape.begin(), shape.end(), shape_);
  fill_contiguous_strides(rank_, shape_, strides_);
}

TensorView::TensorView(const void* data, DType dtype, int rank, const int64_t* shape,
                       const int64_t* strides, Device device)
    : data_(const_cast<void*>(data)), dtype_(dtype), device_(device), rank_(rank) {
  if (rank < 0 || rank > kMaxRank) {
    throw Error(ErrorKind::kValue, "TensorView: rank " + std::to_string(rank) +
                                       " is outside 0.." + std::to_string(kMaxRank));
  }
  std::copy(shape, shape + rank, shape_);
  if (strides != nullptr) {
    std::copy(strides, strides + rank, strides_);
  } else {
    fill_contiguous_strides(rank_, shape_, strides_);
  }
}

TensorView TensorView::strided(const void* data, DType dtype, std::initializer_list<int64_t> shape,
                               std::initializer_list<int64_t> strides, Device device) {
  if (shape.size() != strides.size()) {
    throw Error(ErrorKind::kValue, "TensorView::strided: shape has " +
                                       std::to_string(shape.size()) + " dims but strides has " +
                                       std::to_string(strides.size()));
  }
  if (shape.size() > static_cast<size_t>(kMaxRank)) {
    throw Error(ErrorKind::kValue, "TensorView::strided: rank exceeds the maximum");
  }
  return TensorView(data, dtype, static_cast<int>(shape.size()), shape.begin(), strides.begin(),
                    device);
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int d = 0; d < rank_; ++d) n *= shape_[d];
  return n;
}

bool TensorView::is_contiguous() const {
  int64_t expected = 1;
  for (int d = rank_ - 1; d >= 0; --d) {
    if (shape_[d] != 1 && strides_[d] != expected) return false;
    expected *= shape_[d];
  }
  return true;
}

}  // namespace qgemm
