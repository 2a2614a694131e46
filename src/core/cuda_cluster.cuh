// cuda_cluster.cuh — split K across a thread-block cluster (sm_90): when a
// problem has too few output tiles to fill the GPU, `splits` CTAs of one
// cluster (grid z) take disjoint parts of K for the same tile, leave their
// partial sums in their own shared memory, and add them in rank order through
// distributed shared memory — a fixed order, so results are deterministic.
// No global workspace, no atomics, graph-capturable. Used by the weight-only
// kernels (wonly/cuda/wonly_split_k.cuh); a split of the skinny scaled GEMM
// over clusters was measured slower and not kept (docs/gemm.md).
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "core/cuda_check.h"
#include "core/cuda_launch.cuh"
#include "core/cuda_kernel_info.h"

namespace qgemm::detail {

// Device side. Only called when gridDim.z > 1, which the host launches only
// for code compiled for sm_90+ (KernelInfo::arch, KernelInfo::max_cluster);
// elsewhere they trap.
__device__ __forceinline__ unsigned cluster_rank() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  return cooperative_groups::this_cluster().block_rank();
#else
  __trap();
  return 0;
#endif
}

// Barrier over the cluster's threads, with shared-memory visibility across
// its CTAs (also a barrier for this CTA's threads).
__device__ __forceinline__ void cluster_sync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cooperative_groups::this_cluster().sync();
#else
  __trap();
#endif
}

// The address of `local` (this CTA's shared memory) in the CTA of rank `rank`.
template <class T>
__device__ __forceinline__ const T* cluster_peer(const T* local, unsigned rank) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  return cooperative_groups::this_cluster().map_shared_rank(const_cast<T*>(local), rank);
#else
  (void)rank;
  __trap();
  return local;
#endif
}

// Launches kernel<<<(grid.x, grid.y, splits), block, smem, stream>>>(params...),
// the `splits` CTAs along z forming one cluster, through launch_pdl_kernel_in_clusters
// (the kernel keeps its contract: wait_for_preceding_grids() first).
template <class Kernel, class... Params>
void launch_split_k(Kernel kernel, dim3 grid, int threads, int smem, cudaStream_t stream, int device, int splits,
                    const Params&... params) {
  launch_pdl_kernel_in_clusters(kernel, dim3(grid.x, grid.y, static_cast<unsigned>(splits)),
                                dim3(static_cast<unsigned>(threads)), static_cast<size_t>(smem), stream, device, splits,
                                params...);
}

}  // namespace qgemm::detail
