// cuda_check.h — CUDA error handling and device selection for the CUDA
// backend. Every runtime call goes through QGEMM_CUDA_CHECK, and every launch
// is followed by QGEMM_CUDA_CHECK(cudaGetLastError()).
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "qgemm/error.h"
#include "qgemm/tensor.h"

#define QGEMM_CUDA_CHECK(expr)                                                            \
  do {                                                                                    \
    const cudaError_t qgemm_status_ = (expr);                                             \
    if (qgemm_status_ != cudaSuccess) {                                                   \
      throw ::qgemm::Error(::qgemm::ErrorKind::kBackend,                                  \
                           std::string(#expr) + " failed: " +                             \
                               cudaGetErrorString(qgemm_status_) + " (" __FILE__ ":" +    \
                               std::to_string(__LINE__) + ")");                           \
    }                                                                                     \
  } while (0)

namespace qgemm::detail {

// Makes `device` current for the scope and restores the previous one.
class CudaDeviceGuard {
 public:
  explicit CudaDeviceGuard(Device device) {
    QGEMM_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device.index) QGEMM_CUDA_CHECK(cudaSetDevice(device.index));
    else previous_ = -1;
  }
  ~CudaDeviceGuard() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  CudaDeviceGuard(const CudaDeviceGuard&) = delete;
  CudaDeviceGuard& operator=(const CudaDeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

inline cudaStream_t as_cuda_stream(Stream stream) { return static_cast<cudaStream_t>(stream); }

}  // namespace qgemm::detail
