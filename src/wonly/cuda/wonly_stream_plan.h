// wonly_stream_plan.h — where the Hopper int8 decode kernel
// (wonly_stream_sm90.cu) runs: host logic apart from the device code so that
// host tests can check it.
#pragma once

#include <algorithm>
#include <cstdint>

namespace qgemm::detail::wonly {

constexpr int kStreamRows = 32;  // weight rows per row tile of the kernel

constexpr int64_t stream_row_tiles(int64_t n) { return (n + kStreamRows - 1) / kStreamRows; }

// Int8 weights at M = 9–16 take the kernel on a GPU of `sms` SMs (one
// persistent CTA each) where its row tiles are one round: at most one per
// SM, and at least half of the SMs busy. H100, W8 per channel, M = 9 / 16,
// µs, against wonly_gemv forced in the same call
// (bench/results/wonly-h100-stream-decode-ab.json, run dispatch-070d025):
//   (N, K)          tiles  stream        wonly_gemv
//   (4096, 4096)    128    12.9 / 13.1   14.2 / 14.3
//   (4096, 11008)   128    23.6 / 23.6   24.8 / 24.9
//   (4096, 14336)   128    28.1 / 28.2   29.8 / 29.8
//   (2048, 8192)    64     18.2 / 18.1   18.8 / 18.7   (left to wonly_gemv: < SMs/2)
// More rounds were mixed: (28672, 8192) 95.2 / 94.2 against 96.8 / 97.5,
// but (57344, 8192) 186.4 / 186.2 against 179.7 / 180.7, (8192, 8192) 31.8 /
// 32.0 against 31.2 / 31.4, (11008, 4096) 25.6 / 25.7 against 24.2 / 24.4.
inline bool stream_takes(int64_t n, int64_t sms) {
  const int64_t tiles = stream_row_tiles(n);
  return tiles <= sms && 2 * tiles >= sms;
}

}  // namespace qgemm::detail::wonly
