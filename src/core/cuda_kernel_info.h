// cuda_kernel_info.h — what launch decisions need to know about one kernel
// on one device, read from the CUDA runtime once per (kernel, device) and
// cached, so that launching stays free of runtime queries: how many of its
// CTAs are resident on the whole device at once, the architecture its
// loaded code was compiled for, and the largest thread-block cluster it can
// be launched in.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "core/cuda_check.h"
#include "core/cuda_device_info.h"

namespace qgemm::detail {

struct KernelInfo {
  // The PTX version the loaded code was compiled from (80, 90, …), never more
  // than its binary version: sm_80 code on a Hopper, or compute_80 PTX
  // JIT-compiled for a newer GPU, reports 80.
  int arch = 0;
  // CTAs of `threads` threads (and the given dynamic shared memory) resident
  // on the whole device at once: occupancy per SM × SMs, at least 1.
  int64_t resident_ctas = 1;
  // The largest cluster of 1, 2, 4 or 8 such CTAs (the portable sizes) that
  // cudaOccupancyMaxActiveClusters says can be resident at all: 1 below
  // sm_90; below 8 where a GPU partition (MIG, green contexts) or the CTA's
  // shared memory leaves no GPC room for 8, where a launch would fail with
  // "cluster out of resources".
  int max_cluster = 1;
};

// The launch attribute that makes a grid's CTAs along z form clusters of
// cluster_z.
inline cudaLaunchAttribute z_cluster_attribute(int cluster_z) {
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = 1;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = static_cast<unsigned>(cluster_z);
  return cluster;
}

// A launch of `grid` blocks of `threads` threads (and dynamic shared memory)
// whose CTAs along z form clusters of cluster_z; `cluster` holds the
// attribute the configuration points to, so it must outlive it.
inline cudaLaunchConfig_t z_cluster_launch(dim3 grid, int threads, int dynamic_smem, cudaStream_t stream,
                                           int cluster_z, cudaLaunchAttribute& cluster) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = dim3(static_cast<unsigned>(threads));
  config.dynamicSmemBytes = static_cast<size_t>(dynamic_smem);
  config.stream = stream;
  cluster = z_cluster_attribute(cluster_z);
  config.attrs = &cluster;
  config.numAttrs = 1;
  return config;
}

// The largest portable cluster size (≤ 8, a power of two) of kernel with
// `threads` threads and `dynamic_smem` bytes that can be resident.
template <class Kernel>
int max_resident_cluster(Kernel kernel, int threads, int dynamic_smem) {
  int size = 1;
  for (int next = 2; next <= 8; next *= 2) {
    cudaLaunchAttribute cluster;
    const cudaLaunchConfig_t config =
        z_cluster_launch(dim3(1, 1, static_cast<unsigned>(next)), threads, dynamic_smem, nullptr, next, cluster);
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess) {
      (void)cudaGetLastError();  // not an error of the caller's: that size just cannot run
      break;
    }
    if (clusters < 1) break;
    size = next;
  }
  return size;
}

// The KernelInfo of kKernel on `device` (which must be current) when launched
// with `threads` threads and `dynamic_smem` bytes. Above 48 KB of dynamic
// shared memory, the first call also opts the kernel in
// (cudaFuncAttributeMaxDynamicSharedMemorySize), which its launches need.
template <auto kKernel>
KernelInfo kernel_info(int device, int threads, int dynamic_smem = 0) {
  // (arch << 40 | log2(max_cluster) << 36 | resident_ctas) + 1; 0 = not read yet
  static std::atomic<int64_t> cache[64];
  const bool cached = device >= 0 && device < 64;
  int64_t packed = cached ? cache[device].load(std::memory_order_acquire) - 1 : -1;
  if (packed < 0) {
    if (dynamic_smem > 48 * 1024) {
      QGEMM_CUDA_CHECK(cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, dynamic_smem));
    }
    cudaFuncAttributes attributes{};
    QGEMM_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kKernel));
    int per_sm = 0;
    QGEMM_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kKernel, threads,
                                                                   static_cast<size_t>(dynamic_smem)));
    const int sms = cuda_device_info(device).sm_count;
    const int64_t arch = std::min(attributes.ptxVersion, attributes.binaryVersion);
    const int cluster = arch >= 90 ? max_resident_cluster(kKernel, threads, dynamic_smem) : 1;
    int64_t log2_cluster = 0;
    while ((1 << log2_cluster) < cluster) ++log2_cluster;
    packed = arch << 40 | log2_cluster << 36 | std::min<int64_t>(std::max(int64_t{per_sm} * sms, int64_t{1}),
                                                                  (int64_t{1} << 36) - 1);
    if (cached) cache[device].store(packed + 1, std::memory_order_release);
  }
  return KernelInfo{static_cast<int>(packed >> 40), packed & ((int64_t{1} << 36) - 1),
                    1 << ((packed >> 36) & 0xf)};
}

}  // namespace qgemm::detail
