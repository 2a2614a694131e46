// wonly_args.h — the validated, backend-neutral description of one
// weight_only_mm call, and the one weight addressing formula that the CPU
// twin and both CUDA kernels read the weight through (host + device).
//
// The weight is read in 16-byte chunks: chunk c of row n holds the E
// consecutive elements k ∈ [c·E, c·E + E), E = 32 (int4) or 16 (int8). Chunks
// come in tiles of 4 along K (64 bytes per row) and rows in blocks of 16:
//
//   byte_offset(n, c) = (n / 16)·row_block_stride + (n % 16)·row_stride
//                     + (c / 4)·tile_stride + (c % 4)·16
//
//   plain [N, K·bytes/elem] with row stride ld:  (16·ld, ld, 64)
//   prepacked [N/16, K/kc, 1024]:                (K/kc·1024, 64, 1024)
#pragma once

#include <cstdint>

#include "core/numeric.h"
#include "qgemm/tensor.h"

namespace qgemm::detail {

struct WeightAddressing {
  int64_t row_block_stride = 0;  // bytes between blocks of 16 rows
  int64_t row_stride = 0;        // bytes between rows inside a block
  int64_t tile_stride = 0;       // bytes between tiles of 4 chunks along K

  QGEMM_HD int64_t chunk_offset(int64_t row, int64_t chunk) const {
    return (row >> 4) * row_block_stride + (row & 15) * row_stride + (chunk >> 2) * tile_stride +
           (chunk & 3) * 16;
  }
};

struct WeightOnlyArgs {
  int64_t m = 0, n = 0, k = 0;
  DType dtype = DType::kBFloat16;  // of a, out and bias
  bool int4 = true;                // else int8
  int64_t group_size = 128;        // divides K; == K per channel

  const void* a = nullptr;  // [M,K] row-major, row stride lda (elements)
  int64_t lda = 0;
  const uint8_t* w = nullptr;  // addressed by w_addr
  WeightAddressing w_addr;
  bool prepacked = false;
  // Scales and offsets: [N, K/group_size], (row, group) at row·ld + group·
  // params_group_stride (elements): row-major (group stride 1), or group-major
  // (row stride 1, group stride ≥ N: each group's N values adjacent, which the
  // decode kernels read in one L1 wavefront per 8 rows); offsets laid out as
  // the scales. fp32, or (params16) 16-bit in the activation dtype T.
  const void* scales = nullptr;
  int64_t ld_scales = 0;
  const void* offsets = nullptr;  // same shape, dtype and group stride, or null (offset 0)
  int64_t ld_offsets = 0;
  int64_t params_group_stride = 1;
  bool params16 = false;
  const void* bias = nullptr;  // [N] in dtype, or null
  void* out = nullptr;         // [M,N] row-major, row stride ldo (elements)
  int64_t ldo = 0;

  void* workspace = nullptr;  // optional scratch of the CUDA kernels (stream-K), or null
  int64_t workspace_bytes = 0;
  Device device{};
  Stream stream = nullptr;

  // Parameter i of `params` (scales or offsets) as a float: exact, whatever
  // its dtype.
  QGEMM_HD float param(const void* params, int64_t i) const {
    if (!params16) return static_cast<const float*>(params)[i];
    const uint16_t bits = static_cast<const uint16_t*>(params)[i];
    return dtype == DType::kBFloat16 ? numeric::bf16_bits_to_float(bits) : numeric::fp16_bits_to_float(bits);
  }

  // Elements per 16-byte chunk.
  QGEMM_HD int64_t chunk_elems() const { return int4 ? 32 : 16; }
  QGEMM_HD int64_t chunks_per_row() const { return k / chunk_elems(); }
};

// The addressing of a plain [N, ...] weight with row stride `ld_bytes`, and
// of the prepacked layout of an [N,K] weight.
inline WeightAddressing plain_addressing(int64_t ld_bytes) {
  return WeightAddressing{16 * ld_bytes, ld_bytes, 64};
}
inline WeightAddressing prepacked_addressing(int64_t k_tiles) {
  return WeightAddressing{k_tiles * 1024, 64, 1024};
}

}  // namespace qgemm::detail
