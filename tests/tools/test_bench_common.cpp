// bench_common: statistics, records and the merge of --rounds.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "bench_common.h"

namespace qgemm::tools {
namespace {

// One round's record of `impl` on `shape` with the given median, minimum,
// run count and extras.
BenchRecord round_record(const std::string& impl, const std::string& shape, double median, double min, int runs,
                         std::map<std::string, double> extra = {}) {
  BenchRecord r = timed_record("scaled_mm", impl, shape, "cuda", TimingStats{median, min, runs});
  r.ops = 2.0e9;
  r.bytes = 3.0e6;
  r.extra = std::move(extra);
  return r;
}

BenchReport round_of(std::vector<BenchRecord> records) {
  BenchReport report("", "");
  for (const BenchRecord& r : records) report.add(r);
  return report;
}

// Options: a number or a shape that does not parse is an error naming the
// option and what it got (not std::stoi's bare "stoi").
TEST(BenchCommon, OptionsNameWhatDoesNotParse) {
  const char* argv[] = {"qgemm", "bench", "--runs", "12x", "--shapes", "4x8x16,2xbad", "--warmup", "3"};
  const Options options(8, const_cast<char**>(argv), 2, {"runs", "shapes", "warmup"});
  EXPECT_EQ(options.get_int("warmup", 0), 3);
  EXPECT_EQ(options.get_int("absent", 7), 7);
  try {
    options.get_int("runs", 0);
    ADD_FAILURE() << "12x parsed";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "--runs: expected an integer, got '12x'");
  }
  try {
    options.get_shapes("shapes", {});
    ADD_FAILURE() << "2xbad parsed";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "--shapes: expected AxB or AxBxC sizes, got '2xbad'");
  }
  const char* numbers[] = {"qgemm", "calibrate", "--percentile", "99.9", "--bins", "1.5e"};
  const Options parsed(6, const_cast<char**>(numbers), 2, {"percentile", "bins"});
  EXPECT_EQ(parsed.get_double("percentile", 0.0), 99.9);
  EXPECT_EQ(parsed.get_double("absent", 2.5), 2.5);
  try {
    parsed.get_double("bins", 0.0);
    ADD_FAILURE() << "1.5e parsed";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "--bins: expected a number, got '1.5e'");
  }
  const char* big[] = {"qgemm", "bench", "--runs", "99999999999"};
  EXPECT_THROW(Options(4, const_cast<char**>(big), 2, {"runs"}).get_int("runs", 0), std::invalid_argument);
}

TEST(BenchCommon, SummarizeTakesTheMiddleSampleOrTheMeanOfTheTwo) {
  const TimingStats odd = summarize({5.0, 1.0, 3.0});
  EXPECT_EQ(odd.median_us, 3.0);
  EXPECT_EQ(odd.min_us, 1.0);
  EXPECT_EQ(odd.runs, 3);
  EXPECT_EQ(summarize({4.0, 1.0, 2.0, 8.0}).median_us, 3.0);
  EXPECT_EQ(summarize({}).runs, 0);
}

TEST(BenchCommon, TimedRecordCarriesTheStatistics) {
  const BenchRecord r = timed_record("quant", "qgemm-token-int8", "16x4096", "cpu", TimingStats{7.5, 6.25, 42});
  EXPECT_EQ(r.op, "quant");
  EXPECT_EQ(r.impl, "qgemm-token-int8");
  EXPECT_EQ(r.shape, "16x4096");
  EXPECT_EQ(r.device, "cpu");
  EXPECT_EQ(r.median_us, 7.5);
  EXPECT_EQ(r.min_us, 6.25);
  EXPECT_EQ(r.runs, 42);
  EXPECT_TRUE(r.extra.empty());
}

