// CUDA dispatch of the scaled GEMMs: picks the kernel for the device's
// architecture and the problem (gemm/cuda/dispatch table), falling back to the
// portable tiled kernel for shapes the fast kernels cannot take.
#include "core/cuda_check.h"
#include "gemm/cuda/scaled_mm_cuda.h"
#include "gemm/cuda/scaled_mm_fallback.h"

namespace qgemm::detail {
namespace {

// out[n] = azp · Σ_k b[k,n]: one warp per column, int32 (wrapping) arithmetic.
__global__ void azp_adj_kernel(int32_t* out, const int8_t* b, int64_t k, int64_t n, int64_t ldb,
                               int32_t azp) {
  const int64_t col = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (col >= n) return;
  int32_t sum = 0;
  for (int64_t i = lane; i < k; i += 32) sum += b[col * ldb + i];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (lane == 0) out[col] = static_cast<int32_t>(static_cast<uint32_t>(azp) * static_cast<uint32_t>(sum));
}

}  // namespace

void scaled_mm_cuda(const ScaledMmArgs& args) {
  if (args.m == 0 || args.n == 0) return;
  CudaDeviceGuard guard(args.device);
  scaled_mm_fallback_cuda(args);
}

void azp_adj_cuda(int32_t* out, const int8_t* b, int64_t k, int64_t n, int64_t ldb, int32_t azp,
                  Device device, Stream stream) {
  if (n == 0) return;
  CudaDeviceGuard guard(device);
  constexpr int kWarpsPerBlock = 8;
  const auto blocks = static_cast<unsigned>((n + kWarpsPerBlock - 1) / kWarpsPerBlock);
  azp_adj_kernel<<<blocks, kWarpsPerBlock * 32, 0, as_cuda_stream(stream)>>>(out, b, k, n, ldb, azp);
  QGEMM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace qgemm::detail
