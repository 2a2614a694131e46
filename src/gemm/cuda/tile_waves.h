// tile_waves.h — how a scaled-GEMM problem's tiles fill a Hopper GPU's SMs:
// tile counts as CUTLASS's schedulers deal them (in whole clusters), and the
// predicates the dispatch rules test (dispatch_table.h, Waves and the
// *_takes functions), each with the measurements that set its bounds.
#pragma once

#include <cstdint>

namespace qgemm::detail {

constexpr int64_t ceil_div(int64_t x, int64_t y) { return (x + y - 1) / y; }
constexpr int64_t round_up(int64_t x, int64_t multiple) { return ceil_div(x, multiple) * multiple; }

constexpr int64_t tile_count(int64_t m, int64_t n, int64_t tile_m, int64_t tile_n) {
  return ceil_div(m, tile_m) * ceil_div(n, tile_n);
}

// True when `tiles` CTAs of one per SM fit one wave on `sm_count` SMs and
// fill more than nine tenths of it (the 64-channel quarters, the 128×96
// tiles in token pairs).
constexpr bool fill_most_of_one_wave(int64_t tiles, int sm_count) {
  const int64_t sms = sm_count;
  return tiles <= sms && 10 * tiles > 9 * sms;
}

// True when 128×128 tiles need between one and one and a half waves (e.g.
// 256×10240: 160 tiles on 132 SMs), where a second, mostly idle wave costs
// nearly as much as the first.
constexpr bool square_tiles_ragged(int64_t m, int64_t n, int sm_count) {
  const int64_t tiles = tile_count(m, n, 128, 128);
  return tiles > sm_count && 2 * tiles < 3 * static_cast<int64_t>(sm_count);
}

// True when 64×64 tiles fit in one wave (M ≤ 64: N ≤ 8448 on 132 SMs).
constexpr bool small_tiles_fit_one_wave(int64_t m, int64_t n, int sm_count) {
  return tile_count(m, n, 64, 64) <= sm_count;
}

// True when 64×128 tiles need between one and one and a half waves (e.g.
// 128×10240: 2 × 80 = 160 tiles on 132 SMs).
constexpr bool narrow_tiles_ragged(int64_t m, int64_t n, int sm_count) {
  const int64_t tiles = tile_count(m, n, 64, 128);
  return tiles > sm_count && 2 * tiles < 3 * static_cast<int64_t>(sm_count);
}

// The CTA slots of tile_m × tile_n tiles in clusters of 1 × cluster_n, as the
// persistent scheduler deals them: N tiles in whole clusters, a slot past N
// included (the one-wave and cluster-1×4 tiles).
constexpr int64_t cluster_slots(int64_t m, int64_t n, int64_t tile_m, int64_t tile_n, int64_t cluster_n) {
  return ceil_div(m, tile_m) * round_up(ceil_div(n, tile_n), cluster_n);
}

// True when 128×80 tiles, in clusters of 1×2, fit in one wave and 64×128
// tiles do not: at M = 65–128 on 132 SMs, N = 8449–10560 (N = 10240: 128
// tiles of 128×80 against 160 of 64×128).
constexpr bool wide80_fills_one_wave(int64_t m, int64_t n, int sm_count) {
  return cluster_slots(m, n, 128, 80, 2) <= sm_count && tile_count(m, n, 64, 128) > sm_count;
}

// True when 128×96 tiles fit in one wave and neither 128×80 nor 64×128
// tiles do: at M = 65–128 on 132 SMs, N = 10561–12672 (N = 11008: 115 tiles
// of 128×96 against 138 of 128×80 and 172 of 64×128).
constexpr bool wide96_fills_one_wave(int64_t m, int64_t n, int sm_count) {
  return cluster_slots(m, n, 128, 96, 2) <= sm_count && cluster_slots(m, n, 128, 80, 2) > sm_count &&
         tile_count(m, n, 64, 128) > sm_count;
}

// True at M = 232–256, two token tiles of 128 (the second at least 104
// rows), where their 2·⌈N/96⌉ tiles of 128×96 fill more than nine tenths of
// one wave: N = 5665–6336 on 132 SMs (N = 6144: 128 tiles against 96 of
// 128×128). There the two token tiles of a weight tile, in a cluster of
// 2×1, share it by multicast (kSm90Wide96Pairs) — H200, against the 128×128
// tiles the table ran, M ∈ {232, 240, 248, 256} × N ∈ {5760, 6144, 6336}:
// 0.86–0.93× the time (256×6144×14336 int8 41.6 → 36.3 µs, precise fp8
// 42.5 → 39.1, fast fp8 41.6 → 37.1; bench/results/gemm-h200-wide96-pairs-
// dispatch-6fd29b5.json); at M = 224 (96 rows) 0.93–1.03×, at M = 200
// 1.03–1.12×; at N = 4800 (100 tiles) precise fp8 gained nothing
// (bench/results/gemm-h200-wide96-pairs-exp-*.json).
constexpr bool wide96_pairs_fill_one_wave(int64_t m, int64_t n, int sm_count) {
  return m >= 232 && m <= 256 && fill_most_of_one_wave(tile_count(m, n, 128, 96), sm_count);
}

// True at M = 224–256 (a second token tile of 96 rows or more) where the
// 2·⌈N/80⌉ tiles of 128×80 fit one wave and fill five sixths of it or
// more: N = 4321–5280 on 132 SMs. There the 128×80 tiles run in token pairs
// as the 128×96 ones above (kSm90Wide80Pairs) — H200, forced against the
// table's picks in one call at 2b2c471, M ∈ {224, 232, 240, 256} × N ∈
// {4480, 4800, 5120, 5280} × K ∈ {4096, 8192, 14336}
// (bench/results/gemm-h200-wide80-pairs-sweep-2b2c471.json):
//   - without a workspace, against the 128×128 tiles: 0.77–0.92× the time
//     at M = 232–256 (int8, precise and fast fp8), 0.86–1.00× at M = 224;
//   - with one, against the swapped stream-K tiles in token thirds, which
//     take these shapes first: M = 256 int8 0.83–0.92×, precise fp8
//     0.94–0.98×, fast fp8 0.89–0.94× (256×4480×14336 int8 38.0 → 31.6 µs),
//     but M = 240 (112 rows) 0.92–1.06× and M = 232 0.93–1.14×: so the
//     token thirds yield to the pairs only from M = 248 (120 rows).
constexpr int64_t kWide80PairsOverTokenThirdsMinM = 248;
constexpr bool wide80_pairs_fill_one_wave(int64_t m, int64_t n, int sm_count) {
  const int64_t tiles = tile_count(m, n, 128, 80), sms = sm_count;
  return m >= 224 && m <= 256 && tiles <= sms && 6 * tiles >= 5 * sms;
}

// kSm90Swapped's tiles: 64 weight channels each, dealt in clusters of two.
constexpr int64_t swapped_tile_count(int64_t n) { return round_up(ceil_div(n, 64), 2); }

// The waves those tiles take on `sm_count` (> 0) SMs.
constexpr int64_t swapped_tile_waves(int64_t n, int sm_count) { return ceil_div(swapped_tile_count(n), sm_count); }

// True when those tiles fill at least `tenths` tenths of their waves on
// `sm_count` (> 0) SMs.
constexpr bool swapped_tiles_fill_tenths(int64_t n, int sm_count, int tenths) {
  return swapped_tile_count(n) * 10 >= swapped_tile_waves(n, sm_count) * sm_count * tenths;
}

// True when kSm90Swapped's tiles fill at least 70 % of their waves (its
// rules: M = 17–32 and 129–192, N ≥ 6144): on 132 SMs N = 6144 (96 tiles,
// 73 %), 8192 (97 %), 14336 and 28672 (85 %), 57344 (97 %), not
// N = 10240 (160 tiles: 61 % of two waves) or 11008 (65 %). H200, M = 136
// / 160 / 176 / 192, against the former pick (bench/results/
// gemm-h200-swapped-sweep-55c126f.json): at 10240×8192 the swapped tiles
// took 0.93–1.19× the former pick's time for int8 and 1.03–1.27× for
// precise fp8 (int8 43.6 against 46.5 µs at M = 136, 46.0 against 38.9 at
// 176), where at the widths that fill they ran 1.02–1.47× faster. At
// M = 17–32 (gemm-h200-swapped-sweep-m17-64.json) the same split: 0.99–1.16×
// the former pick's time at 10240×8192, 0.81–1.01× where the tiles fill.
constexpr bool swapped_tiles_fill(int64_t n, int sm_count) {
  return sm_count > 0 && swapped_tiles_fill_tenths(n, sm_count, 7);
}

// True when kSm90Swapped's tiles take two waves or more and fill less than
// 90 % of them. With swapped_tiles_fill (70 % or more) on 132 SMs: N =
// 11840–15104 (14336: 224 tiles, 85 %), 17728–22784, 25408–30336 (28672:
// 448, 85 %), …; not 16384 (97 %) or 57344 (97 %). There the swapped
// stream-K tiles still win on enough K (swapped_stream_k_takes); in one
// wave (N ≤ 8448) their fixed cost does not pay.
constexpr bool swapped_tiles_fill_two_waves_short(int64_t n, int sm_count) {
  return sm_count > 0 && swapped_tile_waves(n, sm_count) >= 2 && !swapped_tiles_fill_tenths(n, sm_count, 9);
}

// True when kSm90SwappedHalves's tiles — 64 weight channels × half of
// M = 129–192, the two halves of a channel tile in one cluster — fit one
// wave: 2·⌈N/64⌉ CTAs, on 132 SMs N ≤ 4224 (128 CTAs at N = 4096). Its
// rules start at N = 2048 (kSwappedHalvesMinN).
// H200, against the table's picks (with a workspace) in the same calls
// (bench/results/gemm-h200-swapped-split*-82406f1.json; M = 136, 160, 176,
// 192, K = 4096 and 14336; int8 / precise fp8 / fast fp8 time ratios):
//   - N = 3072 (96 CTAs) and 4096 (128): 0.74–0.98 / 0.79–1.00 / 0.83–1.00,
//     largest at K = 14336 (160×3072×14336 int8 34.3 → 25.4 µs, fp8 35.5 →
//     28.0), also against the swapped stream-K tiles the table took at
//     N = 4096 with K = 14336 and M ≤ 160 (160×4096×14336 int8 34.1 → 29.6);
//   - N = 2048 (64 CTAs): int8 0.82–0.94, precise fp8 0.96–1.02, but fast
//     fp8, which reads int8's rules, 1.01–1.12 against its 64×128 fast
//     tiles, so the rules started at 2560 until the halves' clusters and
//     precise fp8's promotion changed (below);
//   - N = 5120 (160 CTAs, two waves): 1.11–1.17 / 1.26–1.40 — excluded here.
// Those were clusters of 2×1; the rule's kernel pairs the halves (1×2,
// SwappedHalves in sm90_configs.h), 0.79–1.01× their time again. With those
// and precise fp8's two whole partial sets (Fp8SwappedHalves), N = 2048
// against the 64×128 tiles the rules gave it, M = 129 / 136 / 160 / 176 /
// 192 × K = 1024–8192, same call (bench/results/
// gemm-h200-swapped-halves-n2048-whole-sets.json): int8 0.77–0.97×
// (136×2048×8192 20.3 → 15.8 µs), precise fp8 0.87–0.97×, fast fp8 (run
// precise) against its fast 64×128 tiles 0.84–1.02× (geomean 0.96; above
// 1.00 only at M = 176–192 with K ≤ 4096, by ≤ 1.8 %).
constexpr bool swapped_halves_fit_one_wave(int64_t n, int sm_count) {
  return sm_count > 0 && 2 * ceil_div(n, 64) <= sm_count;
}
constexpr int64_t kSwappedHalvesMinN = 2048;

// kSm90SwappedHalves' token tiles: two at M = 129–192, four at M = 257–384
// (the 64-channel quarters; not M = 193–256). Its launcher
// (sm90_swapped.cuh) and scaled_mm_cuda's layout check read these.
constexpr int64_t kSwappedHalvesQuartersMaxM = 384;
constexpr bool swapped_halves_take_m(int64_t m) {
  return (m > 128 && m <= 192) || (m > 256 && m <= kSwappedHalvesQuartersMaxM);
}
constexpr int64_t swapped_halves_token_tiles(int64_t m) { return m <= 192 ? 2 : 4; }
// True where Hopper runs kSm90SwappedHalves in four token tiles, with a
// workspace or without: M = 257–384, K ≤ 8192 (int8 at M ≤ 288: 4096;
// `int8`: the input, fast fp8 runs precise fp8's bound), where their 4·⌈N/64⌉
// ping-pong tiles fit one wave and fill more than nine tenths of it (N =
// 1921–2112 on 132 SMs) — 64×80 / 64×96 tiles in clusters of 1×2 (two token
// tiles share a weight tile), the shape cuBLASLt's fp8 kernels take at
// 320–384×2048×4096 (64×80 / 64×96, clusters of 2×1;
// bench/results/cublaslt-fp8-kernel-names-m257-768-h200.txt). H200, forced
// against the swapped stream-K quarters and the tile model's picks (branch
// exp/token-tiles-pingpong, c2c1768; M ∈ {200, 240, 272, 320, 384} × N =
// 2048–4096 × K ∈ {4096, 14336}; bench/results/gemm-h200-pingpong-
// quarters-c2c1768.json): at N = 2048, K = 4096 int8 0.69–0.88× the picks'
// time, precise fp8 0.73–0.75× (320×2048×4096 int8 16.0 → 11.4 µs, cuBLASLt
// int8 12.7); at K = 14336 0.89–1.16× (int8 at M = 272, whose 80-column
// tiles reach 48 rows past M, lost), so not from K = 8193; at N ≥ 2560
// (past one wave) 1.03–1.60×; three tiles at M = 193–256 (96 CTAs at N =
// 2048) 1.06–1.37×. Through the dispatch (e687791, M = 257–384 × N ∈ {2048,
// 2112} × K = 2048–8192; bench/results/gemm-h200-pingpong-quarters-
// dispatch-e687791.json) against the best of the former candidates, forced
// in the same call: int8 0.70–1.06× (the three above 1.00 at M = 257–272,
// K ≥ 4096, N = 2112), precise fp8 0.80–0.99×, fast fp8 0.62–0.84×; so int8
// at M ≤ 288, whose 80-column tiles reach 32–63 rows past M, stops at K =
// 4096 (kSwappedHalvesQuartersInt8RaggedMaxK).
constexpr int64_t kSwappedHalvesQuartersMaxK = 8192;
constexpr int64_t kSwappedHalvesQuartersInt8RaggedMaxK = 4096;
constexpr bool swapped_halves_quarters_take(int64_t m, int64_t n, int64_t k, int sm_count, bool int8) {
  if (m <= 256 || m > kSwappedHalvesQuartersMaxM || k > kSwappedHalvesQuartersMaxK || sm_count <= 0) return false;
  if (int8 && m <= 288 && k > kSwappedHalvesQuartersInt8RaggedMaxK) return false;
  return fill_most_of_one_wave(4 * ceil_div(n, 64), sm_count);
}

// True where Hopper runs kSm90SwappedStreamK when the call brings a
// workspace: the 128×160 (M ≤ 160) or 128×192 swapped tiles, cut along K by
// the stream-K scheduler, keep every SM busy with no 128-row tile mostly
// padding. H200 data: bench/results/gemm-h200-swapped-stream-k-sweep.json
// and gemm-h200-swapped-stream-k-n4096.json (forced, one call each); µs or
// time ratios, int8 / precise fp8.
//   - N ≥ 6144, M = 129–160, where kSm90Swapped's tiles do not fill their
//     waves (N = 10240 and 11008 on 132 SMs): against the tile model's
//     128×192, 136×10240×8192 46.5 → 36.8 / 45.8 → 38.0, 160×… 42.0 →
//     35.6 / 41.9 → 35.3, 136×11008×4096 28.9 → 22.6 / 28.4 → 22.3,
//     160×… 26.4 → 22.2 / 25.2 → 22.1. Even at M = 176–192 (1.00–1.02×
//     faster); where the 64-channel tiles fill, 1.2–1.4× slower at N = 6144
//     and 8192 (0.96–1.03× at 28672).
//   - N ≥ 6144, M = 129–160, where those tiles take two waves or more and
//     fill less than 90 % of them (`swapped_tiles_fill_two_waves_short`:
//     N = 14336 and 28672 on 132 SMs, 224 and 448 tiles at 85 %): 0.81–0.95×
//     their time for precise fp8, 0.80–0.95× for fast fp8 (run precise),
//     0.84–1.02× for int8 (136×28672×28672 fp8 290.0 → 237.7 µs, cuBLASLt
//     fp8 212.5) at K = 4096–28672; where they fill 97 % (N = 8192: one
//     wave; 57344: seven) 0.93–1.44×
//     (bench/results/gemm-h200-swapped-stream-k-wide-n-7bd07c8.json).
//     From how many k-tiles per SM depends on the whole tiles' waves
//     (bench/results/gemm-h200-swapped-two-wave-band-1d2f0f1.json: M ∈
//     {136, 160} × nine N of the three bands × K = 2048–8192, both forced;
//     a bound's cost is the geomean of its pick's time over the faster one's):
//       two waves (N = 11840–15104 on 132 SMs): stream-K wins at every K
//       measured, from 11.6 per SM (12288×2048: 0.86–0.97×; 136×12288×4096
//       int8 27.4 → 23.2 µs), and at K = 1024 and 1536 too (5.8–10.7 per
//       SM: int8 0.91–1.00×, precise fp8 0.87–0.96×; 136×12288×1024 fp8
//       13.1 → 11.9 µs; gemm-h200-swapped-two-wave-k1024-15b1318.json): from
//       5 per SM (24 cost 3.1 %, up to 1.23×; K = 512 is not measured);
//       three or more: it loses on short K (160×20480×4096 int8 34.1 →
//       39.0 µs, 160×22528×4096 1.17×; 25600×2048 1.02–1.10×) and wins on
//       long: from 48 per SM (three waves 0.8 % above the best, four 0.3 %;
//       24 cost 1.5 % and 1.0 %, up to 1.17×).
//   - N = 4096–6143, by the 128×128 k-tiles each SM gets, ⌈N/128⌉·⌈K/128⌉ /
//     SMs, against the whole swapped tiles (the rule there at M ≤ 160):
//     15.5 per SM (N = 4096, K = 8192) 1.12–1.17× / 1.17–1.19× their time,
//     20.8 (K = 11008) 1.03–1.07× / 1.09–1.12×, 27.2 (14336) 0.93–0.97× /
//     0.98–1.01×, 54.3 (28672) 0.74–0.79× / 0.77–0.81×; at K = 4096 (7.8)
//     1.3–1.6× the 64×128 tiles' time. At M = 161–192, against the 64×128
//     tiles: 176×4096×14336 (27.2) 1.01× / 1.06×, 192×4096×28672 (54.3)
//     0.78× / 0.83×. So from 24 k-tiles per SM at M ≤ 160, from 48 above.
//     Past the token halves' one wave their stream-K twin, which beat
//     these tiles there (swapped_halves_stream_k_takes), takes these widths
//     first from K = 4096, so on 132 SMs this bound no longer picks.
//   - Not from N = 2048 to where the token halves fit one wave (4224 on
//     132 SMs): there the halves, or on long K their stream-K twin
//     (swapped_halves_stream_k_takes), are faster. The twin's 128×80 /
//     128×96 tiles in clusters of 1×2 took 0.62–0.90× these tiles' time
//     for precise fp8 and 0.79–0.95× for int8 at N = 2048–4096, K =
//     8192–28672 (bench/results/gemm-h200-swapped-halves-stream-k-sweep-
//     13996e7.json), which till then ran here from K = 28672 at N =
//     2048–2559 (gemm-h200-swapped-long-k-sweep-67d4552.json).
//   - M = 193–256 in three token tiles (the thirds: 3·⌈N/128⌉ tiles of
//     128×72–96), where they fill more than three quarters of the SMs in
//     one wave (swapped_token_tiles_fill_one_wave: N = 4225–5632 on 132 SMs),
//     from K = 2048. H200, forced against the table's picks (128×128
//     tiles) in one call, M ∈ {193, 208, 224, 240, 256} × K ∈ {2048, 4096,
//     8192, 14336} (bench/results/gemm-h200-thirds-band-exp-thirds.json): at
//     N = 4352–5632 precise fp8 0.78–0.98× their time (geomean 0.88;
//     224×5120×14336 41.6 → 33.9 µs, cuBLASLt fp8 34.1), int8 0.78–1.08×
//     (0.91; above 1.00 only at M = 193, whose last 80-column tile reaches
//     47 rows past M; 240×5120×8192 27.4 → 22.4); at N = 5760 (135 tiles,
//     two waves) 0.95–1.52×, at 4096 (96 tiles) 0.82–1.30×, at 3584
//     0.85–1.23×.
//   - M = 257–384 in four token tiles (the quarters: 4·⌈N/128⌉ tiles of
//     128×72–96), where they fit one wave and fill at least 70 % of it
//     (swapped_token_tiles_fill_one_wave: N = 2945–4224 on 132 SMs), from K =
//     2048. H200, forced against the table's picks (128×128, 128×192, and
//     128×256 stream-K with a workspace at K = 14336) in one call, M ∈ {257,
//     272, 288, 320, 352, 384} × N ∈ {3072, 3584, 4096, 4224} × K ∈ {2048,
//     4096, 8192, 14336} (bench/results/gemm-h200-quarters-band-exp-quarters.json):
//     int8 0.52–0.93× their time (geomean 0.72), precise fp8 0.54–0.80×
//     (0.70); 320×4224×14336 int8 60.5 → 31.5 µs (cuBLASLt int8 51.5), fp8
//     60.2 → 34.3 (cuBLASLt fp8 32.8).
//   - M = 257–768 (since the quarters, above): ⌈M/96⌉ token tiles above M =
//     384 (five to eight; at most 96 columns each), and three of 88–96 at
//     M = 257–288 where four do not fit one wave (N = 4225–5632 on 132 SMs;
//     swapped_token_tiles), where their tiles fit one wave and either fill
//     at least 70 % of it (from K = 2048) or give each SM at least 15
//     k-tiles (tiles·⌈K/128⌉ ≥ 15·SMs: the quarters at N = 2048 from K =
//     4096, any count of tiles from K = 14336 at N ≥ 1024). H200, forced
//     against the table's picks (bench/results/gemm-h200-token-tiles-more-
//     2991b1d-*.json: M = 257–768 × N = 1024–10240 × K = 2048–14336): the
//     74 shapes the rule newly takes int8 0.59–1.03× their time (geomean
//     0.84), precise fp8 0.43–0.99× (0.76), fast fp8 0.80×; 400×3328×14336
//     int8 52.4 → 30.9 µs, 272×5120×4096 27.2 → 15.6 in three tiles (four
//     took 22.3). In one wave under both bounds int8 and fast fp8 up to
//     1.18× (short K at N ≤ 1536); past one wave 0.70–1.43× (M = 320–384
//     won there, 400–640 at N ≥ 4096 lost up to 1.39×): only M ≤ 384. The
//     thirds (M = 193–256) keep their rule: their 128×128 competitor
//     wastes at most 63 rows, and outside it the thirds lost.
//   - Past one wave, M = 257–384 only, up to two waves (kSwappedTokenTiles-
//     MaxWaves), from K = 8192, and at M ≤ 320 from K = 4096. H200, forced
//     in one call, M ∈ {257, 272, 288, 320, 352, 384} × N = 4608–8192 × K
//     = 2048–14336 (bench/results/gemm-h200-token-tiles-past-a-wave-
//     0c8b631.json): where this takes, 62 shapes, int8 0.62–1.02× the
//     picks' time (geomean 0.78), precise fp8 0.53–1.01× (0.80), fast fp8
//     0.82×; 272×8192×14336 int8 93.5 → 58.9 µs. Left out: K = 2048
//     (0.86–1.24×) and M = 321–384 at K = 4096 (0.88–1.09×); past two
//     waves 320×10240 lost at K ≤ 4096 (1.06–1.30×), M ≥ 400 past one wave
//     up to 1.39× (above).
constexpr int64_t kSwappedStreamKTilesPerSm = 24;
constexpr int64_t kSwappedStreamKTwoWavesTilesPerSm = 5;
constexpr int64_t kSwappedStreamKMoreWavesTilesPerSm = 48;
// kSm90SwappedStreamK's token tiles at M = 193–768 (its launcher,
// sm90_swapped_stream_k.cuh, reads these too): three up to M = 256, four up
// to 384, ⌈M/96⌉ above; where those tiles, ·⌈N/128⌉, leave one wave, as
// few as fit it down to ⌈M/96⌉ — three of 88–96 columns instead of four at
// M = 257–288 (no other M has a choice: ⌈M/96⌉ is the count there).
constexpr int64_t kSwappedTokenTilesMaxM = 768;
constexpr int64_t swapped_token_tiles(int64_t m, int64_t n, int sm_count) {
  const int64_t widest = ceil_div(m, 96), channel_tiles = ceil_div(n, 128);
  int64_t tiles = m <= 256 ? 3 : m <= 384 ? 4 : widest;
  while (tiles > widest && tiles * channel_tiles > sm_count) --tiles;
  return tiles;
}
constexpr int64_t kSwappedTokenTilesMinK = 2048;
constexpr int64_t kSwappedTokenTilesKTilesPerSm = 15;
constexpr int64_t kSwappedTokenTilesMaxWaves = 2;
// True where the token tiles take M = 193–768 (with a workspace), K ≥ 2048:
// where their swapped_token_tiles(m, n, SMs)·⌈N/128⌉ tiles fit one wave and
// fill more than three quarters of it (thirds, M ≤ 256), or at least 70 %
// of it or bring 15 k-tiles per SM (M = 257–768); past one wave, at M =
// 257–384 up to two waves, from 64 k-tiles (K = 8192), at M ≤ 320 from 32.
constexpr bool swapped_token_tiles_take(int64_t m, int64_t n, int64_t k, int sm_count) {
  if (sm_count <= 0 || k < kSwappedTokenTilesMinK) return false;
  const int64_t tiles = swapped_token_tiles(m, n, sm_count) * ceil_div(n, 128), sms = sm_count;
  const int64_t k_tiles = ceil_div(k, 128);
  if (tiles > sms) {
    if (m <= 256 || m > 384 || tiles > kSwappedTokenTilesMaxWaves * sms) return false;
    return k_tiles >= 64 || (m <= 320 && k_tiles >= 32);
  }
  if (m <= 256) return 4 * tiles > 3 * sms;
  return 10 * tiles >= 7 * sms || tiles * k_tiles >= kSwappedTokenTilesKTilesPerSm * sms;
}
constexpr bool swapped_stream_k_takes(int64_t m, int64_t n, int64_t k, int sm_count) {
  if (m >= kWide80PairsOverTokenThirdsMinM && wide80_pairs_fill_one_wave(m, n, sm_count)) return false;
  if (m > 192 && m <= kSwappedTokenTilesMaxM) return swapped_token_tiles_take(m, n, k, sm_count);
  if (m <= 128 || m > 192 || sm_count <= 0) return false;
  const int64_t k_tiles = ceil_div(n, 128) * ceil_div(k, 128);
  if (n >= 6144) {
    if (m > 160) return false;
    if (!swapped_tiles_fill(n, sm_count)) return true;
    if (!swapped_tiles_fill_two_waves_short(n, sm_count)) return false;
    const int64_t per_sm = swapped_tile_waves(n, sm_count) == 2 ? kSwappedStreamKTwoWavesTilesPerSm
                                                                 : kSwappedStreamKMoreWavesTilesPerSm;
    return k_tiles >= per_sm * sm_count;
  }
  if (n >= 2048 && swapped_halves_fit_one_wave(n, sm_count)) return false;
  const int64_t per_sm = m <= 160 ? kSwappedStreamKTilesPerSm : 2 * kSwappedStreamKTilesPerSm;
  return n >= 4096 && k_tiles >= per_sm * sm_count;
}

// True where Hopper runs kSm90SwappedHalvesStreamK when the call brings a
// workspace: M = 129–192 from N = 2048 to where the whole 64-channel
// swapped tiles fit one wave (N ≤ 8448 on 132 SMs), and at M = 161–192 on
// to N = 12288 (kSwappedHalvesStreamKMaxN). Where the halves
// fit one wave (N ≤ 4224 on 132 SMs), on K long enough that both consumer
// warpgroups of a 128-channel tile, cut along K, beat the halves' one
// (sm90_configs.h, SwappedHalvesStreamK). By ⌈K/128⌉ k-tiles and the input
// (fast fp8 runs it precise, so it takes fp8's bounds):
//   - precise fp8: from 160 k-tiles (K = 20480) up to N = 3072, from 224
//     (K = 28672) above;
//   - int8: from 160 k-tiles below N = 3072, not above.
// Past the halves' one wave, up to where the whole swapped tiles take two
// (N = 4225–8448 on 132 SMs), from 32 k-tiles (K = 4096) for both: there it
// replaces the whole swapped tiles, their stream-K cut and the 64×128
// tiles, which the halves in two waves did not beat. H200, forced in one
// call, M = 136 / 160 / 176 / 192 × N = 4352 /
// 5120 / 6016 × K = 4096 / 14336 (bench/results/
// gemm-h200-swapped-halves-two-waves-8a7f5c7.json), its time over the
// table's pick: K = 14336 int8 0.62–0.96×, precise fp8 0.58–1.00×
// (136×4352×14336 int8 34.8 → 30.6 µs; 176×6016×14336 fp8 63.8 → 37.1,
// the 64×128 tiles in 1.07 waves); K = 4096 0.72–1.04× / 0.69–1.03×, above
// 1.00 only at M = 160 against the whole swapped tiles (int8 14.1 → 14.7,
// 4 %) and at 192×4352 against the 64×128 tiles; fast fp8 (run precise)
// against its fast tiles 0.75–1.06× and 0.64–1.03×. At N = 6144 / 7168 /
// 8192 (the whole swapped tiles in one wave, the table's pick), same M and
// K (gemm-h200-swapped-halves-wide-n-8e5260e.json): int8 0.87–1.01× at
// K = 4096 and 0.85–0.94× at 14336, precise fp8 0.87–0.98× and 0.83–0.93×
// (136×7168×14336 fp8 43.0 → 35.9 µs). At N = 10240 (those tiles in two
// waves, 61 %) it lost at K = 4096 (1.07–1.16× the table's picks) and is
// not taken there. K below 4096 is not measured.
// Where those whole tiles take two waves, at M = 161–192 (where the swapped
// stream-K tiles do not run) up to N = 12288, the widest measured: from 64
// k-tiles (K = 8192). H200, forced in one call, M = 136 / 160 / 176 / 192 ×
// N = 9216 / 10240 / 11008 / 12288 × K = 4096 / 8192 / 14336 / 28672
// (bench/results/gemm-h200-swapped-halves-two-wave-n-9a90d75.json), its
// time over the table's pick (the 128×192 tiles or stream-K by the tile
// model, the whole swapped tiles at 12288) at M = 176–192: K = 4096
// 0.98–1.11×; 8192 int8 0.87–0.99×, precise fp8 0.87–1.02×; 14336 and
// 28672 0.64–0.96× (176×11008×28672 int8 158.4 → 102.1 µs). At M = 136–160,
// against the swapped stream-K tiles, it won only on long K up to N =
// 11008 (0.85–1.01× from 14336) and lost at 12288 (up to 1.08×): not
// taken there.
// H200, both forced in one call, M = 136 / 160 / 192, N = 2048 / 2560 /
// 3072 / 4096, K = 8192 / 14336 / 20480 / 28672, precise fp8 with two whole
// partial sets in both (bench/results/
// gemm-h200-swapped-halves-stream-k-sweep-whole-sets.json), the stream-K
// twin's time over the halves':
//   - precise fp8: K = 8192 1.16–1.29×, 14336 0.97–1.07× up to N = 3072 and
//     1.09–1.15× at 4096 (so neither); K = 20480 0.85–0.94× up to N = 2560,
//     0.95–1.00× at 3072, 1.01–1.13× at 4096; K = 28672 0.75–0.93× up to
//     3072 (136×2048×28672 41.0 → 32.5 µs), 0.94–1.05× at 4096 (geomean
//     0.99);
//   - int8: K = 14336 0.99–1.20×; K = 20480 0.88–0.95× at N = 2048,
//     0.95–1.01× at 2560, 0.99–1.12× at 3072; K = 28672 0.78–0.93× up to
//     2560, 0.91–1.05× at 3072, 0.95–1.09× at 4096.
// Before the whole sets (bench/results/
// gemm-h200-swapped-halves-stream-k-sweep-13996e7.json) precise fp8 took the
// twin from K = 14336 (0.86–0.96× the sliced halves' time), and at N = 2048,
// where the table ran the 64×128 tiles, int8 did too.
constexpr int64_t kSwappedHalvesStreamKMaxN = 12288;
constexpr bool swapped_halves_stream_k_takes(int64_t m, int64_t n, int64_t k, int sm_count, bool int8) {
  if (m <= 128 || m > 192 || n < kSwappedHalvesMinN || sm_count <= 0) return false;
  const int64_t k_tiles = ceil_div(k, 128);
  if (!swapped_halves_fit_one_wave(n, sm_count)) {
    if (swapped_tile_waves(n, sm_count) == 1) return k_tiles >= 32;
    return m > 160 && n <= kSwappedHalvesStreamKMaxN && k_tiles >= 64;
  }
  if (int8) return n < 3072 && k_tiles >= 160;
  return k_tiles >= (n <= 3072 ? 160 : 224);
}

// Clusters of four CTAs (kSm90Thin48, kSm90Wide80x4, kSm90Wide96x4) run one
// wave only where all of them are co-resident, and fewer fit than SMs / 4:
// a cluster runs on the SMs of one GPC, and Hopper's SMs come in pairs
// (TPCs), so a GPC whose SM count is 2 mod 4 leaves a pair idle — with
// GH100's 8 GPCs at most 16 SMs, 116 of an H100's or H200's 132. The rules
// hold to that bound. On the H200, 29 clusters of four (116 CTAs) ran in one wave and 32
// (128) in two: 128×10240×8192 int8 30.0 µs with 128×80 tiles in pairs,
// 40.4 in fours, 128×9216×8192 (29 clusters) 28.7 and 27.1
// (bench/results/gemm-h200-sweep-wide80x4-5897ca2.json).
constexpr int64_t kQuadClusterIdleSms = 16;
constexpr bool quad_clusters_fit(int64_t slots, int sm_count) {
  return slots <= static_cast<int64_t>(sm_count) - kQuadClusterIdleSms;
}

// True when 64×48 tiles in clusters of 1×4 are all co-resident: M ≤ 64 on
// 132 SMs, N ≤ 5568 (N = 4096: 88 slots).
constexpr bool thin48_fits(int64_t m, int64_t n, int sm_count) {
  return quad_clusters_fit(cluster_slots(m, n, 64, 48, 4), sm_count);
}

// True when 128×80 tiles in clusters of 1×4 are all co-resident and 64×128
// tiles do not fit one wave: M = 65–128 on 132 SMs, N = 8449–9280 (N =
// 9216: 116 slots), inside wide80_fills_one_wave's band.
constexpr bool wide80x4_fits(int64_t m, int64_t n, int sm_count) {
  return quad_clusters_fit(cluster_slots(m, n, 128, 80, 4), sm_count) && tile_count(m, n, 64, 128) > sm_count;
}

// True when 128×96 tiles in clusters of 1×4 are all co-resident, 128×80
// ones are not, and 64×128 tiles do not fit one wave: M = 65–128 on 132
// SMs, N = 9281–11136 (N = 10240: 108 slots, 11008: 116).
constexpr bool wide96x4_fits(int64_t m, int64_t n, int sm_count) {
  return quad_clusters_fit(cluster_slots(m, n, 128, 96, 4), sm_count) &&
         !quad_clusters_fit(cluster_slots(m, n, 128, 80, 4), sm_count) && tile_count(m, n, 64, 128) > sm_count;
}

// M ≤ 16 with a workspace: where the swapped wgmma decode kernel
// (kSm90Decode, sm90_decode.cuh) replaces kSm90SkinnyStream. Measured on the
// H200 (both forced in one call, M ∈ {1, 8, 9, 16} and four more tall
// weights; bench/results/gemm-h200-decode-swapped-ab.json, …-modes.json),
// its time is ~11 µs plus the weight at ~4.45 TB/s, the skinny kernel's
// ~6 µs plus ~4.15 TB/s (fp8; int8 at M ≤ 8 on tall weights less): it wins
// only on large weights, and only where its 128-row tiles are at least one
// and a half waves (at 8192×28672, 64 tiles, the scheduler cuts every tile
// and the two kernels tie). Both hold from (N, K) = (28672, 8192) up:
// 1×28672×8192 int8 68.1 → 61.6 µs, 16×… fp8 69.7 → 63.5, 1×57344×8192
// int8 128.4 → 117.3, 16×128256×8192 fp8 280.4 → 253.7; at 28672×4096
// (117 MB) it was 1.10× slower, at 8192×8192 1.2×.
constexpr int64_t kDecodeMinWeightElements = int64_t{200} << 20;
constexpr bool decode_takes(int64_t m, int64_t n, int64_t k, int sm_count) {
  return m <= 16 && sm_count > 0 && 2 * ceil_div(n, 128) >= 3 * static_cast<int64_t>(sm_count) &&
         n * k >= kDecodeMinWeightElements;
}

}  // namespace qgemm::detail
