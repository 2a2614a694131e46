// Bad arguments to the KV cache ops: each rejected before any backend runs,
// with a message naming the argument and what was expected.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "common/expect_error.h"
#include "kvcache/attention_plan.h"
#include "kvcache/kv_cache_args.h"
#include "qgemm/kv_cache.h"

namespace qgemm::test {
namespace {

constexpr int64_t kBlocks = 4, kBlockSize = 16, kKvHeads = 2, kHeadDim = 64, kSeqs = 3, kQHeads = 4, kTokens = 5;

// A valid int8 call; each test breaks one thing.
struct Call {
  std::vector<int8_t> key = std::vector<int8_t>(kBlocks * kBlockSize * kKvHeads * kHeadDim, 1);
  std::vector<int8_t> value = key;
  std::vector<float> key_scale = std::vector<float>(kBlocks * kBlockSize * kKvHeads, 1.0f);
  std::vector<float> value_scale = key_scale;
  std::vector<uint16_t> new_keys = std::vector<uint16_t>(kTokens * kKvHeads * kHeadDim, 0x3f80);
  std::vector<uint16_t> new_values = new_keys;
  std::vector<int32_t> slots = {0, 1, 2, 3, 4};
  std::vector<uint16_t> query = std::vector<uint16_t>(kSeqs * kQHeads * kHeadDim, 0x3f80);
  std::vector<uint16_t> out = query;
  std::vector<int32_t> tables = std::vector<int32_t>(kSeqs * 2, 0);
  std::vector<int32_t> lens = {1, 2, 3};

