// attention_plan.h — how the CUDA backend runs one paged_attention_decode
// call: which kernel, how many query heads per CTA, and how many CTAs per SM
// the kernel is built for (what attention_split sizes the partitions by).
// Host code, so the rule is tested on any machine; paged_attention_cuda.cu
// launches the plan.
#pragma once

#include <cstdint>

#include "qgemm/tensor.h"

namespace qgemm::detail {

// The two attention kernels.
enum class AttentionKernel : uint8_t {
  kAuto,
  kCudaCores,    // paged_attention_kernel.cuh
  kTensorCores,  // paged_attention_mma.cuh
};

struct AttentionPlan {
  bool tensor_cores = false;
  int heads_per_cta = 1;    // CUDA cores 1 or 8; tensor cores 8, or 16 up to head_dim 128
  int resident_per_sm = 2;  // CTAs per SM (registers, ptxas on sm_90a, over the 64 K of an SM)
};

// CUDA-core kernel: a CTA takes up to 8 query heads of a kv head's group
// (the register tile of q and the output: 2 × 8 × 8 floats per lane); a
// group of 1 (multi-head attention) takes the 1-head tile, without the other
// 7 heads' registers. Groups of more than 8 take several CTAs, each reading
// the cache. ~190 registers with 8 heads (2 CTAs per SM), ~72 with 1 (6).
constexpr int kCudaCoreHeadTile = 8;
constexpr int kResidentTiledCtas = 2, kResidentSingleHeadCtas = 6;
// Tensor-core kernel: ≤ 220 registers × 128 threads, 2 CTAs per SM.
constexpr int kResidentTensorCoreCtas = 2;

// The tensor-core kernel where several query heads share a kv head: the
// group's heads are its MMAs' N side, so the multiply-adds per cache byte,
// G · 4 for int8, leave the CUDA cores' rate behind (at G = 8 they need more
// FMA issue than the SM has to keep up with the DRAM). At head_dim 256 it is
// far ahead of the CUDA-core kernel, whose 8-head tile idles 6 of 8 heads at
// a group of 2 (H200, 32 × 4096 tokens, 16 over 8 heads, the experiment
// harness of bench/results/attention-h200-kernel-experiment.txt, sections
// 10–11: int8 165 against 676 µs, fp8 196 against 676, bf16 258 against 746).
// A group of 1 uses one column of 8 (H200, ecc426e, `qgemm bench attention`,
// MHA 32 × 32 heads at 1 × 4096 … 64 × 1024 tokens, µs tensor / CUDA cores):
//  - head_dim 128, int8: tensor cores at every shape, 1.03–1.29× (8 × 4096:
//    94.4 / 122.1), the CUDA-core kernel's code widening costs more than
//    the idle columns;
//  - head_dim 128, fp8 and 16-bit: tensor cores 1.07–1.18× faster while the
//    CUDA-core grid is under its 6 resident CTAs per SM (it would split;
//    bf16 8 × 4096: 128.1 / 137.6), equal or 1.01–1.16× slower above (fp8
//    64 × 1024: 219.8 / 190.1);
//  - head_dim 64 (16 × 16 heads, 8 × 4096): CUDA cores, 1.02–1.21× faster;
//  - head_dim 256: CUDA cores (not measured on the tensor-core kernel).
inline bool attention_on_tensor_cores(DType cache_dtype, int64_t group, int64_t head_dim, int64_t single_head_ctas,
                                      int sms) {
  if (group >= 2) return true;
  if (head_dim != 128) return false;
  return cache_dtype == DType::kInt8 || single_head_ctas < static_cast<int64_t>(kResidentSingleHeadCtas) * sms;
}

// `forced`: the kernel a test or benchmark asks for (AttentionKernelOverride),
// kAuto for the rule above. The tensor-core kernel takes one n-block of 8
// heads up to a group of 8, else two (16 per CTA, several CTAs per kv head
// beyond 16); at head_dim 256 always one (two would pass the 48 KB of static
// shared memory of the warps' staged outputs).
inline AttentionPlan attention_plan(DType cache_dtype, int64_t group, int64_t head_dim, int64_t num_seqs,
                                    int64_t kv_heads, int sms, AttentionKernel forced) {
  AttentionPlan plan;
  plan.tensor_cores = forced == AttentionKernel::kAuto
                          ? attention_on_tensor_cores(cache_dtype, group, head_dim, num_seqs * kv_heads * group, sms)
                          : forced == AttentionKernel::kTensorCores;
  if (plan.tensor_cores) {
    plan.heads_per_cta = group <= 8 || head_dim > 128 ? 8 : 16;
    plan.resident_per_sm = kResidentTensorCoreCtas;
  } else {
    plan.heads_per_cta = group == 1 ? 1 : kCudaCoreHeadTile;
    plan.resident_per_sm = plan.heads_per_cta == 1 ? kResidentSingleHeadCtas : kResidentTiledCtas;
  }
  return plan;
}

}  // namespace qgemm::detail
