// qgemm/tensor.h — dtypes, devices, streams and the non-owning TensorView that
// every qgemm op takes. Nothing here owns or allocates memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace qgemm {

enum class DType : uint8_t {
  kInt8,
  kUInt8,
  kInt32,
  kFloat8E4M3,  // OCP fp8 e4m3 "fn": no infinities, max finite 448
  kFloat16,
  kBFloat16,
  kFloat32,
  kInt64,  // index tensors only (slot mappings)
};

// Size of one element in bytes.
size_t dtype_size(DType dtype);
// Short lowercase name used in error messages: "int8", "bf16", "fp8e4m3", ...
const char* dtype_name(DType dtype);

enum class DeviceType : uint8_t { kCPU, kCUDA };

struct Device {
  DeviceType type = DeviceType::kCPU;
  int index = 0;  // CUDA ordinal; 0 for the CPU

  static constexpr Device cpu() { return Device{DeviceType::kCPU, 0}; }
  static constexpr Device cuda(int ordinal = 0) { return Device{DeviceType::kCUDA, ordinal}; }
  bool is_cpu() const { return type == DeviceType::kCPU; }
  bool is_cuda() const { return type == DeviceType::kCUDA; }
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

// A CUDA stream (cudaStream_t) passed opaquely so that the public headers need
// no CUDA include. nullptr is the legacy default stream. Ignored on the CPU.
using Stream = void*;

// A non-owning view of an n-dimensional array: pointer, dtype, shape, strides
// (in elements, as PyTorch and DLPack count them) and the device holding it.
class TensorView {
 public:
  static constexpr int kMaxRank = 4;

  TensorView() = default;
  // A row-major contiguous view of `shape`.
  TensorView(void* data, DType dtype, std::initializer_list<int64_t> shape,
             Device device = Device::cpu());
  TensorView(const void* data, DType dtype, std::initializer_list<int64_t> shape,
             Device device = Device::cpu());
  // A strided view; `rank` entries of `shape` and `strides` are read.
  TensorView(const void* data, DType dtype, int rank, const int64_t* shape,
             const int64_t* strides, Device device = Device::cpu());
  // A strided view built from lists; both lists must have the same length.
  static TensorView strided(const void* data, DType dtype, std::initializer_list<int64_t> shape,
                            std::initializer_list<int64_t> strides, Device device = Device::cpu());

  void* data() const { return data_; }
  template <typename T>
  T* data_as() const { return static_cast<T*>(data_); }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }
  int rank() const { return rank_; }
  int64_t size(int dim) const { return shape_[dim]; }
  int64_t stride(int dim) const { return strides_[dim]; }
  const int64_t* shape() const { return shape_; }
  const int64_t* strides() const { return strides_; }
  int64_t numel() const;
  // True when the elements are densely packed in row-major order.
  bool is_contiguous() const;

 private:
  void* data_ = nullptr;
  DType dtype_ = DType::kFloat32;
  Device device_{};
  int rank_ = 0;
  int64_t shape_[kMaxRank] = {0, 0, 0, 0};
  int64_t strides_[kMaxRank] = {0, 0, 0, 0};
};

}  // namespace qgemm
