// paged_attention_launch.cuh — launching paged_attention_kernel for one
// cache kind: the (query dtype, head_dim, head tile) instantiations, each
// cache kind compiled in a translation unit of its own
// (paged_attention_{int8,fp8,16bit}.cu).
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "qgemm/error.h"

#include "kvcache/cuda/paged_attention_kernel.cuh"
#include "kvcache/cuda/paged_attention_mma.cuh"

namespace qgemm::detail::attention {

struct Launch {
  dim3 grid;
  bool tensor_cores;  // paged_attention_mma_kernel, or paged_attention_kernel
  int tile;  // query heads per CTA (paged_attention_cuda.cu): CUDA cores 1 or 8, tensor cores 8 or 16 (≤ 128 dims)
  int head_dim;
  cudaStream_t stream;
  int device;
};

// Launches the build for launch.tile query heads per CTA. A tile without a
// build (16 heads at head_dim 256, or a count attention_plan never makes) is
// refused, not run with another tile: the grid was sized for launch.tile,
// so a narrower kernel would leave heads unwritten.
template <CacheKind kKind, DType kDtype, int kHeadDim>
void launch_head_dim(const Params& params, const Launch& launch) {
  auto run = [&](auto kernel) {
    launch_pdl_kernel(kernel, launch.grid, dim3(kThreads), 0, launch.stream, launch.device, params);
  };
  if (launch.tensor_cores) {
    if (launch.tile == 8) return run(paged_attention_mma_kernel<kKind, kDtype, kHeadDim, 1>);
    // Two n-blocks (16 heads) only up to head_dim 128: at 256 the warps'
    // staged outputs would pass the 48 KB of static shared memory.
    if constexpr (kHeadDim <= 128) {
      if (launch.tile == 16) return run(paged_attention_mma_kernel<kKind, kDtype, kHeadDim, 2>);
    }
  } else {
    if (launch.tile == 1) return run(paged_attention_kernel<kKind, kDtype, kHeadDim, 1>);
    if (launch.tile == 8) return run(paged_attention_kernel<kKind, kDtype, kHeadDim, 8>);
  }
  throw Error(ErrorKind::kNotImplemented,
              "paged_attention: no " + std::string(launch.tensor_cores ? "tensor-core" : "CUDA-core") + " kernel for " +
                  std::to_string(launch.tile) + " query heads per CTA at head_dim " + std::to_string(kHeadDim));
}

template <CacheKind kKind, DType kDtype>
void launch_kind(const Params& params, const Launch& launch) {
  switch (launch.head_dim) {
    case 64: launch_head_dim<kKind, kDtype, 64>(params, launch); break;
    case 128: launch_head_dim<kKind, kDtype, 128>(params, launch); break;
    default: launch_head_dim<kKind, kDtype, 256>(params, launch); break;  // validated: 64, 128 or 256
  }
}

// One per translation unit.
void launch_int8(DType dtype, const Params& params, const Launch& launch);
void launch_fp8(DType dtype, const Params& params, const Launch& launch);
void launch_16bit(DType dtype, const Params& params, const Launch& launch);

}  // namespace qgemm::detail::attention
