// wonly_param_blocks.cuh — the scales and offsets of a block tile's 128
// weight rows, copied to shared memory per block of two groups instead of per
// k tile (both tensor-core kernels, wonly_wgmma.cu and wonly_mma.cu).
//
// Why: copied per k tile (as wonly_mma did until it moved here too), every
// 4-byte scale or offset costs a 32-byte L2 sector and an L1 wavefront of its
// own — on the H100 at (28672, 8192), M = 1024, those copies were 76 % of the
// wgmma kernel's L2 sectors and 40 % of its shared-memory wavefronts, and the
// shared loads behind them stalled the warps. A block holds groups q = 2b and
// 2b + 1 of every row, copied once (8 bytes per row and array, 4 for 16-bit
// parameters) when the first k tile of the block is; with group 128 once per
// 4 k tiles instead of twice per k tile.
//
// Four buffers, enough for a ring whose lookahead L (the kernel issues tile
// kt + L's copies after tile kt's barrier) is at most 3: a block's buffer is
// overwritten by block b + 4, whose copies are issued with its first tile f,
// at iteration f − L. Block b's buffer is read during its own tiles (the
// wgmma kernel at the first, the mma.sync kernel at each), and the blocks
// b + 1 … b + 3 each start at a later tile, so f − L ≥ last(b) + 4 − L ≥
// last(b) + 1: every thread has read block b before that iteration's barrier.
#pragma once

#include <cstdint>
#include <type_traits>

#include "wonly/cuda/wonly_tile.cuh"

namespace qgemm::detail::wonly {

constexpr int kParamBuffers = 4;
constexpr int kParamMaxLookahead = kParamBuffers - 1;  // tiles the copies may run ahead

// Row r's 16 bytes. fp32 parameters: scale(q), scale(q + 1), offset(q),
// offset(q + 1). 16-bit ones (WeightOnlyArgs::params16): the pair
// scale(q) | scale(q + 1) << 16 in bytes 0–3 and offset(q) | offset(q + 1) << 16
// in bytes 8–11; or, with `words` (ParamBlocks below), the 4-byte words that
// hold scale(q), scale(q + 1), offset(q), offset(q + 1) — each also holds
// row r ^ 1's, in its other half. Zeros past the row's last group (and
// offsets without an offset tensor).
struct ParamBuffer {
  float rows[kTileRows][4];
};

__device__ __forceinline__ void cp_async_8(uint32_t dst, const void* src, bool fill) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src), "r"(fill ? 8 : 0));
}

// kParams16: 16-bit parameters (WeightOnlyArgs::params16), a separate build of
// each kernel so that the fp32 one keeps its code. How a thread copies its
// row's two parameters of a block (`pair`, the same for the whole CTA):
//   fp32, row-major, even group count, 8-byte aligned rows: one 8-byte cp.async;
//   fp32 otherwise (also group-major parameters, wonly_args.h): two 4-byte cp.async;
//   16-bit, row-major, even group count, 4-byte aligned rows: one 4-byte cp.async;
//   16-bit with adjacent rows adjacent in memory (group-major, as GPTQ / AWQ
//   store their scales, or per channel [N]), an even N, an even group
//   stride and 4-byte aligned tensors (`words`): two 4-byte cp.async, each
//   the aligned word around the row's parameter (its other half row r ^ 1's,
//   inside the tensor since N is even);
//   16-bit otherwise (odd group counts or strides, odd N): two 2-byte
//   loads and a shared store, synchronous — once per output tile per
//   channel, once per block of two groups else (cp.async copies 4 bytes at
//   least, and the 4 bytes around a lone 2-byte parameter may lie outside
//   the tensor). H200, 16-bit group-major parameters, M = 64 / 256, before
//   `words`: 7–14 % slower than the same parameters row-major
//   (bench/results/wonly-h200-b6b072e.json).
template <bool kParams16>
struct ParamBlocks {
  using Param = std::conditional_t<kParams16, uint16_t, float>;
  const Param* src;  // thread i: row i % 128's scales (i < 128) or offsets; null: zeros
  const Param* any;  // a valid address for zero-filling copies
  uint32_t dst;        // its 8 bytes in buffer 0
  int group_shift;     // group of element k: k >> shift (per channel: 31, group 0)
  int groups;          // per row
  int group_stride;    // elements from one group of a row to the next (< 2^31: check_tensor_core_limits)
  int first_block;     // the block of the loop's first k tile
  bool pair;           // one copy of both parameters (above)
  bool words;          // 16-bit: the aligned words around them (above)

