// Build information and CUDA device discovery (qgemm/version.h).
#include "qgemm/version.h"

#include "qgemm_build_config.h"

#if QGEMM_WITH_CUDA
#include <cuda_runtime_api.h>
#endif


namespace qgemm {

const char* version() { return QGEMM_VERSION_STRING; }

bool built_with_cuda() { return QGEMM_WITH_CUDA != 0; }

const char* cuda_archs() { return QGEMM_CUDA_ARCHS_STRING; }

int cuda_device_count() {
#if QGEMM_WITH_CUDA
  // Asked once: the count cannot change during a process's life.
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      (void)cudaGetLastError();  // clear the sticky "no device / no driver" error
      return 0;
    }
    return n;
  }();
  return count;
#else
  return 0;
#endif
}

}  // namespace qgemm
