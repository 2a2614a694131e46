// dispatch_table.h — which kernel serves which scaled-GEMM problem, per
// architecture, with the reason next to each choice. Rules are read top to
// bottom; the first whose bounds hold wins. A kernel that cannot take the
// arguments (alignment, strides: see scaled_mm_cuda.cu) hands the problem
// to the next fitting rule and finally to the fallback, so every shape runs.
// Tiles, clusters and schedules of the CUTLASS kernels: sm90_configs.h,
// sm80_configs.h. The predicates on how a shape's tiles fill the SMs:
// tile_waves.h; the Hopper tile model some rules carry: tile_model.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "gemm/cuda/decode_wgmma_plan.h"
#include "gemm/cuda/kernels.h"
#include "gemm/cuda/tile_model.h"
#include "gemm/cuda/tile_waves.h"

namespace qgemm::detail {

// A rule's condition on how the problem's tiles fill the GPU's SMs.
enum class Waves : uint8_t {
  kAny,
  // 128×128 tiles need more than one wave and less than one and a half
  // (square_tiles_ragged).
  kSquareRagged,
  // 64×64 tiles fit in one wave (small_tiles_fit_one_wave).
  kSmallOneWave,
  // 64×128 tiles do NOT need between one and one and a half waves
  // (narrow_tiles_ragged).
  kNarrowNotRagged,
  // 128×80 tiles fit one wave where 64×128 tiles do not (wide80_fills_one_wave).
  kWide80OneWave,
  // 128×96 tiles fit one wave where 128×80 and 64×128 tiles do not
  // (wide96_fills_one_wave).
  kWide96OneWave,
  // 64×48 tiles in clusters of 1×4 are all co-resident (thin48_fits).
  kThin48Fits,
  // 128×80 tiles in clusters of 1×4 are all co-resident and 64×128 tiles do
  // not fit one wave (wide80x4_fits).
  kWide80x4Fits,
  // 128×96 tiles in clusters of 1×4 are all co-resident where 128×80 ones
  // are not and 64×128 tiles do not fit one wave (wide96x4_fits).
  kWide96x4Fits,
  // The fp8 wgmma decode kernel's 64-row tiles number from nine tenths of
  // the SMs to two per SM (decode_wgmma_fills_the_gpu, decode_wgmma_plan.h).
  kDecodeWgmmaFillsTheGpu,
  // The swapped tiles (64 channels each, in clusters of two) fill at least
  // 70 % of their waves (swapped_tiles_fill).
  kSwappedFills,
  // The swapped tiles in token halves fit one wave (swapped_halves_fit_one_wave).
  kSwappedHalvesOneWave,
  // M = 232–256 and 128×96 tiles fill nine tenths of one wave or more
  // (wide96_pairs_fill_one_wave).
  kWide96PairsFill,
  // M = 224–256 and 128×80 tiles fill five sixths of one wave or more
  // (wide80_pairs_fill_one_wave).
  kWide80PairsFill,
};

struct GemmRule {
  int64_t max_m;  // the rule applies when M ≤ max_m …
  int64_t min_n;  // … and min_n ≤ N ≤ max_n …
  int64_t max_n;
  GemmKernel kernel;  // … and runs this kernel, or, given a tile model and
                      // an SM count, the model's pick
  const char* why;
  Waves waves = Waves::kAny;  // … and the tiles fill the SMs as this says …
  TileModel model = {};
  bool needs_fast_dram = false;  // … and, if set (kFastDramOnly), the GPU's DRAM is fast
                                 // (DramRegime not kDefault).
};
constexpr bool kFastDramOnly = true;

constexpr bool waves_hold(Waves waves, int64_t m, int64_t n, int sm_count) {
  switch (waves) {
    case Waves::kAny: return true;
    case Waves::kSquareRagged: return square_tiles_ragged(m, n, sm_count);
    case Waves::kSmallOneWave: return small_tiles_fit_one_wave(m, n, sm_count);
    case Waves::kNarrowNotRagged: return !narrow_tiles_ragged(m, n, sm_count);
    case Waves::kWide80OneWave: return wide80_fills_one_wave(m, n, sm_count);
    case Waves::kWide96OneWave: return wide96_fills_one_wave(m, n, sm_count);
    case Waves::kThin48Fits: return thin48_fits(m, n, sm_count);
    case Waves::kWide80x4Fits: return wide80x4_fits(m, n, sm_count);
    case Waves::kWide96x4Fits: return wide96x4_fits(m, n, sm_count);
    case Waves::kDecodeWgmmaFillsTheGpu: return decode_wgmma_fills_the_gpu(n, sm_count);
    case Waves::kSwappedFills: return swapped_tiles_fill(n, sm_count);
    case Waves::kSwappedHalvesOneWave: return swapped_halves_fit_one_wave(n, sm_count);
    case Waves::kWide96PairsFill: return wide96_pairs_fill_one_wave(m, n, sm_count);
    case Waves::kWide80PairsFill: return wide80_pairs_fill_one_wave(m, n, sm_count);
  }
  return false;
}

// The first rule of `rules` that holds for an M×N problem on `sm_count`
// SMs with the call's DramRegime, or nullptr (then the fallback runs).
template <size_t N>
constexpr const GemmRule* pick_rule(const GemmRule (&rules)[N], int64_t m, int64_t n, int sm_count,
                                    DramRegime regime = DramRegime::kDefault) {
  for (const GemmRule& rule : rules) {
    if (m <= rule.max_m && n >= rule.min_n && n <= rule.max_n && waves_hold(rule.waves, m, n, sm_count) &&
        (!rule.needs_fast_dram || regime != DramRegime::kDefault)) {
      return &rule;
    }
  }
  return nullptr;
}

// The kernel `rule` runs for an M×N problem on `sm_count` SMs: its tile
// model's pick where it has one (and an SM count), else its kernel.
constexpr GemmKernel rule_kernel(const GemmRule& rule, int64_t m, int64_t n, int sm_count,
                                 DramRegime regime = DramRegime::kDefault) {
  return rule.model.count > 0 && sm_count > 0 ? modelled_tile(rule.model, m, n, sm_count, regime)
                                              : rule.kernel;
}

// With a workspace: whether `rule`'s tile model takes stream-K for an
// M×N×K problem — its modelled time shorter than that of the best
// whole-tile candidate it is weighed against (TileCandidate::stream_k_rival).
constexpr bool rule_takes_stream_k(const GemmRule& rule, int64_t m, int64_t n, int64_t k, int sm_count,
                                   DramRegime regime = DramRegime::kDefault) {
  const TileModel& model = rule.model;
  if (model.count == 0 || model.stream_k == nullptr || sm_count <= 0) return false;
  const TileCandidate& best = fastest_tile(model, m, n, sm_count, regime, /*stream_k_rivals=*/true);
  const int64_t whole_tiles = modelled_time(best, m, n, sm_count, regime) * ceil_div(k, 128);
  return stream_k_time(*model.stream_k, m, n, k, sm_count) < whole_tiles;
}

constexpr int64_t kAnyM = std::numeric_limits<int64_t>::max();
constexpr int64_t kAnyN = std::numeric_limits<int64_t>::max();

// Hopper (sm_90a). Chosen from `qgemm bench gemm --sweep` on an H100 SXM
// (bench/results/gemm-h100-sweep.json: every config timed on every shape;
// M ≤ 256 on the smaller weights: bench/results/gemm-h100-sweep-small-m.json).
// The µs below are H100 medians from one call, before → after.
constexpr GemmRule kSm90Int8Rules[] = {
    {16, 0, kAnyN, GemmKernel::kSm90SkinnyStream,
     "M ≤ 16 (decode): 16-column tiles on one or two persistent CTAs per SM (by the rate one CTA "
     "streams against the DRAM's share per SM: skinny_stream_ctas_per_sm; two on an H200), the weight "
     "streamed into shared memory by bulk copies (4 stages of 16 KB in flight per CTA). Against the "
     "register-ring skinny "
     "kernel (same call, bench/results/gemm-h100-skinny-stream-ab.json): M ≤ 8 0.91× the time "
     "(geomean of int8 and fp8 over the 8 (N, K), never slower), M = 9–16 0.90× (at most 2 % slower: "
     "16×8192×28672 int8); 1×4096×14336 29.7 → 24.9 µs, 16×57344×8192 175.9 → 165.7. It also beat "
     "the 64×64 CUTLASS tile that fp8 M = 9–16 ran at N = 8192 (16×8192×8192 fp8 32.1 → 29.9 µs)"},
    {64, 0, kAnyN, GemmKernel::kSm90Thin48,
     "M ≤ 64 where 64×48 tiles in clusters of 1×4 are all co-resident (N ≤ 5568 on 132 SMs): more "
     "CTAs than 64×64 pull the weight, and four share each A tile — H200: 24×4096×14336 27.6 → "
     "24.3 µs, 32×4096×11008 22.7 → 19.7, 64×4096×14336 22.7 → 22.0, 32×5120×8192 20.5 → 19.1 "
     "(bench/results/gemm-h200-sweep-thin-5897ca2.json)",
     Waves::kThin48Fits},
    {32, 6144, kAnyN, GemmKernel::kSm90Swapped,
     "M = 17–32, N ≥ 6144 where its tiles fill their waves: Dᵀ = B·Aᵀ on 64 channels × 32 tokens, "
     "where the 64-row tiles pad 32–47 rows — H200: 24×8192×28672 74.3 → 60.4 µs, 24×8192×8192 "
     "26.2 → 22.6, 32×57344×8192 128.5 → 116.9, 24×6144×4096 14.9 → 13.4 "
     "(bench/results/gemm-h200-swapped-sweep-m17-64.json); at M = 33–64 a 64×64 swapped tile "
     "was 0.91–1.02× as fast where its tiles fill, and was not kept",
     Waves::kSwappedFills},
    {64, 0, kAnyN, GemmKernel::kSm90Small1x2,
     "M ≤ 64 where 64×64 tiles fit one wave: twice the CTAs of 64×128 pull the weight — "
     "64×4096×14336 32.9 → 28.6 µs, 64×4096×4096 14.3 → 13.3, 32×8192×8192 34.6 → 32.1; with more "
     "than one wave 64×128 stayed faster (32×10240×8192 39.4 vs 42.3, 32×28672×4096 49.8 vs 52.5)",
     Waves::kSmallOneWave},
    {64, 0, kAnyN, GemmKernel::kSm90Narrow,
     "bandwidth-bound: 64×128 tiles (the smallest wgmma M) waste the least MMA work; TMA keeps enough "
     "bytes in flight"},
    {128, 0, kAnyN, GemmKernel::kSm90Wide80x4,
     "M = 65–128 where 128×80 tiles in clusters of 1×4 are all co-resident and 64×128 tiles need "
     "more than one wave (N = 8449–9280 on 132 SMs): four CTAs share each A tile — H200: "
     "72×9216×8192 36.1 → 28.2 µs, 96×9216×4096 19.8 → 18.5, 128×9216×8192 28.7 → 27.1 "
     "(bench/results/gemm-h200-sweep-wide80x4-5897ca2.json)",
     Waves::kWide80x4Fits},
    {128, 0, kAnyN, GemmKernel::kSm90Wide96x4,
     "M = 65–128 where 128×96 tiles in clusters of 1×4 are all co-resident and 128×80 ones are not, "
     "64×128 tiles needing more than one wave (N = 9281–11136 on 132 SMs): the next band, as above — "
     "H200, against 128×80 (N ≤ 10560) or 128×96 in pairs: 72×9472×8192 36.8 → 29.1 µs, "
     "72×10240×8192 37.3 → 29.9, 100×11008×8192 33.3 → 30.7, 128×10240×8192 29.9 → 29.5 "
     "(bench/results/gemm-h200-wide96x4-ab-60cfa61.json). It leaves 128×80 in pairs no band on "
     "GPUs of 96 SMs or more",
     Waves::kWide96x4Fits},
    {128, 0, kAnyN, GemmKernel::kSm90Wide80,
     "M = 65–128 where 128×80 tiles fill one wave and 64×128 tiles need more (N = 8449–10560 on 132 "
     "SMs): one wave of 128-row tiles streaming 80 weight rows each — H200: 128×10240×8192 33.7 → "
     "29.7 µs, 112×9216×8192 33.9 → 29.5, 80×10240×8192 37.8 → 35.8 (fast fp8 128×10240×8192 "
     "33.8 → 29.4; bench/results/gemm-h200-sweep-wide80-5a87830.json)",
     Waves::kWide80OneWave},
    {128, 0, kAnyN, GemmKernel::kSm90Wide96,
     "M = 65–128 where 128×96 tiles fill one wave and 128×80 and 64×128 tiles need more (N = "
     "10561–12672 on 132 SMs) — H200: 100×12288×4096 25.6 → 22.1 µs, 80×12288×8192 39.2 → 37.4, "
     "128×11008×4096 20.8 → 20.5 (fast fp8 100×12288×4096 25.5 → 21.9; "
     "bench/results/gemm-h200-sweep-wide96-2d53da0.json)",
     Waves::kWide96OneWave},
    // Fast DRAM (an H200), M = 65–128: the 64-row ping-pong tiles there ran
    // the slower the more rows past M their second M tile holds (as the
    // 128×128 tile does above M = 256: kSm90Int8Tiles) — int8 57344×8192 with
    // 64×64 tiles: M = 100 174.2 µs, 112 157.7, 120 147.1, 128 144.0; with
    // 64×128: 80 143.0, 128 126.3. The three rules below were read off a sweep
    // of every tile at M = 24–256 × the eight (N, K)
    // (bench/results/gemm-h200-sweep-small-m-02668d8.json) and confirmed
    // interleaved (--rounds 3 --cooldown 100, gemm-h200-small-m-ab-02668d8.json;
    // N < 6144 at M = 66–88: gemm-h200-small-m-n4096-ab-2129c91.json). On the
    // H100 the same tiles were within ±4 % at these shapes (64×64 5–7 %
    // faster at N = 10240: gemm-h100-sweep-narrow2x1.json), so it keeps the
    // rules after them.
    {96, 28672, kAnyN, GemmKernel::kSm90Wide1x2,
     "fast DRAM, M = 65–96, N ≥ 28672: one 128-row M tile of 128×256 (cluster 1×2), whose rows "
     "past M cost nothing, in place of two 64-row ones — H200: 72×57344×8192 143.3 → 130.5 µs, "
     "80×… 143.0 → 129.8, 96×… 134.1 → 130.3, 72×28672×4096 43.0 → 40.9 (88×… 40.0 → 41.0)",
     Waves::kAny, {}, kFastDramOnly},
    {96, 6144, kAnyN, GemmKernel::kSm90Narrow2x1,
     "M = 65–96, N ≥ 6144: 64×128 tiles whose two M tiles share the weight tile by multicast — "
     "80×10240×8192 51.4 → 42.7 µs, 80×28672×4096 61.1 → 50.5, 96×8192×8192 35.6 → 30.1, "
     "96×6144×4096 18.2 → 15.5 (at M = 112–128 64×64 stayed 0–7 % faster; "
     "bench/results/gemm-h100-sweep-narrow2x1.json)"},
    {88, 0, 6143, GemmKernel::kSm90Narrow2x1,
     "fast DRAM, M = 65–88, N < 6144: 64×128 tiles sharing the weight tile, as at N ≥ 6144 — the "
     "64×64 tile's second M tile is ≥ 40 rows past M — H200: 72×4096×14336 35.0 → 30.6 µs, "
     "66×4096×11008 27.7 → 26.3, 80×4096×4096 14.0 → 13.3 (88: equal; 96: 64×64 2–3 % faster)",
     Waves::kAny, {}, kFastDramOnly},
    {128, 6144, kAnyN, GemmKernel::kSm90Narrow2x1,
     "fast DRAM, M = 97–128, N ≥ 6144 unless 64×128 tiles take 1–1.5 waves: 64×128 tiles sharing "
     "the weight tile, as at M = 65–96 — H200: 100×57344×8192 174.2 → 130.9 µs, 128×… 144.0 → "
     "126.3, 100×8192×28672 93.3 → 69.6, 112×28672×4096 42.7 → 39.0, 128×6144×4096 15.2 → 13.6; "
     "at N = 10240 (160 tiles on 132 SMs) 64×64 stayed 3 % faster at M = 120–128",
     Waves::kNarrowNotRagged, {}, kFastDramOnly},
    {128, 0, kAnyN, GemmKernel::kSm90Small2x1,
     "M = 65–128: 64×64 tiles whose two M tiles share the weight tile by multicast, 2·N/64 CTAs — "
     "128×4096×4096 15.3 → 12.6 µs, 128×4096×14336 35.1 → 28.3, 128×10240×8192 45.6 → 39.6, "
     "128×28672×4096 54.9 → 49.9, 96×4096×14336 42.2 → 31.7; 3–4 % slower than 64×128 at "
     "96×6144×4096 and 96×8192×8192"},
    {192, kSwappedHalvesMinN, 6143, GemmKernel::kSm90SwappedHalves,
     "M = 129–192, N ≥ 2048 where the swapped tiles in token halves fit one wave (N ≤ 4224 on 132 "
     "SMs): Dᵀ = B·Aᵀ on 64 channels × 80 or 96 tokens, 2·N/64 CTAs (128 at N = 4096) where whole "
     "token tiles or three 64-row ones leave SMs idle — H200, against the former picks in the same "
     "call: 160×3072×14336 34.3 → 25.4 µs, 136×3072×14336 34.4 → 27.2, 160×4096×14336 34.1 → 29.6 "
     "(swapped stream-K), 176×3072×4096 14.5 → 13.2, 192×4096×4096 15.4 → 14.1 "
     "(bench/results/gemm-h200-swapped-split*-82406f1.json; tile_waves.h); in clusters of 1×2, "
     "the halves sharing the weight tile, 0.79–0.95× that again (160×4096×28672 49.0 → 40.5; "
     "gemm-h200-swapped-halves-cluster{2x1,1x2}-8bdcf97.json); at N = 2048 (64×128 before) "
     "0.77–0.97× (136×2048×8192 20.3 → 15.8; gemm-h200-swapped-halves-n2048-whole-sets.json)",
     Waves::kSwappedHalvesOneWave},
    {160, 4096, 6143, GemmKernel::kSm90Swapped,
     "M = 129–160, N = 4096–6143: Dᵀ = B·Aᵀ on 64 channels × 160 tokens (64 tiles at N = 4096), no "
     "64-row tile mostly padding — H200, against the 64×128 tiles forced in the same call: "
     "160×4096×4096 15.7 → 15.1 µs, 136×4096×11008 31.7 → 29.7, 160×4096×28672 70.0 → 61.3, "
     "160×5120×8192 28.3 → 23.8; at M = 176–192 0.90–0.97× (bench/results/"
     "gemm-h200-swapped-stream-k-n4096.json, gemm-h200-swapped-sweep-55c126f.json)"},
    {192, 0, 6143, GemmKernel::kSm90Narrow,
     "M = 129–192 with N < 6144 where 64×128 tiles do not take 1–1.5 waves: three 64-row tiles (96 "
     "CTAs at N = 4096) instead of two 128-row ones (64) — 129×4096×4096 20.1 → 16.7 µs, "
     "129×4096×14336 52.7 → 41.1, 192×4096×14336 44.8 → 38.8",
     Waves::kNarrowNotRagged},
    {192, 0, 6143, GemmKernel::kSm90Swapped,
     "M = 161–192, N = 5633–6143 on 132 SMs, where three rows of 64×128 tiles take 1–1.5 waves: the "
     "swapped 64×192 tiles in one — H200, forced in one call: 176×6016×4096 21.9 → 17.0 µs, "
     "192×6016×14336 57.0 → 39.1 (bench/results/gemm-h200-swapped-halves-two-waves-8a7f5c7.json)"},
    {192, 6144, kAnyN, GemmKernel::kSm90Swapped,
     "M = 129–192, N ≥ 6144 where its tiles fill their waves: Dᵀ = B·Aᵀ on 64 channels × 160 or 192 "
     "tokens, no 128-row tile mostly padding — H200: 160×8192×8192 40.2 → 27.8 µs, 136×8192×28672 "
     "119.8 → 81.3, 160×57344×8192 192.4 → 143.6, 192×28672×4096 53.2 → 47.5, 136×6144×4096 22.6 → 17.6",
     Waves::kSwappedFills},
    // M = 129–192, N ≥ 6144: the tile model too (bench/results/gemm-h100-sweep-tiles-m129-256.json).
    // The rules below it ran 128×128 ping-pong there, 1.2–1.3× slower at N ≥ 28672; above M = 192
    // that tile's second M tile is at least half full and it ran 4–11 % faster than the model's
    // pick at N ≥ 28672 (the partial-tile cost falls as the tile fills; not modelled), so the
    // model starts at M = 257 there.
    {192, 6144, kAnyN, GemmKernel::kSm90Wide,
     "the tile model's pick (kSm90Int8Tiles) — 136×28672×4096 73.0 → 61.1 µs, 144×57344×8192 "
     "280.3 → 214.3, 160×57344×8192 263.4 → 212.3",
     Waves::kAny, kSm90Int8Model},
    // With a workspace, M = 193–256 at N = 4225–5632 on 132 SMs runs the swapped stream-K tiles in
    // token thirds before these rules (swapped_stream_k_takes, table_kernel below), except at
    // M = 248–256 where the first rule here holds.
    {256, 0, kAnyN, GemmKernel::kSm90Wide80Pairs,
     "M = 224–256 where 128×80 tiles fill five sixths of one wave or more (N = 4321–5280 on 132 SMs): "
     "the token pairs of the next rule on the narrower tile — H200, against 128×128 ping-pong (no "
     "workspace) 0.77–1.00×, 256×4480×14336 41.0 → 31.6 µs; against the swapped stream-K token "
     "thirds at M = 256: 256×4480×14336 38.0 → 31.6 µs, 256×4800×4096 16.0 → 14.4, 256×5280×8192 "
     "26.3 → 22.5 (bench/results/gemm-h200-wide80-pairs-sweep-2b2c471.json)",
     Waves::kWide80PairsFill},
    {256, 0, kAnyN, GemmKernel::kSm90Wide96Pairs,
     "M = 232–256 where 128×96 tiles fill nine tenths of one wave or more (N = 5665–6336 on 132 SMs): "
     "the two token tiles of each weight tile share it in a cluster of 2×1 — H200, against 128×128 "
     "ping-pong in the same call: 256×6144×4096 17.6 → 15.6 µs, 256×6144×14336 41.9 → 36.5, "
     "256×6336×8192 27.8 → 25.2, 232×5760×4096 17.5 → 15.4; at M = 224 0.94–1.02× "
     "(bench/results/gemm-h200-wide96-pairs-exp-*.json, gemm-h200-wide96-pairs-dispatch-6fd29b5.json)",
     Waves::kWide96PairsFill},
    {256, 0, 6143, GemmKernel::kSm90Narrow2x1,
     "M = 193–256, N < 6144 where 64×128 tiles do not need one to one and a half waves (N ≤ 4224 on "
     "132 SMs): four 64-row tiles sharing the weight tile by multicast in pairs (128 CTAs at N = "
     "4096; 128×128 gives 64) — 256×4096×14336 42.8 → 34.1 µs, 256×4096×11008 34.3 → 28.1, "
     "224×4096×14336 44.6 → 39.1, 256×4096×4096 17.3 → 14.7; 200×… 1–3 % faster. At N = 5120 (160 "
     "tiles: 1.2 waves) 128×128 ping-pong (below) took 0.78–0.96× their time — H200, forced in one "
     "call: 200×5120×8192 34.9 → 27.4, 224×… 33.5 → 27.3, 256×5120×4096 18.4 → 17.6 "
     "(bench/results/gemm-h200-m193-256-one-wave-sweep.json)",
     Waves::kNarrowNotRagged},
    {256, 0, kAnyN, GemmKernel::kSm90Wide192,
     "M ≤ 256 where 128×128 tiles need 1–1.5 waves (N = 10240: 160 tiles on 132 SMs): 128×192 tiles "
     "in one wave (108 CTAs at N = 10240), as for precise fp8 — H200: 192×10240×8192 47.0 → 38.1 µs, "
     "256×… 47.1 → 38.3 against 128×256 (80 CTAs; bench/results/gemm-h200-sweep-wide192-07bdea6.json), "
     "which had replaced 128×128 (H100: 129×10240×8192 66.0 → 48.1, 256×… 53.4 → 49.0)",
     Waves::kSquareRagged},
    {256, 0, kAnyN, GemmKernel::kSm90Square,
     "M = 129–256 otherwise: 128×128 ping-pong was fastest at M = 256 on every (N, K) — "
     "256×8192×8192 46.5 → 34.5 µs, 256×28672×4096 62.8 → 59.3 against 128×256 "
     "(bench/results/gemm-h100-sweep.json)"},
    // With a workspace, M = 257–768 where its token tiles fit one wave runs the swapped stream-K
    // tiles before this rule (swapped_token_tiles_take, table_kernel below).
    // M > 256: the tile model. Before it, 128×128 ping-pong up to M = 512 and
    // where 128×256 tiles left a ragged last wave up to M = 1024, else 128×256
    // with cluster 2×1 (the kernel without an SM count).
    {kAnyM, 0, kAnyN, GemmKernel::kSm90Wide,
     "the tile model's pick (kSm90Int8Tiles): 128×256 with cluster 2×1 or 1×2, or 128×128 ping-pong, "
     "whichever fills the waves best for its speed — 384×10240×8192 95.5 → 54.3 µs (1×2), "
     "448×57344×8192 461.5 → 326.1 (128×256), 768×8192×28672 288.0 → 243.3 (128×128)",
     Waves::kAny, kSm90Int8Model},
};

// Precise fp8: "wide" is 128×256 cooperative (int8's tile), "wide192"
// 128×192 and "coop128" 128×128 cooperative, "square" 64×128 ping-pong
// (cluster 2×1), "narrow" 64×128 ping-pong (cluster 1×2), "small" 64×64
// ping-pong, all promoting under the next wgmma (sm90_configs.h). From
// `qgemm bench gemm --sweep` on the H100: M = 384 … 4096 with the sliced
// promotion (bench/results/gemm-h100-sweep-fp8-sliced.json), M ≤ 256 on the
// smaller weights (gemm-h100-sweep-small-m.json) and earlier M = 256 … 8192
// (gemm-h100-sweep-fp8.json).
constexpr GemmRule kSm90Fp8Rules[] = {
    {8, 0, kAnyN, GemmKernel::kSm90SkinnyStream, "M ≤ 8 (decode), as for int8"},
    {16, 0, kAnyN, GemmKernel::kSm90DecodeWgmma,
     "M = 9–16 where its 64-row tiles number from 0.9 to 2 per SM (N = 7604–16896 on 132 SMs): the "
     "e4m3 wgmma converts nothing, where the skinny kernel's mma.sync runs F2FP on both operands, as "
     "long as the weight's stream at M = 16. H200, against kSm90SkinnyStream forced in one call, M = 9 / "
     "12 / 16, µs: 10240×8192 31.4 / 31.3 / 32.0 → 29.1 / 29.1 / 29.9, 14336×4096 23.8 / 24.4 / 24.6 → "
     "21.9 / 22.2 / 22.4, 8192×28672 64.3 / 65.4 / 66.6 → 62.7 / 63.0 / 63.4, 8192×8192 24.2 / 24.3 / "
     "25.0 → 24.0 / 24.2 / 24.5 (decode_wgmma_plan.h says why not elsewhere)",
     Waves::kDecodeWgmmaFillsTheGpu},
    {16, 0, kAnyN, GemmKernel::kSm90SkinnyStream, "M ≤ 16 (decode), as for int8"},
    {64, 0, kAnyN, GemmKernel::kSm90Thin48,
     "M ≤ 64 where 64×48 tiles in clusters of 1×4 are all co-resident, as for int8 — H200: "
     "24×4096×14336 27.6 → 23.6 µs, 24×4096×11008 23.2 → 19.5, 64×4096×14336 23.8 → 23.0",
     Waves::kThin48Fits},
    {32, 6144, kAnyN, GemmKernel::kSm90Swapped,
     "M = 17–32, N ≥ 6144 where its tiles fill their waves, as for int8 — H200: 24×8192×28672 74.4 → "
     "61.2 µs, 24×8192×8192 26.1 → 23.2, 32×57344×8192 131.2 → 117.9, 24×6144×4096 15.2 → 13.9; "
     "32×28672×4096 37.6 → 37.3",
     Waves::kSwappedFills},
    {64, 0, kAnyN, GemmKernel::kSm90Small1x2,
     "M ≤ 64 where 64×64 tiles fit one wave, as for int8: 64×4096×14336 33.0 → 28.9 µs, "
     "64×8192×8192 31.9 → 30.3",
     Waves::kSmallOneWave},
    {64, 0, kAnyN, GemmKernel::kSm90Narrow, "bandwidth-bound: 64×128 ping-pong, as for int8"},
    {128, 0, kAnyN, GemmKernel::kSm90Wide80x4,
     "M = 65–128 where 128×80 tiles in clusters of 1×4 are all co-resident and 64×128 tiles need "
     "more than one wave, as for int8 — H200: 72×9216×8192 35.6 → 28.0 µs, 72×9216×4096 21.5 → "
     "18.0",
     Waves::kWide80x4Fits},
    {128, 0, kAnyN, GemmKernel::kSm90Wide96x4,
     "M = 65–128 where 128×96 tiles in clusters of 1×4 are all co-resident and 128×80 ones are not, "
     "64×128 tiles needing more than one wave, as for int8 — H200: 72×10240×8192 37.0 → 29.2 µs, "
     "128×10240×8192 29.9 → 29.3",
     Waves::kWide96x4Fits},
    {128, 0, kAnyN, GemmKernel::kSm90Wide80,
     "M = 65–128 where 128×80 tiles fill one wave and 64×128 tiles need more, as for int8 — H200: "
     "128×10240×8192 36.9 → 29.4 µs, 128×9216×8192 36.3 → 28.2, 80×10240×8192 40.1 → 35.4",
     Waves::kWide80OneWave},
    {128, 0, kAnyN, GemmKernel::kSm90Wide96,
     "M = 65–128 where 128×96 tiles fill one wave and 128×80 and 64×128 tiles need more, as for "
     "int8 — H200: 128×11008×4096 22.4 → 19.8 µs, 128×12288×8192 37.5 → 33.4, 80×11008×4096 "
     "23.9 → 22.4",
     Waves::kWide96OneWave},
    {96, 28672, kAnyN, GemmKernel::kSm90Wide1x2,
     "fast DRAM, M = 65–96, N ≥ 28672: 128×256 (cluster 1×2), as for int8 — H200: 72×57344×8192 "
     "144.6 → 130.1 µs, 96×… 135.8 → 130.0, 80×28672×4096 42.5 → 40.2",
     Waves::kAny, {}, kFastDramOnly},
    {88, 0, 6143, GemmKernel::kSm90Square,
     "fast DRAM, M = 65–88, N < 6144: 64×128 tiles sharing B, as for int8 — H200: 72×4096×14336 "
     "34.8 → 30.8 µs, 66×4096×4096 15.3 → 14.3",
     Waves::kAny, {}, kFastDramOnly},
    {128, 0, 6143, GemmKernel::kSm90Small2x1,
     "M = 65–128, N < 6144: 64×64 tiles sharing B, as for int8 — 128×4096×4096 15.4 → 12.7 µs, "
     "128×4096×14336 35.0 → 28.4, 96×4096×14336 42.7 → 31.9"},
    {128, 0, kAnyN, GemmKernel::kSm90Square,
     "M = 65–128, N ≥ 6144: 64×128 tiles sharing B (cluster 2×1) — 96×6144×4096 19.9 → 16.2 µs, "
     "96×28672×4096 60.9 → 50.5, 128×8192×8192 32.9 → 31.1 (64×64 was 7 % faster at 128×10240×8192 "
     "only)"},
    {192, kSwappedHalvesMinN, 6143, GemmKernel::kSm90SwappedHalves,
     "M = 129–192, N ≥ 2048 where the swapped tiles in token halves fit one wave, as for int8 — "
     "H200: 160×3072×14336 35.5 → 28.0 µs, 160×4096×14336 36.1 → 30.5 (swapped stream-K), "
     "192×4096×14336 35.7 → 31.8, 136×3072×4096 14.9 → 13.8; in clusters of 1×2 0.78–1.01× that "
     "again (136×4096×28672 62.7 → 49.0), with two whole partial sets 0.88–0.98× that again "
     "(160×2560×14336 27.6 → 24.5; sm90_configs.h, Fp8SwappedHalves); at N = 2048 (64×128 before) "
     "0.87–0.97× (136×2048×8192 19.6 → 17.0)",
     Waves::kSwappedHalvesOneWave},
    {160, 4096, 6143, GemmKernel::kSm90Swapped,
     "M = 129–160, N = 4096–6143: the swapped 64×160 tiles, as for int8 — H200: 136×4096×4096 16.7 → "
     "15.7 µs, 160×4096×8192 25.8 → 23.7, 160×4096×28672 74.9 → 62.8, 160×5120×8192 28.9 → 24.2"},
    {192, 0, 6143, GemmKernel::kSm90Narrow,
     "M = 129–192, N < 6144 where 64×128 tiles do not take 1–1.5 waves: three 64-row tiles along M, "
     "as for int8 — 129×4096×14336 50.5 → 41.6 µs, 192×4096×14336 43.1 → 39.1",
     Waves::kNarrowNotRagged},
    {192, 0, 6143, GemmKernel::kSm90Swapped,
     "M = 161–192, N = 5633–6143 on 132 SMs: the swapped 64×192 tiles in one wave, as for int8 — "
     "H200: 176×6016×4096 23.8 → 16.8 µs, 192×6016×14336 62.7 → 39.7"},
    {192, 6144, kAnyN, GemmKernel::kSm90Swapped,
     "M = 129–192, N ≥ 6144 where its tiles fill their waves, as for int8 — H200: 160×8192×8192 "
     "39.8 → 27.9 µs, 136×8192×28672 119.0 → 83.2, 160×57344×8192 195.8 → 157.0, 192×28672×4096 "
     "53.4 → 49.5, 136×6144×4096 22.3 → 18.0",
     Waves::kSwappedFills},
    // M = 129–192, N ≥ 6144: the tile model, as for int8.
    {192, 6144, kAnyN, GemmKernel::kSm90Wide,
     "the tile model's pick (kSm90Fp8Tiles) — 136×28672×4096 75.5 → 59.5 µs, 136×57344×8192 302.1 → "
     "239.8 (128×192)",
     Waves::kAny, kSm90Fp8Model},
    {256, 0, kAnyN, GemmKernel::kSm90Wide80Pairs,
     "M = 224–256 where 128×80 tiles fill five sixths of one wave or more, as for int8 — H200, against "
     "the 128×128 cooperative tile (no workspace) 0.81–0.98×, 256×4480×14336 41.2 → 33.5 µs; against "
     "the swapped stream-K token thirds at M = 256 0.94–0.98×, 256×4800×4096 16.0 → 15.1 "
     "(bench/results/gemm-h200-wide80-pairs-sweep-2b2c471.json)",
     Waves::kWide80PairsFill},
    {256, 0, kAnyN, GemmKernel::kSm90Wide96Pairs,
     "M = 232–256 where 128×96 tiles fill nine tenths of one wave or more, as for int8 — H200, against "
     "the 128×128 cooperative tile in the same call: 256×6144×8192 28.0 → 25.8 µs, 256×6144×14336 42.9 "
     "→ 39.1, 256×6336×4096 17.7 → 16.4, 232×6144×14336 42.3 → 38.8 "
     "(bench/results/gemm-h200-wide96-pairs-exp-*.json, gemm-h200-wide96-pairs-dispatch-6fd29b5.json)",
     Waves::kWide96PairsFill},
    {256, 0, kAnyN, GemmKernel::kSm90Wide192,
     "M ≤ 256 where 128×128 tiles need 1–1.5 waves (N = 10240): 128×192 tiles in one wave — "
     "129×10240×8192 67.7 → 50.8 µs, 192×… 58.4 → 46.1, 256×… 55.6 → 46.0",
     Waves::kSquareRagged},
    // With a workspace, M = 193–256 at N = 4225–5632 on 132 SMs runs the swapped stream-K tiles in
    // token thirds before these rules (swapped_stream_k_takes, table_kernel below).
    {256, 0, 6143, GemmKernel::kSm90Square,
     "N < 6144 where 64×128 tiles do not need one to one and a half waves (N ≤ 4224 on 132 SMs; "
     "N = 4096: 128 CTAs): 64×128 tiles fill more SMs (equal or faster)",
     Waves::kNarrowNotRagged},
    {256, 0, kAnyN, GemmKernel::kSm90Coop128,
     "at N ≥ 6144 the 128×128 cooperative tile was 25–35 % faster than 64×128 ping-pong at M = 256; "
     "so at N = 4225–6143, where 64×128 tiles take 1–1.5 waves: H200, forced in one call, "
     "0.72–0.87× their time (200×5120×8192 38.0 → 27.6 µs, 256×5120×4096 20.1 → 17.5; "
     "bench/results/gemm-h200-m193-256-one-wave-sweep.json)"},
    // With a workspace, M = 257–768 where its token tiles fit one wave runs the swapped stream-K
    // tiles before this rule (swapped_token_tiles_take, table_kernel below).
    // M > 256: the tile model (the kernel without an SM count: 128×256).
    {kAnyM, 0, kAnyN, GemmKernel::kSm90Wide,
     "the tile model's pick (kSm90Fp8Tiles): 128×256 with cluster 2×1 or 1×2, 128×192 or 128×128 "
     "cooperative — 8192³ 850 µs (128×256) against 907 (128×192) and 977 (128×128), 384×10240×8192 "
     "75.4 → 54.3 (1×2), 768×4096×14336 65.2 (128×192) against 76.6 and 82.4",
     Waves::kAny, kSm90Fp8Model},
};

// fp8 with fast accumulation (Fp8Accumulation::kFast, args.fp8_fast_accum)
// on sm_90 takes its kernel from kSm90Int8Rules: with one accumulator set
// fp8 runs on int8's tiles (sm90_configs.h: Fp8FastWide / Fp8FastWide192 /
// Fp8FastWide1x2 / Fp8FastSquare / Fp8FastNarrow / Fp8FastSmall* behind
// kSm90Wide / kSm90Wide192 / kSm90Wide1x2 / kSm90Square / kSm90Narrow /
// kSm90Small*) with int8's
// registers, shared-memory bytes per MAC and
// wgmma rate, so int8's measured buckets apply; sweeps
// (bench/results/gemm-h100-sweep-fp8fast.json, gemm-h100-sweep-small-m.json)
// confirmed them. This says where the chosen kernel runs precise instead
// (kFast permits the faster mode; where the precise kernel is faster, it
// runs, with its precise result):
//   - the skinny kernels (M ≤ 16; on sm_90 also kSm90SkinnyStream) have no
//     fast mode: each mma.sync m16n8k32 returns its sum to an fp32 register
//     every 32 products, finer than the precise wgmma mainloop's promotion;
//   - kSm90Narrow2x1 (M = 65–96 with N ≥ 6144, M = 193–256 with N ≤ 4224 on
//     132 SMs; on fast DRAM also M = 97–128 with N ≥ 6144 and M = 65–88 with
//     N < 6144):
//     the int8 tile has no fast fp8 variant; precise fp8 runs it as its
//     kSm90Square (64×128 ping-pong, cluster 2×1, overlapped promotion),
//     which beat every fast tile there — H100, same call: 256×4096×4096
//     14.5 µs against 16.1 (fast 64×64), 256×4096×14336 34.6 against 41.9;
//     80×10240×8192 43.4 against 51.1 (fast 64×64 cluster 2×1); H200,
//     interleaved, against the fast 64×64 cluster-2×1 tile: 100×57344×8192
//     174.8 → 132.5, 128×8192×28672 71.0 → 65.0, 72×4096×14336 34.7 → 30.8;
//   - kSm90Decode (M ≤ 16 with a workspace): built precise only; its
//     promotion once per 128-element k-tile costs nothing beside the
//     weight's stream (8 accumulator registers); the same for
//     kSm90DecodeWgmma (M = 9–16), which fast fp8 reaches through the fp8
//     table (table_kernel);
//   - kSm90Direct (outputs the TMA epilogue cannot store), kSm90Swapped
//     (M = 17–32 and 129–192), kSm90SwappedHalves and
//     kSm90SwappedHalvesStreamK (M = 129–192), kSm90SwappedStreamK (M =
//     129–768): built precise only, to keep the instantiations few.
constexpr bool fp8_fast_runs_precise(GemmKernel kernel) {
  return kernel == GemmKernel::kSkinny || kernel == GemmKernel::kSm90SkinnyStream ||
         kernel == GemmKernel::kSm90Decode || kernel == GemmKernel::kSm90DecodeWgmma ||
         kernel == GemmKernel::kSm90Narrow2x1 || kernel == GemmKernel::kSm90Direct ||
         kernel == GemmKernel::kSm90Swapped || kernel == GemmKernel::kSm90SwappedStreamK ||
         kernel == GemmKernel::kSm90SwappedHalves || kernel == GemmKernel::kSm90SwappedHalvesStreamK;
}

// The kernels with a fast-accumulation fp8 build (sm90_fp8fast_*.cu, and
// sm90_streamk_*.cu for kSm90StreamK): int8's Hopper tiles.
constexpr bool has_fp8_fast_variant(GemmKernel kernel) {
  return kernel == GemmKernel::kSm90Wide || kernel == GemmKernel::kSm90Wide192 || kernel == GemmKernel::kSm90Wide1x2 ||
         kernel == GemmKernel::kSm90Square ||
         kernel == GemmKernel::kSm90Narrow || kernel == GemmKernel::kSm90Small1x2 || kernel == GemmKernel::kSm90Small2x1 ||
         kernel == GemmKernel::kSm90StreamK || kernel == GemmKernel::kSm90Wide80 || kernel == GemmKernel::kSm90Wide96 ||
         kernel == GemmKernel::kSm90Thin48 || kernel == GemmKernel::kSm90Wide80x4 || kernel == GemmKernel::kSm90Wide96x4 ||
         kernel == GemmKernel::kSm90Wide80Pairs || kernel == GemmKernel::kSm90Wide96Pairs;
}

// The Hopper CUTLASS kernels that store D through TMA.
constexpr bool is_sm90_tma_kernel(GemmKernel kernel) {
  switch (kernel) {
    case GemmKernel::kSm90Wide:
    case GemmKernel::kSm90Square:
    case GemmKernel::kSm90Narrow:
    case GemmKernel::kSm90Small1x2:
    case GemmKernel::kSm90Small2x1:
    case GemmKernel::kSm90Narrow2x1:
    case GemmKernel::kSm90Wide192:
    case GemmKernel::kSm90Coop128:
    case GemmKernel::kSm90Wide1x2:
    case GemmKernel::kSm90StreamK:
    case GemmKernel::kSm90Wide80:
    case GemmKernel::kSm90Wide96:
    case GemmKernel::kSm90Thin48:
    case GemmKernel::kSm90Wide80x4:
    case GemmKernel::kSm90Wide96x4:
    case GemmKernel::kSm90Wide80Pairs:
    case GemmKernel::kSm90Wide96Pairs:
    case GemmKernel::kSm90Swapped:
    case GemmKernel::kSm90SwappedStreamK:
    case GemmKernel::kSm90SwappedHalves:
    case GemmKernel::kSm90SwappedHalvesStreamK:
      return true;
    default:
      return false;
  }
}

// The kernel that runs where the table's CUTLASS kernel cannot take the
// output with its 16-byte accesses (N or ldo not a multiple of 8, an output
// base off a 16-byte line) while A and B still load with them: on Hopper the
// same mainloop with narrow stores (docs/gemm.md, "Outputs TMA cannot
// store"; design 014). The mma.sync tiles have no such twin (CUTLASS 2.x's
// epilogue for int32 accumulators takes only 8- or 16-element accesses), so
// their problems keep the fallback; the skinny kernel and the fallback take
// any output already.
constexpr GemmKernel unaligned_output_kernel(GemmKernel chosen) {
  if (chosen == GemmKernel::kSm90Decode) return GemmKernel::kSm90SkinnyStream;  // M ≤ 16: the other decode kernel
  return is_sm90_tma_kernel(chosen) ? GemmKernel::kSm90Direct : chosen;
}

// The kernel that takes the call where the table's kernel declines it at run
// time for what the table does not see: the swapped decode kernel and the
// swapped stream-K tiles a workspace CUTLASS finds too small, the fp8 wgmma
// decode kernel a K or N beyond its 32-bit TMA coordinates. Each twin needs
// no workspace and runs fp8 precise as its kernel does. Any other kernel is
// its own (none): what it declines goes to the fallback.
constexpr GemmKernel declined_kernel_twin(GemmKernel chosen) {
  switch (chosen) {
    case GemmKernel::kSm90Decode:
    case GemmKernel::kSm90DecodeWgmma: return GemmKernel::kSm90SkinnyStream;  // the other decode kernel
    // The same tiles whole; M = 193–768 (three to eight token tiles) has
    // none, and needs none: the workspace the table asks for
    // (stream_k_workspace_bytes) holds two waves of 128×256 tiles, more than
    // one wave of 128×72–96 tiles, split or not.
    case GemmKernel::kSm90SwappedStreamK: return GemmKernel::kSm90Swapped;
    case GemmKernel::kSm90SwappedHalvesStreamK: return GemmKernel::kSm90SwappedHalves;  // 64-channel halves
    default: return chosen;
  }
}

// Ampere / Ada, int8 (sm_80 code; also what an sm_89 GPU runs for int8).
constexpr GemmRule kSm80Int8Rules[] = {
    {16, 0, kAnyN, GemmKernel::kSkinny, "weight-bandwidth-bound (see sm90)"},
    {128, 0, kAnyN, GemmKernel::kSm80Small, "64×128 tiles: twice the CTAs of 128×128 at small M"},
    {kAnyM, 0, kAnyN, GemmKernel::kSm80Large, "128×128×64, 3 stages: CUTLASS's best int8 tile on A100"},
};

// Ada, fp8 (sm_89): the int8 rules' kernels built for e4m3 (mma.sync
// m16n8k32 has the same shape, operand bytes and, on Ada, the same dense
// rate for e4m3 as for int8, so int8's choices carry over; not measured on
// an Ada GPU, none being at hand).
constexpr GemmRule kSm89Fp8Rules[] = {
    {16, 0, kAnyN, GemmKernel::kSkinny, "mma.sync e4m3, weight-bandwidth-bound (as int8)"},
    {128, 0, kAnyN, GemmKernel::kSm80Small, "64×128 tiles: twice the CTAs of 128×128 at small M (as int8)"},
    {kAnyM, 0, kAnyN, GemmKernel::kSm80Large, "128×128×64, 3 stages (int8's tile: same bytes per k step)"},
};

// The table's kernel for an M×N×K problem on a GPU of compute capability
// `arch` (major · 10 + minor) with `sm_count` SMs and `dram_gbps` of peak DRAM
// bandwidth: on Hopper at M = 257–384 first the token halves' kernel in four
// token tiles where those fill one wave (swapped_halves_quarters_take, with
// a workspace or without); else the first rule that holds (pick_rule) or its
// tile model's pick, then, where the call brings a workspace of at least
// stream_k_workspace_bytes, the swapped decode kernel at M ≤ 16 on a large
// weight (decode_takes), at M = 129–192 on Hopper the token halves' stream-K
// twin (swapped_halves_stream_k_takes) or the swapped stream-K tiles
// (swapped_stream_k_takes; at M = 193–768 those in three to eight token
// tiles), or
// stream-K where the rule's model takes it (rule_takes_stream_k). No rule:
// the fallback. This is the choice before the call's layout is looked at:
// scaled_mm_cuda then sends outputs the TMA epilogue cannot store to the
// direct-store twin (fit_to_layout), and fp8 with fast accumulation runs
// precise where fp8_fast_runs_precise says. Host code: `qgemm dispatch`
// prints it for any GPU without one.
template <size_t N>
constexpr GemmKernel table_kernel(const GemmRule (&rules)[N], int64_t m, int64_t n, int64_t k, int sm_count,
                                  DramRegime regime, bool workspace) {
  const GemmRule* rule = pick_rule(rules, m, n, sm_count, regime);
  if (rule == nullptr) return GemmKernel::kFallback;
  const GemmKernel kernel = rule_kernel(*rule, m, n, sm_count, regime);
  if (workspace && kernel == GemmKernel::kSm90SkinnyStream && decode_takes(m, n, k, sm_count)) {
    return GemmKernel::kSm90Decode;
  }
  return workspace && rule_takes_stream_k(*rule, m, n, k, sm_count, regime) ? GemmKernel::kSm90StreamK : kernel;
}
// `int8`: int8 inputs, else fp8 e4m3; `fp8_fast`: fp8 with fast accumulation,
// which on Hopper reads int8's table (its kernels are int8's tiles) above
// M = 16, and the fp8 table at M ≤ 16, where no decode kernel has a fast
// mode (fp8_fast_runs_precise) and the fp8 wgmma one is fp8's own.
constexpr GemmKernel table_kernel(int arch, bool int8, bool fp8_fast, int64_t m, int64_t n, int64_t k, int sm_count,
                                  int64_t dram_gbps, bool workspace) {
  const DramRegime regime = dram_regime(k, dram_gbps, sm_count);
  if (arch / 10 == 9) {
    if (swapped_halves_quarters_take(m, n, k, sm_count, int8)) return GemmKernel::kSm90SwappedHalves;
    if (workspace && swapped_halves_stream_k_takes(m, n, k, sm_count, int8)) {
      return GemmKernel::kSm90SwappedHalvesStreamK;
    }
    if (workspace && swapped_stream_k_takes(m, n, k, sm_count)) return GemmKernel::kSm90SwappedStreamK;
    return int8 || (fp8_fast && m > 16) ? table_kernel(kSm90Int8Rules, m, n, k, sm_count, regime, workspace)
                                        : table_kernel(kSm90Fp8Rules, m, n, k, sm_count, regime, workspace);
  }
  if (int8 && arch >= 80) return table_kernel(kSm80Int8Rules, m, n, k, sm_count, regime, workspace);
  if (!int8 && arch >= 89) return table_kernel(kSm89Fp8Rules, m, n, k, sm_count, regime, workspace);
  return GemmKernel::kFallback;
}

}  // namespace qgemm::detail
