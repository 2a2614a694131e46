// `qgemm bench attention`, the GPU part (the command and its CPU part:
// bench_attention.cpp): paged_attention_decode on S sequences of L tokens
// each, over an int8, an fp8 and a bf16 paged cache (blocks of 16 tokens in
// a shuffled order), bf16 queries, all in one run with the device copy
// bandwidth. The bf16 cache is the unquantized peer: the same kernel family
// reading twice the bytes.
//
// Each implementation runs as an engine would call it: with a workspace
// (paged_attention_workspace_bytes for L), so long sequences are split
// over several CTAs; "-unsplit" times the int8 cache without one, and
// "-cuda-cores" / "-tensor-cores" force one of the two attention kernels
// (detail::AttentionKernelOverride; where the dispatch picks the same one,
// the record repeats it). The
// caches are rotated across copies so the working set exceeds L2.
//
// Per record: bytes = the cache's K and V (and their scales) read for the
// S·L tokens + the queries read and the outputs written; frac_of_copy_bw =
// (bytes / time) / copy bandwidth; speedup_vs_bf16_cache = the bf16 cache's
// time / this time. --rounds R: each shape's implementations timed R times
// round-robin (the median of the round medians); --cooldown MS: an idle
// pause before every timing.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench_attention_shapes.h"
#include "commands.h"
#include "cuda_bench.h"
#include "kvcache/cuda/kv_cache_cuda.h"
#include "qgemm/kv_cache.h"

namespace qgemm::tools {
namespace {

constexpr int64_t kBlockSize = 16;

struct CacheVariant {
  const char* impl;
  DType dtype;
  bool split;
  detail::AttentionKernel kernel = detail::AttentionKernel::kAuto;
};

// Rotated copies of one cache dtype's pools.
struct Pools {
  int sets = 1;
  size_t pool_bytes = 0, scale_bytes = 0;
  cuda::DeviceBuffer key, value, key_scale, value_scale;
};

}  // namespace

void bench_attention_cuda(const Options& options, BenchReport& report) {
  report.set_device_name(cuda::device_name(0));
  cudaStream_t stream = nullptr;
  const int warmup = options.get_int("warmup", 10), runs = options.get_int("runs", 50);
  const int rounds = std::max(1, options.get_int("rounds", 1));
  cuda::set_cooldown_ms(options.get_int("cooldown", 0));
  const double copy_gbps = cuda::record_copy_bandwidth(report, stream);
  const Device gpu = Device::cuda(0);
  const CacheVariant variants[] = {{"qgemm-bf16-cache", DType::kBFloat16, true},
                                   {"qgemm-int8-cache", DType::kInt8, true},
                                   {"qgemm-fp8-cache", DType::kFloat8E4M3, true},
                                   {"qgemm-int8-cache-unsplit", DType::kInt8, false},
                                   // Each cache forced onto each kernel (attention_plan.h's rule
                                   // picks one), for the data behind the rule.
                                   {"qgemm-bf16-cache-cuda-cores", DType::kBFloat16, true, detail::AttentionKernel::kCudaCores},
                                   {"qgemm-bf16-cache-tensor-cores", DType::kBFloat16, true, detail::AttentionKernel::kTensorCores},
                                   {"qgemm-int8-cache-cuda-cores", DType::kInt8, true, detail::AttentionKernel::kCudaCores},
                                   {"qgemm-int8-cache-tensor-cores", DType::kInt8, true, detail::AttentionKernel::kTensorCores},
                                   {"qgemm-fp8-cache-cuda-cores", DType::kFloat8E4M3, true, detail::AttentionKernel::kCudaCores},
                                   {"qgemm-fp8-cache-tensor-cores", DType::kFloat8E4M3, true, detail::AttentionKernel::kTensorCores}};

  for (const auto& spec : options.get_shapes("shapes", default_attention_shapes())) {
    const AttentionShape s = attention_shape(spec);
    const std::string shape = std::to_string(s.seqs) + "x" + std::to_string(s.len) + "x" + std::to_string(s.q_heads) +
                              "x" + std::to_string(s.kv_heads) + "x" + std::to_string(s.head_dim);
    const int64_t blocks_per_seq = (s.len + kBlockSize - 1) / kBlockSize, blocks = s.seqs * blocks_per_seq;
    const int64_t elems = blocks * kBlockSize * s.kv_heads * s.head_dim, scales = blocks * kBlockSize * s.kv_heads;

    // Each sequence's blocks: a shuffled permutation of the pool.
    std::vector<int32_t> table(static_cast<size_t>(blocks)), lens(static_cast<size_t>(s.seqs), static_cast<int32_t>(s.len));
    std::iota(table.begin(), table.end(), 0);
    std::shuffle(table.begin(), table.end(), std::mt19937_64(11));
    cuda::DeviceBuffer tables_dev(table.size() * 4), lens_dev(lens.size() * 4);
    cuda::check(cudaMemcpy(tables_dev.get(), table.data(), table.size() * 4, cudaMemcpyHostToDevice), "tables");
    cuda::check(cudaMemcpy(lens_dev.get(), lens.data(), lens.size() * 4, cudaMemcpyHostToDevice), "lens");
    const int64_t q_elems = s.seqs * s.q_heads * s.head_dim;
    cuda::DeviceBuffer query(q_elems * 2), out(q_elems * 2);
    cuda::fill_random(query.get(), DType::kBFloat16, q_elems, -1, 1, 31, stream);
    const int64_t ws_bytes = paged_attention_workspace_bytes(s.seqs, s.q_heads, s.head_dim, s.len);
    cuda::DeviceBuffer workspace(static_cast<size_t>(std::max<int64_t>(ws_bytes, 16)));

    // One set of pools per cache dtype.
    std::vector<Pools> pools(3);
    const DType dtypes[] = {DType::kBFloat16, DType::kInt8, DType::kFloat8E4M3};
    for (int i = 0; i < 3; ++i) {
      Pools& p = pools[i];
      const bool quantized = dtypes[i] != DType::kBFloat16;
      p.pool_bytes = elems * dtype_size(dtypes[i]);
      p.scale_bytes = quantized ? scales * 4 : 0;
      p.sets = cuda::rotation_sets(2 * (p.pool_bytes + p.scale_bytes), 16);
      p.key = cuda::DeviceBuffer(p.pool_bytes * p.sets);
      p.value = cuda::DeviceBuffer(p.pool_bytes * p.sets);
      const double lo = dtypes[i] == DType::kInt8 ? -128 : -2, hi = dtypes[i] == DType::kInt8 ? 127 : 2;
      cuda::fill_random(p.key.get(), dtypes[i], elems * p.sets, lo, hi, 32 + i, stream);
      cuda::fill_random(p.value.get(), dtypes[i], elems * p.sets, lo, hi, 42 + i, stream);
      if (quantized) {
        p.key_scale = cuda::DeviceBuffer(p.scale_bytes * p.sets);
        p.value_scale = cuda::DeviceBuffer(p.scale_bytes * p.sets);
        cuda::fill_random(p.key_scale.get(), DType::kFloat32, scales * p.sets, 0.005, 0.02, 52 + i, stream);
        cuda::fill_random(p.value_scale.get(), DType::kFloat32, scales * p.sets, 0.005, 0.02, 62 + i, stream);
      }
    }
    cuda::check(cudaStreamSynchronize(stream), "fill");

    const TensorView q_v(query.get(), DType::kBFloat16, {s.seqs, s.q_heads, s.head_dim}, gpu);
    const TensorView o_v(out.get(), DType::kBFloat16, {s.seqs, s.q_heads, s.head_dim}, gpu);
    const TensorView t_v(tables_dev.get(), DType::kInt32, {s.seqs, blocks_per_seq}, gpu);
    const TensorView l_v(lens_dev.get(), DType::kInt32, {s.seqs}, gpu);
    const TensorView ws_v(workspace.get(), DType::kUInt8, {ws_bytes}, gpu);
    const float softmax_scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));

