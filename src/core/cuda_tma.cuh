// cuda_tma.cuh — the Tensor Memory Accelerator (sm_90) as qgemm's hand-written
// kernels use it: tensor maps encoded on the host through the runtime's
// driver entry point (no libcuda link), tensor copies into shared memory that
// complete on an mbarrier (core/cuda_mbarrier.cuh), and the wgmma matrix
// descriptor of an operand that such a copy lays out in 128-byte swizzle
// atoms. Device functions only for code compiled for sm_90 and later.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "core/cuda_check.h"
#include "qgemm/error.h"

namespace qgemm::detail {

// The driver's cuTensorMapEncodeTiled, through the runtime (no libcuda link).
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    QGEMM_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || fn == nullptr) {
      throw Error(ErrorKind::kBackend, "the CUDA driver has no cuTensorMapEncodeTiled");
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encode;
}

// Throws when cuTensorMapEncodeTiled failed: "<op>: … for <tensor> (CUresult N)".
inline void check_tensor_map(CUresult result, const char* op, const char* tensor) {
  if (result != CUDA_SUCCESS) {
    throw Error(ErrorKind::kBackend, std::string(op) + ": cuTensorMapEncodeTiled failed for " + tensor +
                                         " (CUresult " + std::to_string(static_cast<int>(result)) + ")");
  }
}

// A 2-D tensor of `rows` rows of `inner` elements of `dtype`, `row_bytes`
// apart (a multiple of 16), read in boxes of box_inner × box_rows elements
// with `swizzle`; TMA fills what lies outside the tensor with zeros. Host
// only: encoded per call, no device work. Errors name `op` and `tensor`.
inline CUtensorMap tma_map_2d(CUtensorMapDataType dtype, const void* base, uint64_t inner, uint64_t rows,
                              uint64_t row_bytes, uint32_t box_inner, uint32_t box_rows, CUtensorMapSwizzle swizzle,
                              const char* op, const char* tensor) {
  CUtensorMap map{};
  const cuuint64_t dims[2] = {inner, rows};
  const cuuint64_t strides[1] = {row_bytes};
  const cuuint32_t box[2] = {box_inner, box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  check_tensor_map(tensor_map_encoder()(&map, dtype, 2, const_cast<void*>(base), dims, strides, box, element_strides,
                                        CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                   op, tensor);
  return map;
}

// A box of the tensor `map` at coordinates (x, y) into shared memory at
// `dst`, its bytes counted down on the mbarrier `bar` (whose phase the
// issuing thread has announced them on: mbarrier_expect_bytes).
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap& map, int x, int y, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(&map)), "r"(x), "r"(y), "r"(bar)
      : "memory");
}

__device__ __forceinline__ void tma_load_4d(uint32_t dst, const CUtensorMap& map, int x, int y, int z, int w,
                                            uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(&map)), "r"(x), "r"(y), "r"(z), "r"(w), "r"(bar)
      : "memory");
}

// The shared-memory matrix descriptor of a K-major operand with 128-byte
// swizzle (PTX ISA, "Matrix Descriptor Format"): start address >> 4 in bits
// 0–13, leading byte offset (unused with this swizzle: 1) in 16–29, stride
// byte offset >> 4 in 32–45 (1024 B from one 8-row atom to the next), base
// offset 0 (atoms 1024-aligned), layout type 1 = SWIZZLE_128B in bits 62–63.
// A row is 128 bytes of K; a k step that starts 32·s bytes into the rows
// (16 bf16 / 32 8-bit elements per step) is descriptor + 2s (the hardware
// applies the swizzle to the computed addresses). This is the layout a TMA
// box of 128 bytes × rows with CU_TENSOR_MAP_SWIZZLE_128B writes.
__device__ __forceinline__ uint64_t wgmma_sw128_descriptor(uint32_t smem_addr) {
  return (uint64_t{1} << 62) | (uint64_t{1024 >> 4} << 32) | (uint64_t{1} << 16) | ((smem_addr & 0x3ffff) >> 4);
}

}  // namespace qgemm::detail
