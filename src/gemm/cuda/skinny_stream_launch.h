// skinny_stream_launch.h — how many CTAs per SM the Hopper decode kernel
// (skinny_stream_sm90.cu) launches: host arithmetic only, so that the rule
// is tested without a GPU (test_gemm_dispatch_table.cpp).
#pragma once

#include <algorithm>
#include <cstdint>

namespace qgemm::detail {

// What one CTA per SM streams at most, in GB/s per SM: H200, M = 1–16 on the
// grid's eight weights with 4, 6 or 8 shared-memory stages alike, at most
// 3.23 TB/s over 132 SMs (1×57344×8192 in 145.3 µs;
// bench/results/gemm-h200-decode-ctas-stages-ab.json).
constexpr double kSkinnyStreamOneCtaGbpsPerSm = 24.5;
// The share of the peak DRAM bandwidth a stream reaches: the 1 GiB copy's
// read + write bandwidth over the peak, H100 3007 / 3352 and H200 4257 / 4814.
constexpr double kDramStreamEfficiency = 0.88;
// M × K token bytes that still fit in L1 beside one CTA's stages.
constexpr int64_t kSkinnyStreamTokensInL1 = 160 * 1024;

// CTAs per SM for `tiles` 16-column tiles on `sms` SMs, up to `most` (what
// registers and shared memory allow: 2 for every build on sm_90a). Each
// count c is timed as its busiest SM's tiles, ceil(tiles / (c·SMs))·c, over
// the rate c CTAs stream at: c × one CTA's, at most the SM's share of the
// DRAM (`dram_gbps`, peak; 0 if unknown: taken as the bound). The fastest
// wins; on a tie the most where the M tokens' K bytes (`token_bytes`,
// re-read by every tile) overflow L1 beside one CTA's stages, else one.
//
// - H100 (3352 GB/s peak: 22 per SM reachable, below one CTA's 24.5, so the
//   count with the fewest tiles on the busiest SM wins), same call, 32
//   decode shapes against 1 and 2 forced (docs/gemm.md, "K in both
//   directions, fp8 on f16 MMAs, CTAs per SM"): within 0.3 % of the faster
//   of the two (geomean); 2 per SM at N = 6144 (384 tiles: 2 rounds of 264
//   CTAs, i.e. 4 tiles per SM against 3) was 13–18 % slower, 1 per SM at
//   16×8192×28672 4 % slower; on the other ties two were 3 % slower (int8).
// - H200 (4814 GB/s peak as the runtime reports it: 32 per SM reachable),
//   the grid's eight weights at M = 1, 8, 16 with 1 and 2 forced: two per SM
//   1.08× faster for int8 (geomean; up to 1.22× at 16×57344×8192), also at
//   N = 10240 (6 tiles per SM at two against 5 at one: 6–7 % faster), and
//   one at N = 6144 (3 tiles against 4) 7 % faster (docs/gemm.md, "CTAs per
//   SM on the H200").
inline int64_t skinny_stream_ctas_per_sm(int64_t tiles, int64_t sms, int64_t most, int64_t token_bytes,
                                         int64_t dram_gbps) {
  const double dram_per_sm = kDramStreamEfficiency * static_cast<double>(dram_gbps) / static_cast<double>(sms);
  auto time = [&](int64_t c) {
    const auto busiest_sm = static_cast<double>((tiles + c * sms - 1) / (c * sms) * c);
    const double rate = dram_per_sm > 0 ? std::min(static_cast<double>(c) * kSkinnyStreamOneCtaGbpsPerSm, dram_per_sm)
                                        : 1.0;
    return busiest_sm / rate;
  };
  int64_t best = 1;
  for (int64_t c = 2; c <= most; ++c) {
    if (time(c) < time(best) || (time(c) == time(best) && token_bytes > kSkinnyStreamTokensInL1)) best = c;
  }
  return best;
}

}  // namespace qgemm::detail
