// CUDA paged_attention_decode: the launch of the plan (attention_plan.h has
// the rule between the kernels), the split over a workspace, and the kernel
// that combines the partitions of a split sequence (paged_attention_mma.cuh
// and paged_attention_kernel.cuh have the attention kernels themselves).
#include <cuda_runtime.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "core/cuda_check.h"
#include "core/cuda_device_info.h"
#include "kvcache/cuda/kv_cache_cuda.h"
#include "kvcache/cuda/paged_attention_launch.cuh"

namespace qgemm::detail {
namespace {

std::atomic<AttentionKernel> forced_kernel{AttentionKernel::kAuto};
// Partitions (with a workspace: flash-decoding's split, combined by a second
// kernel). Enough partitions per (sequence, kv head) that the grid is about
// one wave of resident CTAs — more waves only add each CTA's fixed cost (Q
// fragments, the first loads' latency, the merge and the workspace round
// trip); measured on the H200, 32 × 4096 tokens of Llama-3-8B took 339 µs in
// 2048 CTAs of 512 tokens and 251 µs in the 256 unsplit ones — but at
// least kMinPartitionTokens (256, kv_cache_args.h) tokens each. Without a
// workspace one CTA walks its sequence whole. The CTAs per SM come with the
// plan (attention_plan.h); attention_split in kv_cache_args.h turns them
// into the partitions.

// out[s, h, :] = Σ_p acc_p · 2^(m_p − M) / Σ_p sum_p · 2^(m_p − M), M = max_p m_p.
// One block of head_dim threads per (sequence, query head).
template <DType kDtype>
__global__ void paged_attention_combine_kernel(attention::Params p) {
  using T = typename FloatAccess<kDtype>::Storage;
  wait_for_preceding_grids();
  allow_dependent_launch();
  const int64_t seq = blockIdx.x / p.q_heads;
  const int head = static_cast<int>(blockIdx.x % p.q_heads);
  const int head_dim = blockDim.x, d = threadIdx.x;
  const int64_t first = (seq * p.q_heads + head) * p.partitions;
  float max_logit = -INFINITY;
  for (int part = 0; part < p.partitions; ++part) max_logit = fmaxf(max_logit, p.ws_stats[2 * (first + part)]);
  float numerator = 0.0f, denominator = 0.0f;
  for (int part = 0; part < p.partitions; ++part) {
    const float sum = p.ws_stats[2 * (first + part) + 1];
    const float weight = sum == 0.0f ? 0.0f : exp2f(p.ws_stats[2 * (first + part)] - max_logit);  // empty: 0
    numerator += p.ws_acc[(first + part) * head_dim + d] * weight;
    denominator += sum * weight;
  }
  const float value = p.seq_lens[seq] == 0 ? 0.0f : numerator / denominator;
  static_cast<T*>(p.out)[seq * p.out_seq_stride + head * p.out_head_stride + d] = FloatAccess<kDtype>::from_float(value);
}

}  // namespace

AttentionKernelOverride::AttentionKernelOverride(AttentionKernel kernel) : previous_(forced_kernel.exchange(kernel)) {}
AttentionKernelOverride::~AttentionKernelOverride() { forced_kernel.store(previous_); }

void paged_attention_cuda(const PagedAttentionArgs& args) {
  const KvCacheLayout& cache = args.cache;
  const int64_t group = args.group_size();
  const int sms = cuda_device_info(args.device.index).sm_count;
  const AttentionPlan plan =
      attention_plan(cache.dtype, group, cache.head_dim, args.num_seqs, cache.kv_heads, sms, forced_kernel.load());
  const int tile = plan.heads_per_cta;
  const int64_t head_chunks = (group + tile - 1) / tile;
  const int64_t ctas = args.num_seqs * cache.kv_heads * head_chunks;
  int64_t partitions = 1, partition_tokens = args.max_seq_len;
  if (args.workspace != nullptr) {
    const AttentionSplit split = attention_split(ctas, plan.resident_per_sm, sms, args.max_seq_len);
    partitions = split.partitions;
    partition_tokens = split.partition_tokens;
  }
  if (ctas > std::numeric_limits<int32_t>::max() || partitions > 65535) {
    throw Error(ErrorKind::kValue, "query: S=" + std::to_string(args.num_seqs) + " sequences × " +
                                       std::to_string(cache.kv_heads) + " kv heads exceed the CUDA grid");
  }
  CudaDeviceGuard guard(args.device);
  attention::Params params{};
  params.query = args.query;
  params.query_seq_stride = args.query_seq_stride;
  params.query_head_stride = args.query_head_stride;
  params.out = args.out;
  params.out_seq_stride = args.out_seq_stride;
  params.out_head_stride = args.out_head_stride;
  params.key = cache.key;
  params.value = cache.value;
  params.key_scale = cache.key_scale;
  params.value_scale = cache.value_scale;
  params.num_blocks = static_cast<uint32_t>(cache.num_blocks);
  params.block_size = static_cast<uint32_t>(cache.block_size);
  params.kv_heads = cache.kv_heads;
  params.block_tables = args.block_tables;
  params.table_stride = args.block_table_stride;
  params.max_blocks = args.max_blocks;
  params.seq_lens = args.seq_lens;
  params.scale_log2 = args.softmax_scale * 1.4426950408889634f;
  params.q_heads = static_cast<int>(args.q_heads);
  params.group = static_cast<int>(group);
  params.head_chunks = static_cast<int>(head_chunks);
  params.partitions = static_cast<int>(partitions);
  params.partition_tokens = partition_tokens;
  if (partitions > 1) {
    params.ws_acc = static_cast<float*>(args.workspace);
    params.ws_stats = params.ws_acc + args.num_seqs * args.q_heads * partitions * cache.head_dim;
  }
  const cudaStream_t stream = as_cuda_stream(args.stream);
  const attention::Launch launch{dim3(static_cast<unsigned>(ctas), static_cast<unsigned>(partitions)), plan.tensor_cores, tile,
                                 static_cast<int>(cache.head_dim), stream, args.device.index};
  switch (cache.dtype) {
    case DType::kInt8: attention::launch_int8(args.dtype, params, launch); break;
    case DType::kFloat8E4M3: attention::launch_fp8(args.dtype, params, launch); break;
    default: attention::launch_16bit(args.dtype, params, launch); break;
  }
  if (partitions == 1) return;
  const dim3 grid(static_cast<unsigned>(args.num_seqs * args.q_heads)), block(static_cast<unsigned>(cache.head_dim));
  if (args.dtype == DType::kBFloat16) {
    launch_pdl_kernel(paged_attention_combine_kernel<DType::kBFloat16>, grid, block, 0, stream, args.device.index, params);
  } else {
    launch_pdl_kernel(paged_attention_combine_kernel<DType::kFloat16>, grid, block, 0, stream, args.device.index, params);
  }
}

}  // namespace qgemm::detail