TEST(BenchCommon, MergeRoundsTakesTheMedianOfTheRoundMedians) {
  const std::vector<BenchReport> rounds = {
      round_of({round_record("cublas-bf16", "8x16x32", 10.0, 9.0, 50, {{"host_us", 12.0}}),
                round_record("qgemm-int8", "8x16x32", 5.0, 4.5, 50, {{"speedup_vs_cublas_bf16", 2.0}})}),
      round_of({round_record("cublas-bf16", "8x16x32", 30.0, 8.0, 50, {{"host_us", 31.0}}),
                round_record("qgemm-int8", "8x16x32", 6.0, 5.5, 50, {{"speedup_vs_cublas_bf16", 5.0}})}),
      round_of({round_record("cublas-bf16", "8x16x32", 11.0, 10.0, 50, {{"host_us", 13.0}}),
                round_record("qgemm-int8", "8x16x32", 4.0, 3.5, 50, {{"speedup_vs_cublas_bf16", 2.75}})}),
  };
  const std::vector<BenchRecord> merged = merge_rounds(rounds);
  ASSERT_EQ(merged.size(), 2u);

  const BenchRecord& peer = merged[0];
  EXPECT_EQ(peer.impl, "cublas-bf16");
  EXPECT_EQ(peer.median_us, 11.0);  // the outlier round (30) does not move it
  EXPECT_EQ(peer.min_us, 8.0);      // the least sample of any round
  EXPECT_EQ(peer.runs, 150);
  EXPECT_EQ(peer.ops, 2.0e9);
  EXPECT_EQ(peer.bytes, 3.0e6);
  EXPECT_EQ(peer.extra.at("host_us"), 13.0);  // every extra: its median over the rounds
  EXPECT_EQ(peer.extra.at("rounds"), 3.0);
  EXPECT_DOUBLE_EQ(peer.extra.at("round_spread"), (30.0 - 10.0) / 11.0);

  const BenchRecord& ours = merged[1];
  EXPECT_EQ(ours.median_us, 5.0);
  EXPECT_EQ(ours.min_us, 3.5);
  EXPECT_EQ(ours.extra.at("speedup_vs_cublas_bf16"), 2.75);
  EXPECT_DOUBLE_EQ(ours.extra.at("round_spread"), (6.0 - 4.0) / 5.0);
}

TEST(BenchCommon, MergeRoundsOfTwoTakesTheirMean) {
  const std::vector<BenchReport> rounds = {round_of({round_record("qgemm-fp8", "1x2x3", 4.0, 3.0, 10)}),
                                           round_of({round_record("qgemm-fp8", "1x2x3", 6.0, 5.0, 10)})};
  const std::vector<BenchRecord> merged = merge_rounds(rounds);
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].median_us, 5.0);
  EXPECT_EQ(merged[0].runs, 20);
  EXPECT_DOUBLE_EQ(merged[0].extra.at("round_spread"), 0.4);
}

TEST(BenchCommon, MergeRoundsOfNoRoundsIsEmpty) { EXPECT_TRUE(merge_rounds({}).empty()); }

TEST(BenchCommon, MergeRoundsRejectsRoundsThatTimedDifferentThings) {
  const BenchReport a = round_of({round_record("qgemm-int8", "8x16x32", 5.0, 4.0, 10)});
  const BenchReport other_impl = round_of({round_record("qgemm-fp8", "8x16x32", 5.0, 4.0, 10)});
  const BenchReport other_shape = round_of({round_record("qgemm-int8", "8x16x64", 5.0, 4.0, 10)});
  const BenchReport longer = round_of({round_record("qgemm-int8", "8x16x32", 5.0, 4.0, 10),
                                       round_record("qgemm-fp8", "8x16x32", 5.0, 4.0, 10)});
  EXPECT_THROW(merge_rounds({a, other_impl}), std::logic_error);
  EXPECT_THROW(merge_rounds({a, other_shape}), std::logic_error);
  EXPECT_THROW(merge_rounds({a, longer}), std::logic_error);
  EXPECT_THROW(merge_rounds({longer, a}), std::logic_error);
}

}  // namespace
}  // namespace qgemm::tools