    std::vector<BenchReport> round_reports;
    for (int round = 0; round < rounds; ++round) {
      BenchReport& into = round_reports.emplace_back("", "");
      for (const CacheVariant& var : variants) {
        const int which = var.dtype == DType::kBFloat16 ? 0 : var.dtype == DType::kInt8 ? 1 : 2;
        const Pools& p = pools[which];
        const auto call = [&](int i) {
          const int set = i % p.sets;
          PagedKvCache cache;
          cache.key = TensorView(p.key.as<uint8_t>() + set * p.pool_bytes, var.dtype,
                                 {blocks, kBlockSize, s.kv_heads, s.head_dim}, gpu);
          cache.value = TensorView(p.value.as<uint8_t>() + set * p.pool_bytes, var.dtype,
                                   {blocks, kBlockSize, s.kv_heads, s.head_dim}, gpu);
          if (p.scale_bytes > 0) {
            cache.key_scale = TensorView(p.key_scale.as<uint8_t>() + set * p.scale_bytes, DType::kFloat32,
                                         {blocks, kBlockSize, s.kv_heads}, gpu);
            cache.value_scale = TensorView(p.value_scale.as<uint8_t>() + set * p.scale_bytes, DType::kFloat32,
                                           {blocks, kBlockSize, s.kv_heads}, gpu);
          }
          std::optional<TensorView> ws;
          if (var.split) ws = ws_v;
          paged_attention_decode(o_v, q_v, cache, t_v, l_v, softmax_scale, s.len, ws, stream);
        };
        const detail::AttentionKernelOverride force(var.kernel);
        BenchRecord r = timed_record("paged_attention_decode", var.impl, shape, "cuda",
                                     cuda::time_cuda_device(call, stream, warmup, runs));
        const int64_t token_heads = s.seqs * s.len * s.kv_heads;
        const int64_t per_vector = s.head_dim * static_cast<int64_t>(dtype_size(var.dtype)) + (p.scale_bytes > 0 ? 4 : 0);
        r.bytes = static_cast<double>(2 * token_heads * per_vector + 2 * q_elems * 2);
        r.ops = 4.0 * s.seqs * s.len * s.q_heads * s.head_dim;  // q·k and p·v multiply-adds
        into.add(r);
      }
    }
    // The median of the round medians (one round: its records), ratios from those.
    const std::vector<BenchRecord> records = merge_rounds(round_reports);
    double bf16_us = 0;
    for (const BenchRecord& r : records) {
      if (r.impl == "qgemm-bf16-cache") bf16_us = r.median_us;
    }
    for (BenchRecord r : records) {
      r.extra["frac_of_copy_bw"] = r.bytes / (r.median_us * 1e3) / copy_gbps;
      r.extra["speedup_vs_bf16_cache"] = bf16_us / r.median_us;
      report.add(r);
    }
  }
}

}  // namespace qgemm::tools
