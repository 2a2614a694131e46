// CUDA paged KV cache ops against the CPU twin, every output poisoned first:
//  - kv_cache_write: the same bytes (codes, scales, copies) for every cache
//    dtype, with strided keys and skipped slots;
//  - paged_attention_decode: every cache dtype × head_dim × group size
//    (1, 2, 4, 8, 10, 12 and 16: two n-blocks of heads) at several block
//    sizes and lengths (0, 1, odd, several partitions), unsplit and split
//    over a workspace, within the tolerance of kv_problem.h
//    (output_tolerance: the same fp32 formulas in another order);
//  - a max_seq_len hint below the real lengths (still attended in full),
//    bad sequences → NaN for them alone, bf16 queries beyond fp16's range
//    (the tensor-core kernel's fp16 QK), pools not 16-byte aligned (rejected),
//    and CUDA-graph capture and replay.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "common/cuda_buffer.h"
#include "common/expect_error.h"
#include "kvcache/cuda/kv_cache_cuda.h"
#include "kvcache/kv_buffers.h"
#include "qgemm/kv_cache.h"

namespace qgemm::test {
namespace {

// A scenario's cache and inputs on the GPU.
struct DeviceProblem {
  const KvProblem& p;
  CudaBuffer key, value, key_scale, value_scale, new_keys, new_values, slots, query, out, tables, lens;

