// skinny_stream_launch.h — how many CTAs per SM the Hopper decode kernel
// (skinny_stream_sm90.cu) launches: host arithmetic only, so that the rule
// is tested without a GPU (test_gemm_dispatch_table.cpp).
#pragma once

#include <cstdint>

namespace qgemm::detail {

// CTAs per SM for `tiles` 16-column tiles on `sms` SMs, up to `most` (what
// registers and shared memory allow: 2 for every build on sm_90a): the count
// whose busiest SM gets the fewest tiles, ceil(tiles / (c·SMs))·c; on a tie
// one CTA while the M tokens' K bytes (`token_bytes`) fit in L1 beside its
// stages (every tile re-reads them), else the most, which keep twice the
// bytes in flight. H100, same call, 32 decode shapes against
// 1 and 2 forced (docs/gemm.md, "K in both directions, fp8 on f16 MMAs,
// CTAs per SM"): within 0.3 % of the faster of the two (geomean); 2 per SM
// at N = 6144 (384 tiles: 2 rounds of 264 CTAs, i.e. 4 tiles per SM against
// 3) was 13–18 % slower, 1 per SM at 16×8192×28672 4 % slower.
constexpr int64_t kSkinnyStreamTokensInL1 = 160 * 1024;
inline int64_t skinny_stream_ctas_per_sm(int64_t tiles, int64_t sms, int64_t most, int64_t token_bytes) {
  auto busiest_sm = [&](int64_t c) { return (tiles + c * sms - 1) / (c * sms) * c; };
  int64_t best = 1;
  for (int64_t c = 2; c <= most; ++c) {
    const bool tie = busiest_sm(c) == busiest_sm(best);
    if (busiest_sm(c) < busiest_sm(best) || (tie && token_bytes > kSkinnyStreamTokensInL1)) best = c;
  }
  return best;
}

}  // namespace qgemm::detail
