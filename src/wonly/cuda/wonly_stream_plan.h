// wonly_stream_plan.h — where the Hopper int8 decode kernel
// (wonly_stream_sm90.cu) runs: host logic apart from the device code so that
// host tests can check it.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/dram_bandwidth.h"

namespace qgemm::detail::wonly {

constexpr int kStreamRows = 32;  // weight rows per row tile of the kernel

constexpr int64_t stream_row_tiles(int64_t n) { return (n + kStreamRows - 1) / kStreamRows; }

// Int8 weights at M ≤ 16 take the kernel on a GPU of `sms` SMs (one
// persistent CTA each) where its row tiles are one round, at most one per
// SM, on enough of the SMs: four fifths of them, or half for the plain
// layout at M = 9–16. H100 (132 SMs), W8 per channel, plain layout, µs, the
// kernel against wonly_gemv forced in the same call, two calls at a9ac6ae
// (bench/results/wonly-h100-stream-rule-sweep.json):
//   (N, K)           tiles  M = 1          M = 8          M = 16
//   (2112, 4096)     66     12.1 vs 10.8   12.1 vs 10.8   12.1 vs 11.8
//   (2112, 8192)     66     18.3 vs 17.0   18.2 vs 17.1   18.3 vs 19.1
//   (3072, 4096)     96     12.3 vs 12.1   12.0 vs 11.8   12.1 vs 13.5
//   (3584, 4096)     112    12.0 vs 13.0   12.1 vs 12.9   12.3 vs 14.0
//   (4096, 4096)     128    12.4 vs 13.4   12.8 vs 13.4   13.1 vs 14.4
//   (4224, 8192)     132    18.2 vs 19.5   18.7 vs 19.6   19.1 vs 20.7
//   (4096, 14336)    128    27.5 vs 28.3   27.9 vs 28.1   28.3 vs 29.9
// At M ≤ 8 wonly_gemv multiplies one n8 token block (this kernel always
// two), so only near-full rounds pay; at M = 9–16 half the SMs already did
// on average (2112 – 3072 rows: 0.90–1.03× the time, 0.98× geomean).
// More rounds, where they are full (N = 8448 – 57344, K = 4096 – 28672),
// take 0.96–1.03× wonly_gemv's time at M = 16 and 0.96–1.09× at M ≤ 8, and
// up to 1.25× where the last round is thin ((6144, 4096): 192 tiles, 19.2
// against 15.4 µs at M = 16), so they stay on wonly_gemv.
// The prepacked layout (db7893b, two calls in one run;
// bench/results/wonly-h100-stream-prepacked-copies.json): on four fifths of
// the SMs or more 0.92–0.97× wonly_gemv's time at K = 4096 and 8192,
// 0.99–1.01× at K = 11008 and 14336; on half to three quarters of them
// at M = 9–16 0.95–1.12× (1.05× geomean over five weights), where
// wonly_gemv reads the prepacked rows faster than the plain ones.
//
// Only on GPUs whose DRAM is not fast per SM (dram_fast_per_sm: at most 30
// GB/s of peak per SM): the kernel's one CTA per SM streams ~18–20 GB/s (H200,
// (4096, 28672): 117 MB on 128 SMs in 50.1 µs), which the H100's 25 GB/s
// per SM (3352 GB/s peak, 132 SMs) left ahead of wonly_gemv's few blocks
// at these N (the table above). On the H200's 36 (4814 GB/s) wonly_gemv
// was faster at every weight of the table and M ∈ {1, 8, 9, 16}, or tied
// within 5 % (0.95–1.01×, plain M = 9–16 at K = 4096), and up to 1.38×
// faster at long K: (4096, 28672) M = 1 prepacked 36.3 against 50.1 µs,
// (4096, 14336) 22.0 against 28.0 (ac15695, two rounds in one call,
// bench/results/wonly-h200-w8-decode-stream-vs-gemv.json).
// peak_dram_gbps: the device's (core/dram_bandwidth.h); 0 when unknown,
// which keeps the measured rule.
inline bool stream_takes(int64_t n, int64_t m, bool prepacked, int64_t sms, int64_t peak_dram_gbps) {
  if (dram_fast_per_sm(peak_dram_gbps, sms)) return false;
  const int64_t tiles = stream_row_tiles(n);
  const bool half_suffice = m > 8 && !prepacked;
  const bool enough_sms = half_suffice ? 2 * tiles >= sms : 5 * tiles >= 4 * sms;
  return tiles <= sms && enough_sms;
}

}  // namespace qgemm::detail::wonly