  explicit DeviceProblem(const KvProblem& problem)
      : p(problem),
        key(problem.cache_elems() * dtype_size(problem.shape.cache_dtype)),
        value(key.bytes()),
        key_scale(problem.quantized() ? problem.scale_elems() * 4 : 0),
        value_scale(key_scale.bytes()),
        new_keys(problem.keys),
        new_values(problem.values),
        slots(problem.slots),
        query(problem.query),
        out(problem.query.size() * 2),
        tables(problem.block_tables),
        lens(problem.seq_lens) {
    key.poison();
    value.poison();
    if (key_scale.bytes() > 0) {
      key_scale.poison();
      value_scale.poison();
    }
  }
  PagedKvCache cache() {
    return HostCache::cache_view(p, key.get(), value.get(), static_cast<float*>(key_scale.get()),
                                 static_cast<float*>(value_scale.get()), Device::cuda());
  }
  void write(cudaStream_t stream = nullptr) {
    kv_cache_write(cache(), keys_view(p, new_keys.get(), Device::cuda()), keys_view(p, new_values.get(), Device::cuda()),
                   TensorView(slots.get(), DType::kInt64, {p.tokens}, Device::cuda()), stream);
  }
  void attend(float softmax_scale, int64_t max_seq_len, const std::optional<TensorView>& workspace,
              cudaStream_t stream = nullptr) {
    const int64_t hd = p.shape.head_dim;
    paged_attention_decode(TensorView(out.get(), p.shape.dtype, {p.seqs(), p.q_heads(), hd}, Device::cuda()),
                           TensorView(query.get(), p.shape.dtype, {p.seqs(), p.q_heads(), hd}, Device::cuda()), cache(),
                           TensorView(tables.get(), DType::kInt32, {p.seqs(), p.max_blocks}, Device::cuda()),
                           TensorView(lens.get(), DType::kInt32, {p.seqs()}, Device::cuda()), softmax_scale,
                           max_seq_len, workspace, stream);
  }
};

// The CPU twin on the same problem: its cache and output.
struct CpuResult {
  HostCache cache;
  std::vector<uint16_t> out;
};
CpuResult cpu_result(const KvProblem& p, float softmax_scale) {
  CpuResult r{HostCache(p), std::vector<uint16_t>(p.query.size(), 0xffff)};
  kv_cache_write(r.cache.view(), keys_view(p, p.keys.data()), keys_view(p, p.values.data()),
                 TensorView(p.slots.data(), DType::kInt64, {p.tokens}));
  const int64_t hd = p.shape.head_dim;
  paged_attention_decode(TensorView(r.out.data(), p.shape.dtype, {p.seqs(), p.q_heads(), hd}),
                         TensorView(p.query.data(), p.shape.dtype, {p.seqs(), p.q_heads(), hd}), r.cache.view(),
                         TensorView(p.block_tables.data(), DType::kInt32, {p.seqs(), p.max_blocks}),
                         TensorView(p.seq_lens.data(), DType::kInt32, {p.seqs()}), softmax_scale);
  return r;
}

void expect_same_cache(const DeviceProblem& dev, const HostCache& host) {
  std::vector<uint8_t> key, value;
  dev.key.download(key);
  dev.value.download(value);
  EXPECT_EQ(key, host.key) << "key pool";
  EXPECT_EQ(value, host.value) << "value pool";
  if (dev.key_scale.bytes() > 0) {
    std::vector<float> ks, vs;
    dev.key_scale.download(ks);
    dev.value_scale.download(vs);
    EXPECT_EQ(std::memcmp(ks.data(), host.key_scale.data(), ks.size() * 4), 0) << "key scales";
    EXPECT_EQ(std::memcmp(vs.data(), host.value_scale.data(), vs.size() * 4), 0) << "value scales";
  }
}

void expect_close_outputs(const KvProblem& p, const CpuResult& cpu, const std::vector<uint16_t>& gpu, const char* what) {
  double max_abs_value = 0.0;
  reference_attention(p, cpu.cache.contents(), 1.0, &max_abs_value);  // for max |v̂| only
  int bad = 0;
  for (size_t i = 0; i < gpu.size() && bad < 8; ++i) {
    const double want = from_bits(cpu.out[i], p.shape.dtype), got = from_bits(gpu[i], p.shape.dtype);
    if (!(std::fabs(got - want) <= output_tolerance(want, max_abs_value, p.shape.dtype))) {
      ADD_FAILURE() << what << ": out[" << i << "] (seq " << i / (p.q_heads() * p.shape.head_dim) << ") GPU " << got
                    << ", CPU " << want;
      ++bad;
    }
  }
}

class PagedAttentionCuda : public ::testing::TestWithParam<AttentionCase> {
 protected:
  void SetUp() override { QGEMM_SKIP_WITHOUT_GPU(); }
};

TEST_P(PagedAttentionCuda, MatchesCpuUnsplitAndSplit) {
  const AttentionCase c = GetParam();
  auto rng = make_rng(static_cast<uint64_t>(c.head_dim * 13 + c.group * 5 + c.block_size));
  const KvShape shape = c.shape({1, 0, 37, 1300, 512, 513, c.block_size}, c.group > 4 ? 1 : 3);
  const KvProblem p = make_kv_problem(shape, rng);
  const float softmax_scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  const CpuResult cpu = cpu_result(p, softmax_scale);

  DeviceProblem dev(p);
  dev.write();
  QGEMM_TEST_CUDA(cudaDeviceSynchronize());
  expect_same_cache(dev, cpu.cache);

  const int64_t max_seq_len = p.max_blocks * shape.block_size;
  const int64_t ws_bytes = paged_attention_workspace_bytes(p.seqs(), p.q_heads(), c.head_dim, max_seq_len);
  ASSERT_GT(ws_bytes, 0);
  CudaBuffer ws(static_cast<size_t>(ws_bytes));
  ws.poison();
  const TensorView ws_v(ws.get(), DType::kUInt8, {ws_bytes}, Device::cuda());
  // Both kernels.
  for (const auto kernel : {detail::AttentionKernel::kCudaCores, detail::AttentionKernel::kTensorCores}) {
    const detail::AttentionKernelOverride force(kernel);
    const std::string name = kernel == detail::AttentionKernel::kCudaCores ? "CUDA cores" : "tensor cores";
    std::vector<uint16_t> gpu;
    dev.out.poison();
    dev.attend(softmax_scale, 0, std::nullopt);
    QGEMM_TEST_CUDA(cudaDeviceSynchronize());
    dev.out.download(gpu);
    expect_close_outputs(p, cpu, gpu, (name + ", unsplit").c_str());

    dev.out.poison();
    dev.attend(softmax_scale, 0, ws_v);
    QGEMM_TEST_CUDA(cudaDeviceSynchronize());
    dev.out.download(gpu);
    expect_close_outputs(p, cpu, gpu, (name + ", split").c_str());

    // A hint below the real lengths: fewer partitions, the last one takes the rest.
    dev.out.poison();
    dev.attend(softmax_scale, 600, ws_v);
    QGEMM_TEST_CUDA(cudaDeviceSynchronize());
    dev.out.download(gpu);
    expect_close_outputs(p, cpu, gpu, (name + ", max_seq_len=600").c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, PagedAttentionCuda,
    ::testing::Values(AttentionCase{DType::kInt8, DType::kBFloat16, 128, 1, 16}, AttentionCase{DType::kInt8, DType::kBFloat16, 128, 8, 16},
                      AttentionCase{DType::kInt8, DType::kFloat16, 64, 4, 32}, AttentionCase{DType::kInt8, DType::kBFloat16, 256, 2, 16},
                      AttentionCase{DType::kInt8, DType::kFloat16, 128, 12, 7}, AttentionCase{DType::kFloat8E4M3, DType::kBFloat16, 128, 8, 16},
                      AttentionCase{DType::kFloat8E4M3, DType::kFloat16, 64, 1, 16}, AttentionCase{DType::kFloat8E4M3, DType::kBFloat16, 256, 4, 1},
                      AttentionCase{DType::kBFloat16, DType::kBFloat16, 128, 8, 16}, AttentionCase{DType::kBFloat16, DType::kBFloat16, 64, 1, 32},
                      AttentionCase{DType::kFloat16, DType::kFloat16, 256, 8, 16}, AttentionCase{DType::kFloat16, DType::kFloat16, 128, 1, 5},
                      // Two n-blocks of heads in the tensor-core kernel: a full 16 and a ragged 10.
                      AttentionCase{DType::kBFloat16, DType::kBFloat16, 64, 16, 16},
                      AttentionCase{DType::kFloat8E4M3, DType::kBFloat16, 128, 10, 16}),
    [](const ::testing::TestParamInfo<AttentionCase>& info) { return info.param.name(); });

class KvCacheCuda : public ::testing::Test {
 protected:
  void SetUp() override { QGEMM_SKIP_WITHOUT_GPU(); }
};

TEST_F(KvCacheCuda, WriteSkipsSlotsAndTakesStridedKeys) {
  auto rng = make_rng();
  KvShape shape;
  shape.head_dim = 64;
  shape.seq_lens = {30};
  KvProblem p = make_kv_problem(shape, rng);
  const int64_t capacity = p.num_blocks * shape.block_size;
  p.slots[3] = -1;
  p.slots[7] = capacity;
  const CpuResult cpu = cpu_result(p, 0.125f);
  // The keys as a slice of a fused QKV buffer on the GPU.
  const int64_t hd = shape.head_dim, kvh = shape.kv_heads, width = (p.q_heads() + 2 * kvh) * hd;
  std::vector<uint16_t> qkv(static_cast<size_t>(p.tokens * width), 0x7fc0);
  for (int64_t t = 0; t < p.tokens; ++t) {
    std::memcpy(&qkv[t * width + p.q_heads() * hd], &p.keys[t * kvh * hd], kvh * hd * 2);
    std::memcpy(&qkv[t * width + (p.q_heads() + kvh) * hd], &p.values[t * kvh * hd], kvh * hd * 2);
  }
  CudaBuffer qkv_dev(qkv);
  DeviceProblem dev(p);
  const auto* base = static_cast<const uint16_t*>(qkv_dev.get());
  kv_cache_write(dev.cache(),
                 TensorView::strided(base + p.q_heads() * hd, shape.dtype, {p.tokens, kvh, hd}, {width, hd, 1}, Device::cuda()),
                 TensorView::strided(base + (p.q_heads() + kvh) * hd, shape.dtype, {p.tokens, kvh, hd}, {width, hd, 1},
                                     Device::cuda()),
                 TensorView(dev.slots.get(), DType::kInt64, {p.tokens}, Device::cuda()));
  QGEMM_TEST_CUDA(cudaDeviceSynchronize());
  expect_same_cache(dev, cpu.cache);
}

TEST_F(KvCacheCuda, BadSequencesGetNaNAndOnlyThey) {
  auto rng = make_rng();
  KvShape shape;
  shape.seq_lens = {700, 700, 700, 0};
  KvProblem p = make_kv_problem(shape, rng);
  const CpuResult clean = cpu_result(p, 0.1f);
  DeviceProblem dev(p);
  dev.write();
  p.block_tables[1 * p.max_blocks + 40] = -5;  // in the second partition
  p.seq_lens[2] = static_cast<int32_t>(p.max_blocks * shape.block_size + 1);
  CudaBuffer tables(p.block_tables), lens(p.seq_lens);
  const int64_t ws_bytes = paged_attention_workspace_bytes(p.seqs(), p.q_heads(), shape.head_dim, 4096);
  CudaBuffer ws(static_cast<size_t>(ws_bytes));
  for (int run = 0; run < 4; ++run) {
    const bool split = run % 2 == 1;
    const detail::AttentionKernelOverride force(run < 2 ? detail::AttentionKernel::kCudaCores
                                                        : detail::AttentionKernel::kTensorCores);
    dev.out.poison();
    const int64_t hd = shape.head_dim;
    std::optional<TensorView> workspace;
    if (split) workspace = TensorView(ws.get(), DType::kUInt8, {ws_bytes}, Device::cuda());
    paged_attention_decode(TensorView(dev.out.get(), p.shape.dtype, {p.seqs(), p.q_heads(), hd}, Device::cuda()),
                           TensorView(dev.query.get(), p.shape.dtype, {p.seqs(), p.q_heads(), hd}, Device::cuda()),
                           dev.cache(), TensorView(tables.get(), DType::kInt32, {p.seqs(), p.max_blocks}, Device::cuda()),
                           TensorView(lens.get(), DType::kInt32, {p.seqs()}, Device::cuda()), 0.1f, 0, workspace);
    QGEMM_TEST_CUDA(cudaDeviceSynchronize());
    std::vector<uint16_t> out;
    dev.out.download(out);
    const int64_t per_seq = p.q_heads() * hd;
    for (int64_t i = 0; i < 4 * per_seq; ++i) {
      const double v = from_bits(out[i], shape.dtype), want = from_bits(clean.out[i], shape.dtype);
      const int64_t s = i / per_seq;
      if (s == 1 || s == 2) {
        ASSERT_TRUE(std::isnan(v)) << "seq " << s << " split " << split;
      } else if (s == 3) {
        ASSERT_EQ(v, 0.0) << "split " << split;
      } else {
        ASSERT_NEAR(v, want, output_tolerance(want, 4.0, shape.dtype)) << "split " << split;
      }
    }
  }
}

// The tensor-core kernel multiplies a quantized cache's codes by the query
// in fp16: a bf16 query far outside fp16's range (2^±100) is scaled by a
// power of two per head first, and a zero head stays zero. softmax_scale
// brings the logits back to O(1), so a lost or saturated query shows.
TEST_F(KvCacheCuda, BfloatQueriesBeyondTheFp16Range) {
  for (const DType cache_dtype : {DType::kInt8, DType::kFloat8E4M3}) {
    for (const float query_scale : {0x1p100f, 0x1p-100f}) {
      auto rng = make_rng(cache_dtype == DType::kInt8 ? 11 : 12);
      KvShape shape;
      shape.cache_dtype = cache_dtype;
      shape.group = 8;
      shape.seq_lens = {300, 45};
      KvProblem p = make_kv_problem(shape, rng);
      for (auto& b : p.query) b = to_bits(from_bits(b, shape.dtype) * query_scale, shape.dtype);
      std::fill_n(p.query.begin() + 3 * shape.head_dim, shape.head_dim, uint16_t{0});  // head 3 of sequence 0
      const float softmax_scale = 1.0f / (std::sqrt(static_cast<float>(shape.head_dim)) * query_scale);
      const CpuResult cpu = cpu_result(p, softmax_scale);
      DeviceProblem dev(p);
      dev.write();
      for (const auto kernel : {detail::AttentionKernel::kCudaCores, detail::AttentionKernel::kTensorCores}) {
        const detail::AttentionKernelOverride force(kernel);
        dev.out.poison();
        dev.attend(softmax_scale, 0, std::nullopt);
        QGEMM_TEST_CUDA(cudaDeviceSynchronize());
        std::vector<uint16_t> gpu;
        dev.out.download(gpu);
        const std::string what = case_name(cache_dtype, shape.dtype, shape.head_dim, shape.group, shape.block_size) +
                                 (query_scale > 1.0f ? ", query 2^100" : ", query 2^-100") +
                                 (kernel == detail::AttentionKernel::kCudaCores ? ", CUDA cores" : ", tensor cores");
        expect_close_outputs(p, cpu, gpu, what.c_str());
      }
    }
  }
}

// The kernels read 16-byte vectors of a head: a pool 2 bytes into a CUDA
// buffer is rejected before any launch, with the pool's name.
TEST_F(KvCacheCuda, PoolsMustBe16ByteAligned) {
  auto rng = make_rng();
  KvShape shape;  // int8 codes: 2 bytes is element-aligned, not 16-byte aligned
  shape.seq_lens = {20};
  const KvProblem p = make_kv_problem(shape, rng);
  DeviceProblem dev(p);
  CudaBuffer shifted(dev.key.bytes() + 16);
  void* misaligned = static_cast<char*>(shifted.get()) + 2;
  for (const bool key : {true, false}) {
    const PagedKvCache cache = HostCache::cache_view(p, key ? misaligned : dev.key.get(), key ? dev.value.get() : misaligned,
                                                     static_cast<float*>(dev.key_scale.get()),
                                                     static_cast<float*>(dev.value_scale.get()), Device::cuda());
    const char* pool = key ? "cache.key" : "cache.value";
    expect_error(
        [&] {
          kv_cache_write(cache, keys_view(p, dev.new_keys.get(), Device::cuda()),
                         keys_view(p, dev.new_values.get(), Device::cuda()),
                         TensorView(dev.slots.get(), DType::kInt64, {p.tokens}, Device::cuda()));
        },
        ErrorKind::kValue, {pool, "16-byte aligned"});
    const int64_t hd = shape.head_dim;
    expect_error(
        [&] {
          paged_attention_decode(TensorView(dev.out.get(), shape.dtype, {p.seqs(), p.q_heads(), hd}, Device::cuda()),
                                 TensorView(dev.query.get(), shape.dtype, {p.seqs(), p.q_heads(), hd}, Device::cuda()),
                                 cache, TensorView(dev.tables.get(), DType::kInt32, {p.seqs(), p.max_blocks}, Device::cuda()),
                                 TensorView(dev.lens.get(), DType::kInt32, {p.seqs()}, Device::cuda()), 0.1f);
        },
        ErrorKind::kValue, {pool, "16-byte aligned"});
  }
}

TEST_F(KvCacheCuda, GraphCaptureAndReplay) {
  auto rng = make_rng();
  KvShape shape;
  shape.seq_lens = {900, 33};
  const KvProblem p = make_kv_problem(shape, rng);
  const CpuResult cpu = cpu_result(p, 0.09f);
  DeviceProblem dev(p);
  const int64_t ws_bytes = paged_attention_workspace_bytes(p.seqs(), p.q_heads(), shape.head_dim, 1024);
  CudaBuffer ws(static_cast<size_t>(ws_bytes));
  cudaStream_t stream;
  QGEMM_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  QGEMM_TEST_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  dev.write(stream);
  dev.attend(0.09f, 1024, TensorView(ws.get(), DType::kUInt8, {ws_bytes}, Device::cuda()), stream);
  QGEMM_TEST_CUDA(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  QGEMM_TEST_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; ++replay) {
    dev.out.poison();
    QGEMM_TEST_CUDA(cudaDeviceSynchronize());  // the poison (legacy stream) before the non-blocking stream's replay
    QGEMM_TEST_CUDA(cudaGraphLaunch(exec, stream));
    QGEMM_TEST_CUDA(cudaStreamSynchronize(stream));
    std::vector<uint16_t> gpu;
    dev.out.download(gpu);
    expect_close_outputs(p, cpu, gpu, "graph replay");
    expect_same_cache(dev, cpu.cache);
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace qgemm::test