  __device__ ParamBlocks(const WeightOnlyArgs& args, int64_t row_base, uint32_t buffers, int first_tile) {
    const int i = threadIdx.x;
    const int64_t row = min(row_base + i % kTileRows, args.n - 1);  // past N: never stored
    const bool scales = i < kTileRows;
    src = scales ? static_cast<const Param*>(args.scales) + row * args.ld_scales
                 : (args.offsets != nullptr ? static_cast<const Param*>(args.offsets) + row * args.ld_offsets : nullptr);
    any = static_cast<const Param*>(args.scales);
    dst = buffers + static_cast<uint32_t>(i % kTileRows) * 16 + (scales ? 0 : 8);
    group_shift = element_group_shift(args);
    groups = static_cast<int>((args.k + args.group_size - 1) / args.group_size);
    group_stride = static_cast<int>(args.params_group_stride);
    first_block = block(first_tile);
    pair = group_stride == 1 && groups % 2 == 0 &&
           (src == nullptr || (reinterpret_cast<uintptr_t>(src) & (2 * sizeof(Param) - 1)) == 0);
    pair = __syncthreads_and(pair);
    words = false;
    if constexpr (kParams16) {  // the fp32 builds keep their code
      const int64_t row_stride = scales ? args.ld_scales : args.ld_offsets;
      words = !pair && args.n % 2 == 0 && (groups == 1 || group_stride % 2 == 0) &&
              (src == nullptr || (row_stride == 1 && (reinterpret_cast<uintptr_t>(src - row) & 3) == 0));
      words = __syncthreads_and(words);
    }
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
    if (pair) {
      if constexpr (kParams16) {
        cp_async_4(to, fill ? src + q : any, fill);
      } else {
        cp_async_8(to, fill ? src + q : any, fill);
      }
    } else {
      const Param* first = fill ? src + static_cast<int64_t>(q) * group_stride : any;
      const Param* second = fill ? first + group_stride : any;
      if constexpr (kParams16) {
        if (words) {
          cp_async_4(to, fill && q < groups ? aligned_word(first) : any, fill && q < groups);
          cp_async_4(to + 4, fill && q + 1 < groups ? aligned_word(second) : any, fill && q + 1 < groups);
        } else {
          const uint32_t lo = fill && q < groups ? __ldg(first) : 0u;
          const uint32_t hi = fill && q + 1 < groups ? __ldg(second) : 0u;
          asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(to), "r"(lo | hi << 16) : "memory");
        }
      } else {
        cp_async_4(to, fill && q < groups ? first : any, fill && q < groups);
        cp_async_4(to + 4, fill && q + 1 < groups ? second : any, fill && q + 1 < groups);
      }
    }
  }

  // The 4-byte word that holds the 16-bit parameter at p (`words`).
  static __device__ __forceinline__ const Param* aligned_word(const Param* p) {
    return reinterpret_cast<const Param*>(reinterpret_cast<uintptr_t>(p) & ~uintptr_t{3});
  }

  // Which of the block's two groups half h of k tile kt uses. A half at or
  // past K uses the second, which then lies past the row's last group and
  // holds zeros (K mod 64 = 32 happens only with group 32, K/32 odd, or per
  // channel, one group), as per-tile zero-filled params would.
  __device__ __forceinline__ bool second_of_block(int kt, int half, int64_t k) const {
    const int k_half = kt * kTileK + 32 * half;
    return k_half >= k || (group(k_half) & 1) != 0;
  }
};

// Rows g and g + 8 of a param block, as the HFMA2 operands (s_T, s_T) and
// (o_T, o_T) of its two groups: [h][0] group q, [h][1] group q + 1.
struct ParamPairs {
  uint32_t scale[2][2], offset[2][2];
};

// Rows `row` and `row` + 8 of a param block. fp32: rounded to T (one F2FP
// each); 16-bit: already T, each half duplicated into both (one PRMT) — with
// `words` (ParamBlocks::words) the half of the row's parity in each word.
template <bool kBf16, bool kParams16>
__device__ __forceinline__ void load_params(const ParamBuffer& block, int row, ParamPairs& par, bool words) {
  const uint32_t odd_row = words ? static_cast<uint32_t>(row & 1) : 0u;  // rows row and row + 8 alike
  const uint32_t half = 0x1010u + 0x2222u * odd_row;                      // PRMT: the low or high half, twice
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const float4 v = *reinterpret_cast<const float4*>(block.rows[row + 8 * h]);
    if constexpr (kParams16) {
      if (words) {
        const uint32_t s0 = __float_as_uint(v.x), s1 = __float_as_uint(v.y);
        const uint32_t o0 = __float_as_uint(v.z), o1 = __float_as_uint(v.w);
        par.scale[h][0] = __byte_perm(s0, s0, half), par.scale[h][1] = __byte_perm(s1, s1, half);
        par.offset[h][0] = __byte_perm(o0, o0, half), par.offset[h][1] = __byte_perm(o1, o1, half);
      } else {
        const uint32_t s = __float_as_uint(v.x), o = __float_as_uint(v.z);
        par.scale[h][0] = __byte_perm(s, s, 0x1010), par.scale[h][1] = __byte_perm(s, s, 0x3232);
        par.offset[h][0] = __byte_perm(o, o, 0x1010), par.offset[h][1] = __byte_perm(o, o, 0x3232);
      }
    } else {
      par.scale[h][0] = param2<kBf16>(v.x), par.scale[h][1] = param2<kBf16>(v.y);
      par.offset[h][0] = param2<kBf16>(v.z), par.offset[h][1] = param2<kBf16>(v.w);
    }
  }
}

}  // namespace qgemm::detail::wonly
