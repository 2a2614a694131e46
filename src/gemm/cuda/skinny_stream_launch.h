// skinny_stream_launch.h — how many CTAs per SM the Hopper decode kernel
// (skinny_stream_sm90.cu) launches: host arithmetic only, so that the rule
// is tested without a GPU (test_gemm_dispatch_table.cpp).
#pragma once

#include <cstdint>

namespace qgemm::detail {

// CTAs per SM for `tiles` 16-column tiles on `sms` SMs, up to `most` (what
// registers and shared memory allow: 2 for every build on sm_90a): the count
// whose busiest SM gets the fewest tiles, ceil(tiles / (c·SMs))·c. On a tie,
// the most where one CTA per SM cannot keep up — the M tokens' K bytes
// (`token_bytes`, re-read by every tile) overflow L1 beside its stages, or
// the DRAM (`dram_gbps`, peak) outpaces what one CTA per SM streams — else one.
//
// - H100 (3352 GB/s peak, 25 per SM), same call, 32 decode shapes against 1
//   and 2 forced (docs/gemm.md, "K in both directions, fp8 on f16 MMAs, CTAs
//   per SM"): within 0.3 % of the faster of the two (geomean); 2 per SM at
//   N = 6144 (384 tiles: 2 rounds of 264 CTAs, i.e. 4 tiles per SM against
//   3) was 13–18 % slower, 1 per SM at 16×8192×28672 4 % slower; on the
//   other ties two were 3 % slower (int8 geomean; up to 9 %).
// - H200 (4916 GB/s peak, 37 per SM), the same 24 shapes at M = 1, 8, 16:
//   one CTA per SM streamed at most 3.2 TB/s (24.5 GB/s per SM) however many
//   stages it had (4, 6 or 8), and two per SM on the ties were 1.08× faster
//   for int8 (geomean; up to 1.22× at 16×57344×8192), fp8 within 1 % at
//   M ≤ 8 and up to 1.24× faster at M = 16 (docs/gemm.md, "CTAs per SM on
//   the H200"). The threshold sits between the two GPUs' 25 and 37.
constexpr int64_t kSkinnyStreamTokensInL1 = 160 * 1024;
constexpr int64_t kSkinnyStreamOneCtaGbpsPerSm = 30;
inline int64_t skinny_stream_ctas_per_sm(int64_t tiles, int64_t sms, int64_t most, int64_t token_bytes,
                                         int64_t dram_gbps) {
  auto busiest_sm = [&](int64_t c) { return (tiles + c * sms - 1) / (c * sms) * c; };
  const bool one_falls_behind =
      token_bytes > kSkinnyStreamTokensInL1 || dram_gbps > kSkinnyStreamOneCtaGbpsPerSm * sms;
  int64_t best = 1;
  for (int64_t c = 2; c <= most; ++c) {
    const bool tie = busiest_sm(c) == busiest_sm(best);
    if (busiest_sm(c) < busiest_sm(best) || (tie && one_falls_behind)) best = c;
  }
  return best;
}

}  // namespace qgemm::detail