  PagedKvCache cache;
  TensorView k, v, slot_mapping, q, o, block_tables, seq_lens;
  Call() {
    cache.key = TensorView(key.data(), DType::kInt8, {kBlocks, kBlockSize, kKvHeads, kHeadDim});
    cache.value = TensorView(value.data(), DType::kInt8, {kBlocks, kBlockSize, kKvHeads, kHeadDim});
    cache.key_scale = TensorView(key_scale.data(), DType::kFloat32, {kBlocks, kBlockSize, kKvHeads});
    cache.value_scale = TensorView(value_scale.data(), DType::kFloat32, {kBlocks, kBlockSize, kKvHeads});
    k = TensorView(new_keys.data(), DType::kBFloat16, {kTokens, kKvHeads, kHeadDim});
    v = TensorView(new_values.data(), DType::kBFloat16, {kTokens, kKvHeads, kHeadDim});
    slot_mapping = TensorView(slots.data(), DType::kInt32, {kTokens});
    q = TensorView(query.data(), DType::kBFloat16, {kSeqs, kQHeads, kHeadDim});
    o = TensorView(out.data(), DType::kBFloat16, {kSeqs, kQHeads, kHeadDim});
    block_tables = TensorView(tables.data(), DType::kInt32, {kSeqs, 2});
    seq_lens = TensorView(lens.data(), DType::kInt32, {kSeqs});
  }
  void write() { kv_cache_write(cache, k, v, slot_mapping); }
  void attend(float softmax_scale = 0.125f, int64_t max_seq_len = 0,
              const std::optional<TensorView>& workspace = std::nullopt) {
    paged_attention_decode(o, q, cache, block_tables, seq_lens, softmax_scale, max_seq_len, workspace);
  }
};

TEST(KvCacheValidation, ValidCallsRun) {
  Call c;
  c.write();
  c.attend();
}

TEST(KvCacheValidation, CacheArguments) {
  {
    Call c;
    c.cache.key = TensorView(c.key.data(), DType::kInt32, {kBlocks, kBlockSize, kKvHeads, kHeadDim / 4});
    expect_error([&] { c.write(); }, ErrorKind::kType, {"cache.key", "int32"});
  }
  {
    Call c;
    c.cache.value = TensorView(c.value.data(), DType::kInt8, {kBlocks, kBlockSize, 1, 2 * kHeadDim});
    expect_error([&] { c.attend(); }, ErrorKind::kValue, {"cache.value", "shape of cache.key"});
  }
  {
    Call c;
    c.cache.key_scale.reset();
    expect_error([&] { c.write(); }, ErrorKind::kValue, {"cache.key_scale", "needs its fp32 scales", "[4, 16, 2]"});
  }
  {
    Call c;
    c.cache.value_scale = TensorView(c.value_scale.data(), DType::kFloat32, {kBlocks, kBlockSize});
    expect_error([&] { c.write(); }, ErrorKind::kValue, {"cache.value_scale", "expected shape [4, 16, 2]"});
  }
  {
    Call c;  // a 16-bit cache takes no scales
    std::vector<uint16_t> k16(c.key.size()), v16(c.key.size());
    c.cache.key = TensorView(k16.data(), DType::kBFloat16, {kBlocks, kBlockSize, kKvHeads, kHeadDim});
    c.cache.value = TensorView(v16.data(), DType::kBFloat16, {kBlocks, kBlockSize, kKvHeads, kHeadDim});
    expect_error([&] { c.write(); }, ErrorKind::kValue, {"cache.key_scale", "pass no scales"});
    c.cache.key_scale.reset();
    c.cache.value_scale.reset();
    c.write();
    c.q = TensorView(c.query.data(), DType::kFloat16, {kSeqs, kQHeads, kHeadDim});
    c.o = TensorView(c.out.data(), DType::kFloat16, {kSeqs, kQHeads, kHeadDim});
    expect_error([&] { c.attend(); }, ErrorKind::kType, {"cache.key", "the query's dtype fp16"});
  }
  {
    Call c;  // strided pool
    c.cache.key = TensorView::strided(c.key.data(), DType::kInt8, {kBlocks, kBlockSize, kKvHeads, kHeadDim / 2},
                                      {kBlockSize * kKvHeads * kHeadDim, kKvHeads * kHeadDim, kHeadDim, 1});
    c.cache.value = c.cache.key;
    expect_error([&] { c.write(); }, ErrorKind::kValue, {"cache.key", "contiguous"});
  }
  {
    Call c;  // key and value pools are one buffer
    c.cache.value = c.cache.key;
    expect_error([&] { c.write(); }, ErrorKind::kValue, {"cache.key", "cache.value"});
  }
  {
    Call c;  // 2^31 slots: only the shape is read before the error
    c.cache.key = TensorView(c.key.data(), DType::kInt8, {int64_t{1} << 27, 16, kKvHeads, kHeadDim});
    c.cache.value = TensorView(c.value.data(), DType::kInt8, {int64_t{1} << 27, 16, kKvHeads, kHeadDim});
    expect_error([&] { c.write(); }, ErrorKind::kValue, {"cache.key", "fewer than 2^31 slots"});
  }
  {
    Call c;
    c.cache.key = TensorView(static_cast<void*>(nullptr), DType::kInt8, {kBlocks, kBlockSize, kKvHeads, kHeadDim});
    expect_error([&] { c.write(); }, ErrorKind::kValue, {"cache.key", "null"});
  }
}

TEST(KvCacheValidation, WriteArguments) {
  {
    Call c;
    c.k = TensorView(c.new_keys.data(), DType::kFloat32, {kTokens, kKvHeads, kHeadDim / 2});
    expect_error([&] { c.write(); }, ErrorKind::kType, {"key", "fp32"});
  }
  {
    Call c;
    c.v = TensorView(c.new_values.data(), DType::kFloat16, {kTokens, kKvHeads, kHeadDim});
    expect_error([&] { c.write(); }, ErrorKind::kType, {"value"});
  }
  {
    Call c;
    c.k = TensorView(c.new_keys.data(), DType::kBFloat16, {kTokens, 1, 2 * kHeadDim});
    expect_error([&] { c.write(); }, ErrorKind::kValue, {"key", "kv_heads=2", "head_dim=64"});
  }
  {
    Call c;
    c.k = TensorView::strided(c.new_keys.data(), DType::kBFloat16, {kTokens, kKvHeads, kHeadDim / 2},
                              {kKvHeads * kHeadDim, kHeadDim, 2});
    c.cache.key = TensorView(c.key.data(), DType::kInt8, {kBlocks, kBlockSize, kKvHeads, kHeadDim / 2});
    c.cache.value = TensorView(c.value.data(), DType::kInt8, {kBlocks, kBlockSize, kKvHeads, kHeadDim / 2});
    c.v = TensorView(c.new_values.data(), DType::kBFloat16, {kTokens, kKvHeads, kHeadDim / 2});
    expect_error([&] { c.write(); }, ErrorKind::kValue, {"key", "stride(2) == 1"});
  }
  {
    Call c;  // a negative token stride
    c.k = TensorView::strided(c.new_keys.data() + (kTokens - 1) * kKvHeads * kHeadDim, DType::kBFloat16,
                              {kTokens, kKvHeads, kHeadDim}, {-kKvHeads * kHeadDim, kHeadDim, 1});
    expect_error([&] { c.write(); }, ErrorKind::kValue, {"key", "non-negative strides"});
  }
  {
    Call c;  // a 16-bit cache in another dtype than the keys
    std::vector<uint16_t> k16(c.key.size()), v16(c.key.size());
    c.cache.key = TensorView(k16.data(), DType::kFloat16, {kBlocks, kBlockSize, kKvHeads, kHeadDim});
    c.cache.value = TensorView(v16.data(), DType::kFloat16, {kBlocks, kBlockSize, kKvHeads, kHeadDim});
    c.cache.key_scale.reset();
    c.cache.value_scale.reset();
    expect_error([&] { c.write(); }, ErrorKind::kType, {"cache.key", "the keys' dtype bf16", "fp16"});
  }
  {
    Call c;
    c.slot_mapping = TensorView(c.slots.data(), DType::kInt32, {kTokens - 1});
    expect_error([&] { c.write(); }, ErrorKind::kValue, {"slot_mapping", "[T=5]"});
  }
  {
    Call c;
    c.slot_mapping = TensorView(c.slots.data(), DType::kFloat32, {kTokens});
    expect_error([&] { c.write(); }, ErrorKind::kType, {"slot_mapping"});
  }
  {
    Call c;  // the new keys alias the cache they are written into
    c.k = TensorView(c.key_scale.data(), DType::kBFloat16, {kTokens, kKvHeads, kHeadDim});
    expect_error([&] { c.write(); }, ErrorKind::kValue, {"cache.key_scale", "key"});
  }
}

TEST(KvCacheValidation, AttentionArguments) {
  {
    Call c;
    c.q = TensorView(c.query.data(), DType::kBFloat16, {kSeqs, 3, kHeadDim});
    expect_error([&] { c.attend(); }, ErrorKind::kValue, {"query", "multiple of the cache's kv_heads=2"});
  }
  {
    Call c;
    c.o = TensorView(c.out.data(), DType::kBFloat16, {kSeqs, kQHeads - 2, kHeadDim});
    expect_error([&] { c.attend(); }, ErrorKind::kValue, {"out", "q_heads=4"});
  }
  {
    Call c;
    c.o = TensorView(c.out.data(), DType::kFloat16, {kSeqs, kQHeads, kHeadDim});
    expect_error([&] { c.attend(); }, ErrorKind::kType, {"out", "bf16"});
  }
  {
    Call c;  // head_dim 32 can be written but not attended
    c.cache.key = TensorView(c.key.data(), DType::kInt8, {kBlocks, kBlockSize, kKvHeads, 32});
    c.cache.value = TensorView(c.value.data(), DType::kInt8, {kBlocks, kBlockSize, kKvHeads, 32});
    expect_error([&] { c.attend(); }, ErrorKind::kValue, {"head_dim 64, 128 or 256", "32"});
  }
  {
    Call c;
    c.block_tables = TensorView(c.tables.data(), DType::kInt64, {kSeqs, 1});
    expect_error([&] { c.attend(); }, ErrorKind::kType, {"block_tables", "int64"});
  }
  {
    Call c;
    c.block_tables = TensorView(c.tables.data(), DType::kInt32, {kSeqs - 1, 2});
    expect_error([&] { c.attend(); }, ErrorKind::kValue, {"block_tables", "S=3"});
  }
  {
    Call c;  // room for 2^31 tokens per sequence: only the shape is read before the error
    c.block_tables = TensorView::strided(c.tables.data(), DType::kInt32, {kSeqs, int64_t{1} << 27},
                                         {int64_t{1} << 27, 1});
    expect_error([&] { c.attend(); }, ErrorKind::kValue, {"block_tables", "below 2^31 tokens"});
  }
  {
    Call c;
    c.seq_lens = TensorView(c.lens.data(), DType::kInt32, {kSeqs - 1});
    expect_error([&] { c.attend(); }, ErrorKind::kValue, {"seq_lens", "[S=3]"});
  }
  {
    Call c;
    expect_error([&] { c.attend(std::numeric_limits<float>::quiet_NaN()); }, ErrorKind::kValue, {"softmax_scale", "finite"});
    expect_error([&] { c.attend(0.125f, -1); }, ErrorKind::kValue, {"max_seq_len", ">= 0"});
  }
  {
    Call c;  // a workspace too small for the split of 2000-token sequences
    std::vector<uint8_t> ws(64);
    // The table bounds max_seq_len, so give it room for 2000 tokens.
    c.tables.assign(kSeqs * 125, 0);
    c.block_tables = TensorView(c.tables.data(), DType::kInt32, {kSeqs, 125});
    expect_error([&] { c.attend(0.125f, 2000, TensorView(ws.data(), DType::kUInt8, {64})); }, ErrorKind::kValue,
                 {"workspace", "paged_attention_workspace_bytes"});
  }
  {
    Call c;
    c.o = c.q;
    expect_error([&] { c.attend(); }, ErrorKind::kValue, {"out", "query"});
  }
}

// The split rule of the CUDA backend (kv_cache_args.h): about one wave of
// resident CTAs, whole 16-token groups, never more partitions than the
// workspace has room for, and every token in some partition.
TEST(KvCacheSplit, AboutOneWaveInWholeGroups) {
  using detail::attention_split;
  // 32 sequences × 8 kv heads: 256 CTAs, a wave of 2 × 132: unsplit.
  EXPECT_EQ(attention_split(256, 2, 132, 4096).partitions, 1);
  EXPECT_EQ(attention_split(256, 2, 132, 4096).partition_tokens, 4096);
  // 1 sequence: 8 CTAs want 33 partitions; 4096 tokens have room for 16 of 256.
  EXPECT_EQ(attention_split(8, 2, 132, 4096).partitions, 16);
  EXPECT_EQ(attention_split(8, 2, 132, 4096).partition_tokens, 256);
  // 64 CTAs → 4 partitions of 1000 / 4 = 250 → 256 tokens: 4 partitions.
  EXPECT_EQ(attention_split(64, 2, 132, 1000).partitions, 4);
  EXPECT_EQ(attention_split(64, 2, 132, 1000).partition_tokens, 256);
  // Short sequences are never split.
  EXPECT_EQ(attention_split(1, 2, 132, 256).partitions, 1);
  for (int64_t ctas : {1, 7, 64, 100, 264, 1000}) {
    for (int64_t len : {1, 16, 255, 257, 1000, 4096, 32768, 100000}) {
      const auto split = attention_split(ctas, 2, 132, len);
      EXPECT_GE(split.partitions, 1);
      EXPECT_LE(split.partitions, detail::max_attention_partitions(len)) << "room in the workspace";
      EXPECT_EQ(split.partition_tokens % 16, 0);
      EXPECT_GE(split.partitions * split.partition_tokens, len) << "every token in a partition";
      EXPECT_LT((split.partitions - 1) * split.partition_tokens, len) << "no empty partition";
    }
  }
}

// The CUDA backend's kernel choice (attention_plan.h), on an H200's 132 SMs.
TEST(KvCachePlan, KernelHeadsAndResidentCtas) {
  using detail::AttentionKernel;
  using detail::attention_plan;
  auto expect_plan = [](const detail::AttentionPlan& plan, bool tensor_cores, int heads, int resident,
                        const char* what) {
    EXPECT_EQ(plan.tensor_cores, tensor_cores) << what;
    EXPECT_EQ(plan.heads_per_cta, heads) << what;
    EXPECT_EQ(plan.resident_per_sm, resident) << what;
  };
  const auto kAuto = AttentionKernel::kAuto;
  // Grouped heads: tensor cores, one n-block of 8 up to a group of 8, two above (not at head_dim 256).
  expect_plan(attention_plan(DType::kInt8, 4, 128, 32, 8, 132, kAuto), true, 8, 2, "Llama-3-8B");
  expect_plan(attention_plan(DType::kBFloat16, 8, 64, 1, 8, 132, kAuto), true, 8, 2, "group 8, d 64");
  expect_plan(attention_plan(DType::kFloat8E4M3, 12, 128, 4, 2, 132, kAuto), true, 16, 2, "group 12");
  expect_plan(attention_plan(DType::kFloat16, 12, 256, 4, 2, 132, kAuto), true, 8, 2, "group 12, d 256");
  expect_plan(attention_plan(DType::kInt8, 2, 256, 32, 8, 132, kAuto), true, 8, 2, "Gemma-2-9B");
  // Multi-head: int8 at head_dim 128 on tensor cores; fp8 / 16-bit only below 6 CUDA-core CTAs per SM.
  expect_plan(attention_plan(DType::kInt8, 1, 128, 64, 32, 132, kAuto), true, 8, 2, "MHA int8, 2048 heads");
  expect_plan(attention_plan(DType::kFloat8E4M3, 1, 128, 8, 32, 132, kAuto), true, 8, 2, "MHA fp8, 256 heads");
  expect_plan(attention_plan(DType::kBFloat16, 1, 128, 24, 33, 132, kAuto), false, 1, 6, "MHA bf16, 792 heads");
  expect_plan(attention_plan(DType::kBFloat16, 1, 128, 24, 32, 132, kAuto), true, 8, 2, "MHA bf16, 768 heads");
  expect_plan(attention_plan(DType::kInt8, 1, 64, 8, 16, 132, kAuto), false, 1, 6, "MHA d 64");
  expect_plan(attention_plan(DType::kInt8, 1, 256, 8, 16, 132, kAuto), false, 1, 6, "MHA d 256");
  // A forced kernel, whatever the rule says.
  expect_plan(attention_plan(DType::kInt8, 4, 128, 32, 8, 132, AttentionKernel::kCudaCores), false, 8, 2,
              "forced CUDA cores");
  expect_plan(attention_plan(DType::kInt8, 1, 256, 8, 16, 132, AttentionKernel::kTensorCores), true, 8, 2,
              "forced tensor cores");
}

TEST(KvCacheValidation, WorkspaceBytes) {
  EXPECT_EQ(paged_attention_workspace_bytes(8, 32, 128, 256), 0) << "one partition: no split";
  EXPECT_EQ(paged_attention_workspace_bytes(8, 32, 128, 257), 8 * 32 * 2 * (128 + 2) * 4) << "up to 2 partitions";
  EXPECT_EQ(paged_attention_workspace_bytes(2, 8, 64, 4096), 2 * 8 * 16 * (64 + 2) * 4) << "up to 16 partitions";
  expect_error([] { paged_attention_workspace_bytes(-1, 32, 128, 4096); }, ErrorKind::kValue, {"num_seqs=-1"});
}

}  // namespace
}  // namespace qgemm::test
