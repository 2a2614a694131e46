// wonly_stream_plan.h — where the Hopper int8 decode kernel
// (wonly_stream_sm90.cu) runs: host logic apart from the device code so that
// host tests can check it.
#pragma once

#include <algorithm>
#include <cstdint>

namespace qgemm::detail::wonly {

constexpr int kStreamRows = 32;  // weight rows per row tile of the kernel

inline int64_t stream_row_tiles(int64_t n) { return (n + kStreamRows - 1) / kStreamRows; }

// Int8 weights at M = 9–16 take the kernel on a GPU of `sms` SMs (one
// persistent CTA each) where its row tiles occupy at least half of the SMs
// and fill the CTAs' rounds to ≥ 90 %: H100, W8 per channel, M = 16, µs
// against wonly_gemv in the same call (bench/results/wonly-h100-stream-decode-ab.json):
//   (N, K)          tiles  fill   stream  wonly_gemv
//   (28672, 8192)   896    97 %   93.3    97.1
//   (4096, 4096)    128    100 %  13.1    14.3
//   (4096, 11008)   128    100 %  23.6    25.0
//   (11008, 4096)   344    87 %   25.6    24.4   (wonly_gemv: its 16-row blocks fill better)
// Fewer tiles than SMs/2 leave wonly_gemv, which splits K across a cluster.
inline bool stream_takes(int64_t n, int64_t sms) {
  const int64_t tiles = stream_row_tiles(n);
  const int64_t ctas = std::min(tiles, sms);
  const int64_t rounds = (tiles + ctas - 1) / ctas;
  return 2 * tiles >= sms && 10 * tiles >= 9 * ctas * rounds;
}

}  // namespace qgemm::detail::wonly
