// cuda_buffer.h — device buffers for the GPU tests: upload host vectors,
// poison, download. Compiled only in CUDA builds.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <vector>

namespace qgemm::test {

#define QGEMM_TEST_CUDA(expr) ASSERT_EQ((expr), cudaSuccess) << #expr

class CudaBuffer {
 public:
  CudaBuffer() = default;
  explicit CudaBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes > 0 && cudaMalloc(&data_, bytes) != cudaSuccess) data_ = nullptr;
  }
  template <typename T>
  explicit CudaBuffer(const std::vector<T>& host) : CudaBuffer(host.size() * sizeof(T)) {
    if (bytes_ > 0) cudaMemcpy(data_, host.data(), bytes_, cudaMemcpyHostToDevice);
  }
  ~CudaBuffer() {
    if (data_ != nullptr) cudaFree(data_);
  }
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;

  void* get() const { return data_; }
  size_t bytes() const { return bytes_; }
  // Fills the buffer with 0xff bytes (NaN for every float dtype).
  void poison() const { cudaMemset(data_, 0xff, bytes_); }
  template <typename T>
  void download(std::vector<T>& host) const {
    host.resize(bytes_ / sizeof(T));
    cudaMemcpy(host.data(), data_, bytes_, cudaMemcpyDeviceToHost);
  }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace qgemm::test
