// wonly_param_blocks.cuh — the scales and offsets of a block tile's 128
// weight rows, copied to shared memory per block of two groups instead of per
// k tile (the wgmma kernel, wonly_wgmma.cu).
//
// Why: copied per k tile (LoadPlan's `par`), every 4-byte scale or offset
// costs a 32-byte L2 sector and an L1 wavefront of its own — on the H100 at
// (28672, 8192), M = 1024, those copies were 76 % of the kernel's L2 sectors
// and 40 % of its shared-memory wavefronts, and the shared loads behind them
// stalled the warps. A block holds groups q = 2b and 2b + 1 of every row,
// copied once (8 bytes per row and array) when the first k tile of the block
// is, and read from shared memory only when the block changes: with group
// 128, once per 4 k tiles instead of twice per k tile.
//
// Four buffers, enough for a ring whose lookahead L (the kernel issues tile
// kt + L's copies after tile kt's barrier) is at most 3: a block's buffer is
// overwritten by block b + 4, whose copies are issued with its first tile f,
// at iteration f − L. Block b's buffer is read only at its own first tile,
// and the blocks b + 1 … b + 3 each start at a later tile, so
// f − L ≥ first(b) + 4 − L ≥ first(b) + 1: every thread has read block b
// before that iteration's barrier.
#pragma once

#include <cstdint>

#include "wonly/cuda/wonly_tile.cuh"

namespace qgemm::detail::wonly {

constexpr int kParamBuffers = 4;
constexpr int kParamMaxLookahead = kParamBuffers - 1;  // tiles the copies may run ahead

// Row r: scale(q), scale(q + 1), offset(q), offset(q + 1); zeros past the
// row's last group (and offsets without an offset tensor).
struct ParamBuffer {
  float rows[kTileRows][4];
};

__device__ __forceinline__ void cp_async_8(uint32_t dst, const void* src, bool fill) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src), "r"(fill ? 8 : 0));
}

struct ParamBlocks {
  const float* src;  // thread i: row i % 128's scales (i < 128) or offsets; null: zeros
  const float* any;  // a valid address for zero-filling copies
  uint32_t dst;      // its 8 bytes in buffer 0
  int group_shift;   // group of element k: k >> shift (per channel: 31, group 0)
  int groups;        // per row
  int first_block;   // the block of the loop's first k tile
  bool vector;       // one 8-byte copy (even group count, 8-byte aligned rows) or two 4-byte ones

  __device__ ParamBlocks(const WeightOnlyArgs& args, int64_t row_base, uint32_t buffers, int first_tile) {
    const int i = threadIdx.x;
    const int64_t row = min(row_base + i % kTileRows, args.n - 1);  // past N: never stored
    const bool scales = i < kTileRows;
    src = scales ? args.scales + row * args.ld_scales
                 : (args.offsets != nullptr ? args.offsets + row * args.ld_offsets : nullptr);
    any = args.scales;
    dst = buffers + static_cast<uint32_t>(i % kTileRows) * 16 + (scales ? 0 : 8);
    group_shift = element_group_shift(args);
    groups = static_cast<int>((args.k + args.group_size - 1) / args.group_size);
    first_block = block(first_tile);
    vector = groups % 2 == 0 && (src == nullptr || (reinterpret_cast<uintptr_t>(src) & 7) == 0);
    vector = __syncthreads_and(vector);  // one kind of copy for the whole CTA
  }

  // The group of element k (per channel: 0; k < 2^30).
  __device__ __forceinline__ int group(int k) const { return k >> group_shift; }
  __device__ __forceinline__ int block(int kt) const { return group(kt * kTileK) >> 1; }
  __device__ __forceinline__ bool starts_block(int kt, int first_tile) const {
    return kt == first_tile || block(kt) != block(kt - 1);
  }
  __device__ __forceinline__ uint32_t buffer_offset(int kt) const {
    return static_cast<uint32_t>((block(kt) - first_block) & (kParamBuffers - 1)) * sizeof(ParamBuffer);
  }

  // Copies the block of k tile kt (the caller checks starts_block and commits).
  __device__ __forceinline__ void issue(int kt) const {
    const int q = 2 * block(kt);
    const uint32_t to = dst + buffer_offset(kt);
    const bool fill = src != nullptr;
    if (vector) {
      cp_async_8(to, fill ? src + q : any, fill);
    } else {
      cp_async_4(to, fill && q < groups ? src + q : any, fill && q < groups);
      cp_async_4(to + 4, fill && q + 1 < groups ? src + q + 1 : any, fill && q + 1 < groups);
    }
  }

  // Which of the block's two groups half h of k tile kt uses. A half at or
  // past K uses the second, which then lies past the row's last group and
  // holds zeros (K mod 64 = 32 happens only with group 32, K/32 odd, or per
  // channel, one group), as LoadPlan's zero-filled params did.
  __device__ __forceinline__ bool second_of_block(int kt, int half, int64_t k) const {
    const int k_half = kt * kTileK + 32 * half;
    return k_half >= k || (group(k_half) & 1) != 0;
  }
};

}  // namespace qgemm::detail::wonly
