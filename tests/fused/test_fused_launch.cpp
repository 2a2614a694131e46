// The launch table of the fused row kernels (src/fused/cuda/fused_configs.h):
// host code, so it is checked in every build. Each expectation is a row of
// the table or one of its adjustments (four items for the ops measured
// faster that way, more threads for few rows, the streaming kernel past the
// register table); changing the table on purpose means changing these too.
#include <gtest/gtest.h>

#include "fused/cuda/fused_configs.h"

namespace qgemm::detail {
namespace {

constexpr int kH100Sms = 132;
constexpr int kBf16Vec = 8, kInt32Vec = 4;

struct Expected {
  int threads, items;
};

void expect_launch(int64_t tokens, int64_t hidden, int vec, bool vector, bool four_items, Expected expected) {
  const FusedLaunch launch = select_fused_launch(tokens, hidden, vec, vector, kH100Sms, four_items);
  EXPECT_EQ(launch.threads, expected.threads) << tokens << "x" << hidden << " four_items " << four_items;
  EXPECT_EQ(launch.items, expected.items) << tokens << "x" << hidden << " four_items " << four_items;
  EXPECT_EQ(launch.vector, vector);
}

TEST(FusedLaunchTable, RowsByVectorsPerRow) {
  // bf16 rows, enough tokens that no few-row adjustment applies.
  expect_launch(16384, 1024, kBf16Vec, true, false, {128, 1});
  expect_launch(16384, 2048, kBf16Vec, true, false, {128, 2});
  expect_launch(16384, 4096, kBf16Vec, true, false, {256, 2});
  expect_launch(16384, 8192, kBf16Vec, true, false, {512, 2});
  expect_launch(16384, 14336, kBf16Vec, true, false, {512, 4});
  expect_launch(16384, 32768, kBf16Vec, true, false, {512, 8});
  expect_launch(16384, 40000, kBf16Vec, true, false, {512, 0});  // streaming
  // int32 rows (4 per vector): 4096 columns are 1024 vectors.
  expect_launch(16384, 4096, kInt32Vec, true, false, {512, 2});
  // The scalar path counts elements: 3001 take 8 items of 512 threads,
  // 9001 stream.
  expect_launch(16384, 3001, kBf16Vec, false, false, {512, 8});
  expect_launch(16384, 9001, kBf16Vec, false, false, {512, 0});
}

TEST(FusedLaunchTable, FourItemsHalveTheThreadsOfTwoItemRows) {
  expect_launch(16384, 4096, kBf16Vec, true, true, {128, 4});
  expect_launch(16384, 8192, kBf16Vec, true, true, {256, 4});
  expect_launch(16384, 4096, kInt32Vec, true, true, {256, 4});
  // Only two-item rows of at least 256 threads change.
  expect_launch(16384, 2048, kBf16Vec, true, true, {128, 2});
  expect_launch(16384, 14336, kBf16Vec, true, true, {512, 4});
}

TEST(FusedLaunchTable, FewRowsSpreadEachRowOverMoreThreads) {
  // 16 rows of 256 threads cannot fill 132 SMs: threads double, items halve.
  expect_launch(16, 4096, kBf16Vec, true, false, {512, 1});
  expect_launch(16, 14336, kBf16Vec, true, false, {512, 4});  // already 512 threads
  expect_launch(256, 4096, kBf16Vec, true, true, {512, 1});
  // Enough rows: the table's (four-item) choice stands.
  expect_launch(4096, 4096, kBf16Vec, true, true, {128, 4});
}

TEST(FusedLaunchTable, FewRowsMarkGridsBelowHalfTheSmThreads) {
  // few_rows: tokens · threads below 1024 threads per SM (132 SMs: 135168),
  // where two-item norm rows take the kFewRows kernel build.
  EXPECT_TRUE(select_fused_launch(16, 8192, kBf16Vec, true, kH100Sms).few_rows);   // 512 × 2
  EXPECT_TRUE(select_fused_launch(263, 8192, kBf16Vec, true, kH100Sms).few_rows);  // 134656 threads
  EXPECT_FALSE(select_fused_launch(264, 8192, kBf16Vec, true, kH100Sms).few_rows);  // 135168
  EXPECT_FALSE(select_fused_launch(4096, 4096, kBf16Vec, true, kH100Sms, true).few_rows);
  // Short rows stop doubling at one item: 256 rows of 128 threads are few.
  EXPECT_TRUE(select_fused_launch(256, 1024, kBf16Vec, true, kH100Sms).few_rows);
}

TEST(FusedLaunchTable, WhichOpsPreferFourItems) {
  EXPECT_TRUE(prefers_four_items(FusedOp::kRmsNorm, DType::kBFloat16, false));
  EXPECT_FALSE(prefers_four_items(FusedOp::kRmsNorm, DType::kBFloat16, true));  // add + RMSNorm
  EXPECT_TRUE(prefers_four_items(FusedOp::kLayerNorm, DType::kInt32, true));
  EXPECT_FALSE(prefers_four_items(FusedOp::kLayerNorm, DType::kBFloat16, true));
  EXPECT_FALSE(prefers_four_items(FusedOp::kSiluMul, DType::kBFloat16, false));
  EXPECT_FALSE(prefers_four_items(FusedOp::kGelu, DType::kBFloat16, false));
}

}  // namespace
}  // namespace qgemm::detail
