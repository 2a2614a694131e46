// `qgemm bench attention`: paged_attention_decode over an int8, fp8 or bf16
// cache. The CPU part (the reference backend, a small problem) lives here;
// the GPU part, with the bf16 cache as the unquantized peer and the copy
// bandwidth, in bench_attention_cuda.cu.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "bench_attention_shapes.h"
#include "bench_common.h"
#include "commands.h"
#include "qgemm/kv_cache.h"

namespace qgemm::tools {

void bench_attention_cpu(const Options& options, BenchReport& report) {
  for (const auto& spec : options.get_shapes("shapes", {{2, 1024, 8, 2, 128}})) {
    const AttentionShape s = attention_shape(spec);
    const int64_t block = 16, blocks_per_seq = (s.len + block - 1) / block, blocks = s.seqs * blocks_per_seq;
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<int> code(-128, 127);
    std::vector<int8_t> key(static_cast<size_t>(blocks * block * s.kv_heads * s.head_dim)), value(key.size());
    for (auto& c : key) c = static_cast<int8_t>(code(rng));
    for (auto& c : value) c = static_cast<int8_t>(code(rng));
    std::vector<float> key_scale(static_cast<size_t>(blocks * block * s.kv_heads), 0.01f), value_scale(key_scale);
    std::vector<int32_t> tables(static_cast<size_t>(blocks)), lens(static_cast<size_t>(s.seqs), static_cast<int32_t>(s.len));
    for (int64_t i = 0; i < blocks; ++i) tables[i] = static_cast<int32_t>(i);
    std::shuffle(tables.begin(), tables.end(), rng);
    std::vector<uint16_t> query(static_cast<size_t>(s.seqs * s.q_heads * s.head_dim), 0x3f00), out(query.size());
    PagedKvCache cache;
    cache.key = TensorView(key.data(), DType::kInt8, {blocks, block, s.kv_heads, s.head_dim});
    cache.value = TensorView(value.data(), DType::kInt8, {blocks, block, s.kv_heads, s.head_dim});
    cache.key_scale = TensorView(key_scale.data(), DType::kFloat32, {blocks, block, s.kv_heads});
    cache.value_scale = TensorView(value_scale.data(), DType::kFloat32, {blocks, block, s.kv_heads});
    const TensorView q(query.data(), DType::kBFloat16, {s.seqs, s.q_heads, s.head_dim});
    const TensorView o(out.data(), DType::kBFloat16, {s.seqs, s.q_heads, s.head_dim});
    const TensorView t(tables.data(), DType::kInt32, {s.seqs, blocks_per_seq});
    const TensorView l(lens.data(), DType::kInt32, {s.seqs});
    const int runs = options.get_int("runs", 5), warmup = options.get_int("warmup", 1);
    const auto stats = time_cpu([&] { paged_attention_decode(o, q, cache, t, l, 0.088f); }, warmup, runs);
    BenchRecord r = timed_record("paged_attention_decode", "qgemm-cpu-int8-cache",
                                 std::to_string(s.seqs) + "x" + std::to_string(s.len) + "x" + std::to_string(s.q_heads) +
                                     "x" + std::to_string(s.kv_heads) + "x" + std::to_string(s.head_dim),
                                 "cpu", stats);
    r.bytes = static_cast<double>(2 * key.size() + 8 * key_scale.size());
    report.add(r);
  }
}

int cmd_bench_attention(int argc, char** argv) {
  const Options options(argc, argv, 3, {"device", "shapes", "rounds", "cooldown", "json", "warmup", "runs"});
  return run_bench_parts(options, command_line_string(argc, argv), bench_attention_cpu,
                         QGEMM_CUDA_PART(bench_attention_cuda), "bench_attention.json");
}

}  // namespace qgemm::tools
