// The dispatch tables (src/gemm/cuda/dispatch_table.h) as data, on
// every build (no GPU needed): for an H100's 132 SMs, the shapes behind each
// rule's measurement pick the kernel the rule names, fp8 fast accumulation
// runs precise exactly where fp8_fast_runs_precise says, and the wave
// predicates draw their lines where their comments say.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "gemm/cuda/dispatch_table.h"
#include "gemm/cuda/skinny_stream_launch.h"
#include "gemm/cuda/sm90_tile_swizzle.h"

namespace qgemm {
namespace {

using detail::GemmKernel;
using detail::GemmRule;

constexpr int kH100Sms = 132;

struct Pick {
  int64_t m, n;
  GemmKernel kernel;
  bool precise = false;  // fp8 fast accumulation only: the precise kernel runs
};

// Every kernel `rule` can run: its own and its tile model's candidates.
std::vector<GemmKernel> kernels_of(const GemmRule& rule) {
  std::vector<GemmKernel> kernels{rule.kernel};
  for (size_t i = 0; i < rule.model.count; ++i) kernels.push_back(rule.model.candidates[i].kernel);
  return kernels;
}

// `fast`: the picks are fp8 fast accumulation's (int8's table read for fp8,
// precise where fp8_fast_runs_precise says), and `precise` is checked too.
// `regime`: the DRAM the picks are for (default: an H100's).
template <size_t N>
void expect_picks(const GemmRule (&rules)[N], std::initializer_list<Pick> picks, const char* table,
                  bool fast = false, detail::DramRegime regime = detail::DramRegime::kDefault) {
  for (const Pick& p : picks) {
    const GemmRule* rule = detail::pick_rule(rules, p.m, p.n, kH100Sms, regime);
    ASSERT_NE(rule, nullptr) << table << " " << p.m << "x" << p.n;
    const GemmKernel kernel = detail::rule_kernel(*rule, p.m, p.n, kH100Sms, regime);
    EXPECT_EQ(kernel, p.kernel) << table << " " << p.m << "x" << p.n << ": " << rule->why;
    if (fast) EXPECT_EQ(detail::fp8_fast_runs_precise(kernel), p.precise) << p.m << "x" << p.n;
  }
}

TEST(GemmDispatchTable, WavePredicates) {
  // 128×96 tiles in token pairs: M = 232–256, 2·⌈N/96⌉ in (0.9 · 132, 132].
  EXPECT_TRUE(detail::wide96_pairs_fill_one_wave(256, 6144, kH100Sms));
  EXPECT_TRUE(detail::wide96_pairs_fill_one_wave(232, 5665, kH100Sms));
  EXPECT_TRUE(detail::wide96_pairs_fill_one_wave(256, 6336, kH100Sms));
  EXPECT_FALSE(detail::wide96_pairs_fill_one_wave(256, 5664, kH100Sms));
  EXPECT_FALSE(detail::wide96_pairs_fill_one_wave(256, 6337, kH100Sms));
  EXPECT_FALSE(detail::wide96_pairs_fill_one_wave(231, 6144, kH100Sms));
  EXPECT_FALSE(detail::wide96_pairs_fill_one_wave(257, 6144, kH100Sms));  // three token tiles
  // 128×80 tiles in token pairs: M = 224–256, 2·⌈N/80⌉ in [5/6 · 132, 132].
  EXPECT_TRUE(detail::wide80_pairs_fill_one_wave(256, 4321, kH100Sms));   // 110 tiles: five sixths
  EXPECT_TRUE(detail::wide80_pairs_fill_one_wave(224, 4800, kH100Sms));   // 120
  EXPECT_TRUE(detail::wide80_pairs_fill_one_wave(256, 5280, kH100Sms));   // 132: one wave
  EXPECT_FALSE(detail::wide80_pairs_fill_one_wave(256, 4320, kH100Sms));  // 108
  EXPECT_FALSE(detail::wide80_pairs_fill_one_wave(256, 5281, kH100Sms));  // 134: two waves
  EXPECT_FALSE(detail::wide80_pairs_fill_one_wave(223, 4800, kH100Sms));  // the second token tile under 96 rows
  EXPECT_FALSE(detail::wide80_pairs_fill_one_wave(257, 4800, kH100Sms));  // three token tiles
  // 64×64 tiles in one wave: M ≤ 64 up to N = 132·64 = 8448.
  EXPECT_TRUE(detail::small_tiles_fit_one_wave(64, 8448, kH100Sms));
  EXPECT_FALSE(detail::small_tiles_fit_one_wave(64, 8464, kH100Sms));
  EXPECT_FALSE(detail::small_tiles_fit_one_wave(65, 4224 + 64, kH100Sms));
  // 128×128 tiles in 1–1.5 waves: 160 at 256×10240 yes; 128 (one wave) and
  // 448 (3.4 waves) no.
  EXPECT_TRUE(detail::square_tiles_ragged(256, 10240, kH100Sms));
  EXPECT_TRUE(detail::square_tiles_ragged(129, 10240, kH100Sms));
  EXPECT_FALSE(detail::square_tiles_ragged(256, 8192, kH100Sms));
  EXPECT_FALSE(detail::square_tiles_ragged(256, 28672, kH100Sms));
  EXPECT_FALSE(detail::square_tiles_ragged(256, 12800, kH100Sms));  // 200 tiles: ≥ 1.5 waves
  // 64×128 tiles in 1–1.5 waves: 2 × 80 = 160 at 128×10240 yes; 128 (one
  // wave), 200 (1.5 waves) and 448 no.
  EXPECT_TRUE(detail::narrow_tiles_ragged(128, 10240, kH100Sms));
  EXPECT_TRUE(detail::narrow_tiles_ragged(97, 10240, kH100Sms));
  EXPECT_FALSE(detail::narrow_tiles_ragged(128, 8192, kH100Sms));
  EXPECT_FALSE(detail::narrow_tiles_ragged(128, 12800, kH100Sms));
  EXPECT_FALSE(detail::narrow_tiles_ragged(128, 28672, kH100Sms));
  // The Hopper tile model (M > 256). 384×10240: 3 × 40 tiles of 128×256 run
  // as 4 × 40 = 160 with cluster 2×1 (two waves), 3 × 40 = 120 with 1×2
  // (one): 1×2. 384×8192: 4 × 32 = 128, one wave either way: 2×1 (cheaper per
  // MAC). 768×8192: 6 × 32 = 192 wide tiles (two waves), 384 128×128 tiles
  // (three waves of half the area at 1.125×) and 6 × 43 = 258 128×192 tiles
  // (two waves of 3/4 the area at 1.05×): 128×192, for int8 as for precise
  // fp8. 8192×8192: 128×256, cluster 2×1.
  using detail::kSm90Fp8Model;
  using detail::kSm90Int8Model;
  using detail::kSm90Int8Tiles;
  using detail::modelled_tile;
  EXPECT_EQ(modelled_tile(kSm90Int8Model, 384, 10240, kH100Sms), GemmKernel::kSm90Wide1x2);
  EXPECT_EQ(modelled_tile(kSm90Fp8Model, 384, 10240, kH100Sms), GemmKernel::kSm90Wide1x2);
  EXPECT_EQ(modelled_tile(kSm90Int8Model, 384, 8192, kH100Sms), GemmKernel::kSm90Wide);
  EXPECT_EQ(modelled_tile(kSm90Fp8Model, 384, 8192, kH100Sms), GemmKernel::kSm90Wide);
  EXPECT_EQ(modelled_tile(kSm90Int8Model, 768, 8192, kH100Sms), GemmKernel::kSm90Wide192);
  EXPECT_EQ(modelled_tile(kSm90Fp8Model, 768, 8192, kH100Sms), GemmKernel::kSm90Wide192);
  EXPECT_EQ(modelled_tile(kSm90Fp8Model, 512, 4096, kH100Sms), GemmKernel::kSm90Coop128);
  EXPECT_EQ(modelled_tile(kSm90Int8Model, 8192, 8192, kH100Sms), GemmKernel::kSm90Wide);
  EXPECT_EQ(modelled_tile(kSm90Fp8Model, 8192, 8192, kH100Sms), GemmKernel::kSm90Wide);
  // The ping-pong tile's cost grows with the empty rows of its last M tile:
  // at 504×10240 (8 empty) it models faster than 128×256 (measured 71 µs
  // against 91), at 448×10240 (64 empty) not (89.5 against 90.8: equal).
  // 128×192 (4 × 54 = 216 tiles, two waves) models faster than both.
  const detail::TileCandidate& wide = kSm90Int8Tiles[0];
  const detail::TileCandidate& square = kSm90Int8Tiles[2];
  const detail::TileCandidate& wide192 = kSm90Int8Tiles[3];
  EXPECT_LT(detail::modelled_time(square, 504, 10240, kH100Sms), detail::modelled_time(wide, 504, 10240, kH100Sms));
  EXPECT_GT(detail::modelled_time(square, 448, 10240, kH100Sms), detail::modelled_time(wide, 448, 10240, kH100Sms));
  EXPECT_EQ(detail::modelled_time(square, 504, 10240, kH100Sms), 3 * 128 * (128 * 1125 + 8 * 560));
  EXPECT_EQ(detail::modelled_time(wide192, 504, 10240, kH100Sms), 2 * 192 * (128 * 1050 + 8 * 30));
  EXPECT_EQ(modelled_tile(kSm90Int8Model, 504, 10240, kH100Sms), GemmKernel::kSm90Wide192);
  // 128×192's rows past M: at 136×57344 (2 × 299 = 598 tiles, five waves,
  // 120 rows past M) 128×256 stays (2 × 224 = 448, four waves; measured on
  // the H200 201.5 µs against 231.1); at 136×8192 (one wave of 86) 128×192
  // takes it from 128×128 (39.1 against 43.9).
  EXPECT_EQ(modelled_tile(kSm90Int8Model, 136, 57344, kH100Sms), GemmKernel::kSm90Wide);
  EXPECT_EQ(modelled_tile(kSm90Int8Model, 136, 8192, kH100Sms), GemmKernel::kSm90Wide192);
  // An even M-tile count and an odd N-tile count (1024×11008: 8 × 43): 1×2
  // rounds N up to 44 tiles and gains nothing; 2×1, cheaper per MAC.
  EXPECT_EQ(modelled_tile(kSm90Int8Model, 1024, 11008, kH100Sms), GemmKernel::kSm90Wide);
  EXPECT_EQ(detail::modelled_time(kSm90Int8Tiles[1], 384, 10240, kH100Sms), 128 * 256 * 1020);
  EXPECT_EQ(detail::modelled_time(kSm90Int8Tiles[0], 384, 10240, kH100Sms), 2 * 128 * 256 * 1000);
  // No SMs reported: no wave condition holds.
  EXPECT_FALSE(detail::small_tiles_fit_one_wave(2, 16, 0));
  EXPECT_EQ(detail::modelled_tile(detail::kSm90Int8Model, 1024, 6144, 0), GemmKernel::kSm90Wide);  // no division by 0
  // Without an SM count a model rule runs its own kernel.
  const detail::GemmRule& model_rule = detail::kSm90Int8Rules[std::size(detail::kSm90Int8Rules) - 1];
  EXPECT_EQ(detail::rule_kernel(model_rule, 384, 10240, 0), GemmKernel::kSm90Wide);
  EXPECT_EQ(detail::rule_kernel(model_rule, 384, 10240, kH100Sms), GemmKernel::kSm90Wide1x2);
  // 128×80 tiles (clusters of 1×2) in one wave where 64×128 tiles are not:
  // M = 65–128, N = 8449–10560 on 132 SMs.
  EXPECT_TRUE(detail::wide80_fills_one_wave(128, 10240, kH100Sms));
  EXPECT_TRUE(detail::wide80_fills_one_wave(65, 8449, kH100Sms));
  EXPECT_TRUE(detail::wide80_fills_one_wave(65, 10560, kH100Sms));
  EXPECT_FALSE(detail::wide80_fills_one_wave(128, 8448, kH100Sms));   // 132 tiles of 64×128: one wave
  EXPECT_FALSE(detail::wide80_fills_one_wave(128, 10561, kH100Sms));  // 133 of 128×80, 134 cluster slots
  EXPECT_FALSE(detail::wide80_fills_one_wave(129, 10240, kH100Sms));  // two M tiles: 256 slots
  // 128×96 tiles in one wave where 128×80 and 64×128 tiles are not:
  // M = 65–128, N = 10561–12672.
  EXPECT_TRUE(detail::wide96_fills_one_wave(128, 11008, kH100Sms));
  EXPECT_TRUE(detail::wide96_fills_one_wave(65, 10561, kH100Sms));
  EXPECT_TRUE(detail::wide96_fills_one_wave(128, 12672, kH100Sms));
  EXPECT_FALSE(detail::wide96_fills_one_wave(128, 10560, kH100Sms));  // 128×80 fits: kWide80OneWave
  EXPECT_FALSE(detail::wide96_fills_one_wave(128, 12673, kH100Sms));  // 133 of 128×96
  EXPECT_FALSE(detail::wide96_fills_one_wave(256, 5120, kH100Sms));   // two M tiles: 108 slots, but
                                                                       // 128×80 fits too (128)
  // Clusters of four: at most SMs − 16 slots (132 − 16 = 116), tiles
  // rounded up to whole clusters along N.
  EXPECT_EQ(detail::cluster_slots(64, 4096, 64, 48, 4), 88);  // 85.3 tiles → 22 clusters
  EXPECT_EQ(detail::cluster_slots(100, 9216, 128, 80, 4), 116);
  EXPECT_EQ(detail::cluster_slots(129, 4096, 64, 48, 4), 3 * 88);
  EXPECT_TRUE(detail::quad_clusters_fit(116, kH100Sms));
  EXPECT_FALSE(detail::quad_clusters_fit(120, kH100Sms));
  EXPECT_FALSE(detail::quad_clusters_fit(4, 16));  // no SMs left beside the idle pairs
  EXPECT_TRUE(detail::thin48_fits(1, 1, kH100Sms));
  EXPECT_TRUE(detail::thin48_fits(64, 5568, kH100Sms));
  EXPECT_FALSE(detail::thin48_fits(64, 5569, kH100Sms));  // 117 tiles → 120 slots
  EXPECT_FALSE(detail::thin48_fits(65, 4096, kH100Sms));  // two M tiles: 176 slots
  EXPECT_FALSE(detail::thin48_fits(64, 4096, 0));         // no SM count
  // 128×80 in fours: inside the 1×2 tile's band (64×128 tiles past one wave).
  EXPECT_TRUE(detail::wide80x4_fits(65, 8449, kH100Sms));
  EXPECT_TRUE(detail::wide80x4_fits(128, 9280, kH100Sms));
  EXPECT_FALSE(detail::wide80x4_fits(128, 9281, kH100Sms));  // 117 tiles → 120 slots
  EXPECT_FALSE(detail::wide80x4_fits(128, 8448, kH100Sms));  // 64×128 tiles fit one wave
  EXPECT_FALSE(detail::wide80x4_fits(129, 8704, kH100Sms));  // two M tiles
  // 128×96 in fours: where 128×80 in fours no longer fits.
  EXPECT_TRUE(detail::wide96x4_fits(65, 9281, kH100Sms));    // 97 tiles → 100 slots
  EXPECT_TRUE(detail::wide96x4_fits(128, 10240, kH100Sms));  // 108
  EXPECT_TRUE(detail::wide96x4_fits(128, 11136, kH100Sms));  // 116
  EXPECT_FALSE(detail::wide96x4_fits(128, 11137, kH100Sms));  // 120
  EXPECT_FALSE(detail::wide96x4_fits(128, 9280, kH100Sms));   // 128×80 in fours fits
  EXPECT_FALSE(detail::wide96x4_fits(129, 10240, kH100Sms));  // two M tiles
}

// Stream-K's modelled time and where the tile-model rules take it (with a
// workspace). 640×8192×28672 (224 k-tiles): 5 × 32 = 160 tiles of 128×256,
// one full wave of 132 and 28 more — whole tiles take 2 waves (448 k-tiles
// per SM); stream-K splits all 160 over 132 CTAs (ceil(160·224 / 132) =
// 272, plus the fixup, 35 × 160 / 132 → 43): stream-K. 8192³: 2048 tiles, 15 full waves and a
// partial one of 68 (92 % of whole-tile time already used): whole tiles.
// 4096³ (32 k-tiles): the fixup outweighs the half-empty last wave.
TEST(GemmDispatchTable, Sm90StreamK) {
  using detail::kSm90Int8StreamK;
  using detail::stream_k_time;
  const int64_t fixup = kSm90Int8StreamK.fixup_k_tiles;
  const int64_t tile = 128 * 256 * kSm90Int8StreamK.tile.cost;
  EXPECT_EQ(stream_k_time(kSm90Int8StreamK, 640, 8192, 28672, kH100Sms), tile * (272 + (fixup * 160 + 131) / 132));
  // Whole waves, or too few k-tiles to split: whole tiles, no fixup.
  EXPECT_EQ(stream_k_time(kSm90Int8StreamK, 256, 16896, 8192, kH100Sms), tile * 64);  // 2 × 66 = 132 tiles
  EXPECT_EQ(stream_k_time(kSm90Int8StreamK, 136, 4096, 1024, kH100Sms), tile * 8);   // 8 k-tiles
  // Few k-tiles in all: fewer CTAs, each at least 8 k-tiles (16 tiles × 16 / 8 = 32 CTAs).
  EXPECT_EQ(stream_k_time(kSm90Int8StreamK, 24, 4096, 2048, kH100Sms), tile * (8 + fixup));
  EXPECT_GT(stream_k_time(kSm90Int8StreamK, 640, 8192, 28672, 0), 0);  // no division by 0

  const detail::GemmRule& int8_model = detail::kSm90Int8Rules[std::size(detail::kSm90Int8Rules) - 1];
  const detail::GemmRule& fp8_model = detail::kSm90Fp8Rules[std::size(detail::kSm90Fp8Rules) - 1];
  EXPECT_TRUE(detail::rule_takes_stream_k(int8_model, 640, 8192, 28672, kH100Sms));
  EXPECT_TRUE(detail::rule_takes_stream_k(fp8_model, 640, 8192, 28672, kH100Sms));
  EXPECT_FALSE(detail::rule_takes_stream_k(int8_model, 8192, 8192, 8192, kH100Sms));
  EXPECT_FALSE(detail::rule_takes_stream_k(int8_model, 4096, 4096, 4096, kH100Sms));
  EXPECT_FALSE(detail::rule_takes_stream_k(int8_model, 640, 8192, 28672, 0));  // no SM count
  // Rules without a tile model never take it.
  EXPECT_FALSE(detail::rule_takes_stream_k(detail::kSm90Int8Rules[0], 16, 8192, 28672, kH100Sms));
  // int8's 128×192 is not weighed against stream-K (TileCandidate::
  // stream_k_rival): at 593×8192×14336 it is the fastest whole tile in the
  // model and models faster than stream-K, yet stream-K runs (measured on
  // the H200 113.1 µs against 135.2), as before the tile existed.
  using detail::DramRegime;
  EXPECT_EQ(detail::fastest_tile(int8_model.model, 593, 8192, kH100Sms, DramRegime::kFast).kernel,
            GemmKernel::kSm90Wide192);
  EXPECT_LT(detail::modelled_time(detail::kSm90Int8Tiles[3], 593, 8192, kH100Sms, DramRegime::kFast) * 112,
            stream_k_time(kSm90Int8StreamK, 593, 8192, 14336, kH100Sms));
  EXPECT_TRUE(detail::rule_takes_stream_k(int8_model, 593, 8192, 14336, kH100Sms, DramRegime::kFast));
  EXPECT_EQ(detail::table_kernel(90, true, false, 593, 8192, 14336, kH100Sms, 4814, true), GemmKernel::kSm90StreamK);
  EXPECT_EQ(detail::table_kernel(90, true, false, 593, 8192, 14336, kH100Sms, 4814, false), GemmKernel::kSm90Wide192);
}

// The DRAM regime a call's tile costs come from (an H200's DRAM is fast per
// SM, an H100's is not; K ≤ 4096 is short).
TEST(GemmDispatchTable, DramRegime) {
  using detail::DramRegime;
  using detail::dram_regime;
  EXPECT_EQ(dram_regime(4096, 4814, kH100Sms), DramRegime::kFastShortK);  // H200
  EXPECT_EQ(dram_regime(2048, 4814, kH100Sms), DramRegime::kFastShortK);
  EXPECT_EQ(dram_regime(8192, 4814, kH100Sms), DramRegime::kFast);
  EXPECT_EQ(dram_regime(4096, 3352, kH100Sms), DramRegime::kDefault);  // H100
  EXPECT_EQ(dram_regime(8192, 3352, kH100Sms), DramRegime::kDefault);
  EXPECT_EQ(dram_regime(4096, 4814, 0), DramRegime::kDefault);
  EXPECT_EQ(dram_regime(4096, 0, kH100Sms), DramRegime::kDefault);  // bandwidth unknown
  // A candidate's cost per regime: the short-K cost falls back to the
  // fast-DRAM one, which falls back to `cost`.
  const detail::TileCandidate square = detail::kSm90Int8Tiles[2];
  EXPECT_EQ(detail::tile_cost(square, DramRegime::kDefault), 1125);
  EXPECT_EQ(detail::tile_cost(square, DramRegime::kFast), 1125);
  EXPECT_EQ(detail::tile_cost(square, DramRegime::kFastShortK), 950);
  const detail::TileCandidate coop128 = detail::kSm90Fp8Tiles[3];
  EXPECT_EQ(detail::tile_cost(coop128, DramRegime::kDefault), 1250);
  EXPECT_EQ(detail::tile_cost(coop128, DramRegime::kFast), 1100);
  EXPECT_EQ(detail::tile_cost(coop128, DramRegime::kFastShortK), 1100);
}

// Short K on fast DRAM (an H200, not an H100): the 128×128 ping-pong tile's
// cost drops to 950 and the model takes it where its waves are as full as
// 128×256's — the shapes of gemm-h200-square-k4096.json — but not on
// ragged M (3000 rows: its cost of the rows past M) nor at K > 4096.
TEST(GemmDispatchTable, Sm90SquareOnShortKWithFastDram) {
  using detail::DramRegime;
  using detail::kSm90Int8Model;
  using detail::modelled_tile;
  for (const auto& mn : {std::pair<int64_t, int64_t>{8192, 4096}, {8192, 6144}, {4096, 4096}, {2048, 28672},
                         {768, 28672}, {1024, 4096}, {4096, 14336}}) {
    EXPECT_EQ(modelled_tile(kSm90Int8Model, mn.first, mn.second, kH100Sms, DramRegime::kFastShortK),
              GemmKernel::kSm90Square)
        << mn.first << "x" << mn.second;
    for (const DramRegime longer : {DramRegime::kDefault, DramRegime::kFast}) {
      EXPECT_NE(modelled_tile(kSm90Int8Model, mn.first, mn.second, kH100Sms, longer), GemmKernel::kSm90Square)
          << mn.first << "x" << mn.second;
    }
  }
  EXPECT_EQ(modelled_tile(kSm90Int8Model, 3000, 4096, kH100Sms, DramRegime::kFastShortK), GemmKernel::kSm90Wide);
  EXPECT_EQ(modelled_tile(kSm90Int8Model, 384, 28672, kH100Sms, DramRegime::kFastShortK), GemmKernel::kSm90Wide1x2);
  EXPECT_EQ(detail::modelled_time(detail::kSm90Int8Tiles[2], 8192, 4096, kH100Sms, DramRegime::kFastShortK),
            16 * 128 * 128 * 950);
}

// Precise fp8 on fast DRAM: the 128×128 cooperative tile at 1100 instead of
// 1250 (kSm90Fp8Tiles) takes the shapes where the H200 sweep measured it
// faster than the H100 model's pick (gemm-h200-sweep-tiles-844a3ae.json),
// at any K, and leaves the H100's picks and the full-wave shapes alone.
TEST(GemmDispatchTable, Sm90Fp8Coop128OnFastDram) {
  using detail::DramRegime;
  using detail::kSm90Fp8Model;
  using detail::modelled_tile;
  struct Case {
    int64_t m, n;
    GemmKernel h100;
  };
  for (const Case& c : {Case{1024, 10240, GemmKernel::kSm90Wide}, Case{1280, 8192, GemmKernel::kSm90Wide},
                        Case{1792, 8192, GemmKernel::kSm90Wide192}, Case{2560, 4096, GemmKernel::kSm90Wide}}) {
    EXPECT_EQ(modelled_tile(kSm90Fp8Model, c.m, c.n, kH100Sms), c.h100) << c.m << "x" << c.n;
    EXPECT_EQ(modelled_tile(kSm90Fp8Model, c.m, c.n, kH100Sms, DramRegime::kFast), GemmKernel::kSm90Coop128)
        << c.m << "x" << c.n;
    EXPECT_EQ(modelled_tile(kSm90Fp8Model, c.m, c.n, kH100Sms, DramRegime::kFastShortK), GemmKernel::kSm90Coop128)
        << c.m << "x" << c.n;
  }
  // 8192³ and 4096×4096: whole waves of 128×256 either way.
  for (const DramRegime regime : {DramRegime::kDefault, DramRegime::kFast}) {
    EXPECT_EQ(modelled_tile(kSm90Fp8Model, 8192, 8192, kH100Sms, regime), GemmKernel::kSm90Wide);
    EXPECT_EQ(modelled_tile(kSm90Fp8Model, 4096, 4096, kH100Sms, regime), GemmKernel::kSm90Wide);
  }
}

// Where M ≤ 16 with a workspace takes the swapped wgmma kernel: 128-row
// tiles at least 1.5 waves and at least 200 Mi weight elements.
TEST(GemmDispatchTable, Sm90DecodeTakesLargeWeights) {
  using detail::decode_takes;
  EXPECT_TRUE(decode_takes(1, 28672, 8192, kH100Sms));   // 224 tiles, 224 Mi
  EXPECT_TRUE(decode_takes(16, 57344, 8192, kH100Sms));
  EXPECT_TRUE(decode_takes(16, 128256, 8192, kH100Sms));
  EXPECT_FALSE(decode_takes(17, 57344, 8192, kH100Sms));  // not decode
  EXPECT_FALSE(decode_takes(1, 28672, 4096, kH100Sms));   // 112 Mi elements
  EXPECT_FALSE(decode_takes(1, 8192, 28672, kH100Sms));   // 64 tiles: under 1.5 waves
  EXPECT_FALSE(decode_takes(1, 8192, 8192, kH100Sms));
  EXPECT_TRUE(decode_takes(1, 25344, 8576, kH100Sms));    // 198 tiles = 1.5 × 132 exactly
  EXPECT_FALSE(decode_takes(1, 25216, 8576, kH100Sms));   // 197 tiles
  EXPECT_FALSE(decode_takes(1, 57344, 8192, 0));          // no SM count
}

// Where M = 129–192 with a workspace takes the swapped stream-K tiles:
// M ≤ 160 and N ≥ 6144 where the 64-channel swapped tiles do not fill their
// waves, or take two or more and fill less than 90 % of them with 5
// k-tiles of 128×128 per SM (two waves) or 48 (more); from where the token
// halves no longer fit one wave to N = 6143 from 24 k-tiles of 128×128 per
// SM at M ≤ 160, from 48 above (which the halves' stream-K twin, checked
// first, takes from K = 4096); never from N = 2048 to where the halves fit
// (the twin's band).
TEST(GemmDispatchTable, Sm90SwappedStreamKTakes) {
  using detail::swapped_stream_k_takes;
  EXPECT_TRUE(swapped_stream_k_takes(129, 10240, 8192, kH100Sms));
  EXPECT_TRUE(swapped_stream_k_takes(160, 11008, 4096, kH100Sms));
  EXPECT_TRUE(swapped_stream_k_takes(136, 9216, 8192, kH100Sms));    // 144 tiles: 55 % of two waves
  EXPECT_FALSE(swapped_stream_k_takes(128, 10240, 8192, kH100Sms));  // M ≤ 128: the one-wave tiles
  EXPECT_FALSE(swapped_stream_k_takes(161, 10240, 8192, kH100Sms));  // even with 128×192 there
  EXPECT_FALSE(swapped_stream_k_takes(160, 8192, 8192, kH100Sms));   // the whole swapped tiles fill
  EXPECT_FALSE(swapped_stream_k_takes(160, 8192, 28672, kH100Sms));  // one wave, 97 %
  EXPECT_FALSE(swapped_stream_k_takes(136, 57344, 28672, kH100Sms)); // seven waves, 97 %
  EXPECT_FALSE(swapped_stream_k_takes(136, 16384, 28672, kH100Sms)); // two waves, 97 %
  // Two waves at 70–90 %: from 5 k-tiles per SM (⌈N/128⌉·⌈K/128⌉).
  EXPECT_TRUE(swapped_stream_k_takes(136, 14336, 4096, kH100Sms));   // 224 tiles, 85 %; 27.2 per SM
  EXPECT_TRUE(swapped_stream_k_takes(136, 12288, 2048, kH100Sms));   // 192 tiles, 73 %; 11.6 per SM
  EXPECT_TRUE(swapped_stream_k_takes(136, 12288, 1024, kH100Sms));   // 5.8 per SM
  EXPECT_TRUE(swapped_stream_k_takes(136, 14336, 768, kH100Sms));    // 112 × 6 = 672: 5.09 per SM
  EXPECT_FALSE(swapped_stream_k_takes(136, 14336, 640, kH100Sms));   // 112 × 5 = 560: 4.2 per SM
  EXPECT_FALSE(swapped_stream_k_takes(136, 12288, 768, kH100Sms));   // 96 × 6 = 576: 4.4 per SM
  EXPECT_TRUE(swapped_stream_k_takes(136, 11840, 8192, kH100Sms));   // 186 tiles, 70.5 %; 45.1 per SM
  // Three waves or more at 70–90 %: from 48 per SM.
  EXPECT_TRUE(swapped_stream_k_takes(160, 28672, 4096, kH100Sms));   // 448 tiles, 85 %; 54.3 per SM
  EXPECT_FALSE(swapped_stream_k_takes(160, 28672, 3584, kH100Sms));  // 47.5 per SM
  EXPECT_FALSE(swapped_stream_k_takes(160, 20480, 4096, kH100Sms));  // 320 tiles, 81 %; 38.8 per SM
  EXPECT_TRUE(swapped_stream_k_takes(160, 20480, 6144, kH100Sms));   // 58.2 per SM
  EXPECT_FALSE(swapped_stream_k_takes(136, 15168, 28672, kH100Sms)); // 238 tiles, 90.2 %
  EXPECT_FALSE(swapped_stream_k_takes(176, 28672, 28672, kH100Sms)); // M > 160
  // N = 4096: 32 × ⌈K/128⌉ k-tiles against 24 (M ≤ 160) or 48 per SM.
  EXPECT_FALSE(swapped_stream_k_takes(160, 4096, 4096, kH100Sms));   // 7.8 per SM
  EXPECT_FALSE(swapped_stream_k_takes(160, 4096, 11008, kH100Sms));  // 20.8
  // N = 2048 to where the token halves fit one wave (4224 on 132 SMs):
  // never, the halves or their stream-K twin run. The per-SM bound of 24 is
  // seen at N = 4288 (34 × ⌈K/128⌉ k-tiles, the halves in two waves) and
  // on 114 SMs.
  EXPECT_FALSE(swapped_stream_k_takes(160, 2048, 28672, kH100Sms));
  EXPECT_FALSE(swapped_stream_k_takes(136, 2559, 32768, kH100Sms));
  EXPECT_FALSE(swapped_stream_k_takes(160, 1984, 32768, kH100Sms));  // N < 2048: 15.5 per SM
  EXPECT_FALSE(swapped_stream_k_takes(176, 2560, 28672, kH100Sms));  // the halves' twin
  EXPECT_FALSE(swapped_stream_k_takes(160, 4096, 57344, kH100Sms));
  EXPECT_FALSE(swapped_stream_k_takes(136, 4224, 28672, kH100Sms));
  EXPECT_TRUE(swapped_stream_k_takes(160, 4096, 14336, 114));        // 31.4 per SM; 128 halves > 114
  EXPECT_TRUE(swapped_stream_k_takes(160, 4288, 14336, kH100Sms));   // 136 halves; 28.8 per SM
  EXPECT_TRUE(swapped_stream_k_takes(129, 4288, 12032, kH100Sms));   // 94 k-tiles each: 24.2 per SM
  EXPECT_FALSE(swapped_stream_k_takes(129, 4288, 11904, kH100Sms));  // 93: 23.95
  EXPECT_FALSE(swapped_stream_k_takes(176, 4288, 14336, kH100Sms));  // M > 160: from 48 per SM
  EXPECT_TRUE(swapped_stream_k_takes(192, 4288, 28672, kH100Sms));   // 57.7
  EXPECT_FALSE(swapped_stream_k_takes(160, 10240, 8192, 0));         // no SM count
  // M = 193–256: the token thirds, 3·⌈N/128⌉ tiles in one wave filling more
  // than three quarters of it (N = 4225–5632 on 132 SMs), from K = 2048.
  EXPECT_TRUE(swapped_stream_k_takes(193, 4288, 28672, kH100Sms));   // 102 tiles
  EXPECT_TRUE(swapped_stream_k_takes(256, 4225, 2048, kH100Sms));    // 102
  EXPECT_FALSE(swapped_stream_k_takes(256, 4224, 8192, kH100Sms));   // 99: three quarters exactly
  EXPECT_TRUE(swapped_stream_k_takes(224, 5632, 14336, kH100Sms));   // 132: one full wave
  EXPECT_FALSE(swapped_stream_k_takes(224, 5633, 14336, kH100Sms));  // 135: two
  EXPECT_FALSE(swapped_stream_k_takes(200, 5120, 2047, kH100Sms));   // K < 2048
  EXPECT_FALSE(swapped_stream_k_takes(240, 5120, 8192, 0));          // no SM count
  EXPECT_TRUE(swapped_stream_k_takes(240, 3840, 8192, 114));         // 90 tiles on 114 SMs
  // … except at M = 248–256 where the 128×80 tiles in token pairs fill five
  // sixths of one wave (N = 4321–5280 on 132 SMs).
  EXPECT_FALSE(swapped_stream_k_takes(256, 4800, 8192, kH100Sms));   // 120 tiles of 128×80
  EXPECT_FALSE(swapped_stream_k_takes(248, 4321, 2048, kH100Sms));   // 110
  EXPECT_TRUE(swapped_stream_k_takes(247, 4800, 8192, kH100Sms));    // the second token tile under 120 rows
  EXPECT_TRUE(swapped_stream_k_takes(256, 4320, 8192, kH100Sms));    // 108: under five sixths
  EXPECT_TRUE(swapped_stream_k_takes(256, 5281, 8192, kH100Sms));    // 134: two waves of them
  // M = 257–768: four token tiles up to M = 384, ⌈M/96⌉ above, three at M =
  // 257–288 where four leave one wave; in one wave, from K = 2048, filling
  // at least 70 % of it or with 15 k-tiles per SM (tiles·⌈K/128⌉ ≥ 1980 on
  // 132 SMs).
  using detail::swapped_token_tiles;
  EXPECT_EQ(swapped_token_tiles(193, 8192, kH100Sms), 3);
  EXPECT_EQ(swapped_token_tiles(257, 4224, kH100Sms), 4);  // 4 × 33 = 132: one wave
  EXPECT_EQ(swapped_token_tiles(257, 4225, kH100Sms), 3);  // 4 × 34 = 136: three of 96 fit
  EXPECT_EQ(swapped_token_tiles(288, 5632, kH100Sms), 3);
  EXPECT_EQ(swapped_token_tiles(288, 5633, kH100Sms), 3);  // 135: none fit; the count for M
  EXPECT_EQ(swapped_token_tiles(289, 4225, kH100Sms), 4);  // ⌈289/96⌉ = 4: no fewer
  EXPECT_EQ(swapped_token_tiles(384, 2048, kH100Sms), 4);
  EXPECT_EQ(swapped_token_tiles(385, 2048, kH100Sms), 5);
  EXPECT_EQ(swapped_token_tiles(480, 2048, kH100Sms), 5);
  EXPECT_EQ(swapped_token_tiles(481, 2048, kH100Sms), 6);
  EXPECT_EQ(swapped_token_tiles(768, 1024, kH100Sms), 8);
  EXPECT_TRUE(swapped_stream_k_takes(257, 4224, 2048, kH100Sms));    // 132 tiles: one full wave
  EXPECT_TRUE(swapped_stream_k_takes(257, 4225, 8192, kH100Sms));    // three tiles: 102, 77 %
  EXPECT_TRUE(swapped_stream_k_takes(288, 5632, 2048, kH100Sms));    // three: 132
  EXPECT_FALSE(swapped_stream_k_takes(288, 5633, 2048, kH100Sms));   // 135: past one wave, short K
  EXPECT_FALSE(swapped_stream_k_takes(289, 4225, 2048, kH100Sms));   // four: 136, past one wave
  EXPECT_TRUE(swapped_stream_k_takes(384, 2945, 2048, kH100Sms));    // 96: 73 %
  EXPECT_FALSE(swapped_stream_k_takes(384, 2944, 2048, kH100Sms));   // 92: 69.7 %, 11.2 k-tiles per SM
  EXPECT_TRUE(swapped_stream_k_takes(384, 2944, 14336, kH100Sms));   // 78.1 per SM
  EXPECT_TRUE(swapped_stream_k_takes(320, 2048, 4096, kH100Sms));    // 64 tiles × 32 = 2048 ≥ 1980
  EXPECT_TRUE(swapped_stream_k_takes(320, 2048, 3968, kH100Sms));    // × 31 = 1984
  EXPECT_FALSE(swapped_stream_k_takes(320, 2048, 3840, kH100Sms));   // × 30 = 1920
  EXPECT_FALSE(swapped_stream_k_takes(320, 1024, 4096, kH100Sms));   // 32 × 32 = 1024
  EXPECT_TRUE(swapped_stream_k_takes(320, 1024, 8192, kH100Sms));    // 32 × 64 = 2048
  EXPECT_FALSE(swapped_stream_k_takes(320, 4096, 2047, kH100Sms));   // K < 2048
  EXPECT_TRUE(swapped_stream_k_takes(400, 3328, 4096, kH100Sms));    // five tiles: 130
  EXPECT_FALSE(swapped_stream_k_takes(400, 3456, 14336, kH100Sms));  // 135: two waves
  EXPECT_TRUE(swapped_stream_k_takes(768, 1536, 2048, kH100Sms));    // eight tiles: 96, 73 %
  EXPECT_FALSE(swapped_stream_k_takes(640, 1536, 2048, kH100Sms));   // seven: 84, 64 %; 10.2 per SM
  EXPECT_TRUE(swapped_stream_k_takes(640, 1536, 4096, kH100Sms));    // 20.4 per SM
  EXPECT_FALSE(swapped_stream_k_takes(769, 1024, 8192, kH100Sms));   // M > 768: the tile model
  // Past one wave: M = 257–384 up to two waves, from K = 8192, at M ≤ 320
  // from K = 4096.
  EXPECT_TRUE(swapped_stream_k_takes(288, 5633, 4096, kH100Sms));    // three tiles: 135
  EXPECT_TRUE(swapped_stream_k_takes(320, 6144, 4096, kH100Sms));    // 192, 32 k-tiles
  EXPECT_FALSE(swapped_stream_k_takes(320, 6144, 3968, kH100Sms));   // 31 k-tiles
  EXPECT_FALSE(swapped_stream_k_takes(352, 6144, 4096, kH100Sms));   // M > 320: from 64
  EXPECT_TRUE(swapped_stream_k_takes(352, 6144, 8192, kH100Sms));
  EXPECT_TRUE(swapped_stream_k_takes(384, 8448, 8192, kH100Sms));    // 264: two full waves
  EXPECT_FALSE(swapped_stream_k_takes(384, 8449, 8192, kH100Sms));   // 268
  EXPECT_FALSE(swapped_stream_k_takes(400, 4096, 14336, kH100Sms));  // M > 384: one wave only
  EXPECT_FALSE(swapped_stream_k_takes(240, 5760, 14336, kH100Sms));  // thirds: one wave only
  EXPECT_FALSE(swapped_stream_k_takes(300, 3584, 4096, 0));          // no SM count
  EXPECT_TRUE(swapped_stream_k_takes(300, 3584, 4096, 114));         // 112 tiles on 114 SMs
  using detail::table_kernel;
  // Through the whole table (every input, both DRAM regimes), with a
  // workspace or without, on 132 SMs:
  //   - N = 10240: the swapped stream-K tiles with a workspace only;
  //   - N = 4096: the token halves up to K = 14336; with a workspace fp8
  //     (fast fp8 too: it runs it precise) takes their stream-K twin at
  //     K = 28672, int8 not;
  //   - N = 2048 (kSwappedHalvesMinN): the halves; the twin from K = 20480;
  //   - N = 4288–8448, past the halves' one wave: the whole swapped tiles at
  //     M ≤ 160; at M = 161–192 the 64×128 tiles, or the whole swapped
  //     tiles where those take 1–1.5 waves (N ≥ 5633); with a workspace the
  //     twin from K = 4096 (32 k-tiles);
  //   - N = 8449–12288 (the whole tiles in two waves): at M = 161–192 with a
  //     workspace the twin from K = 8192, at M ≤ 160 the swapped stream-K
  //     tiles;
  //   - M = 193–256, N = 4225–5632: with a workspace, from K = 2048, the
  //     swapped stream-K tiles in token thirds, but at M = 248–256, N =
  //     4321–5280 the 128×80 tiles in token pairs; without one those pairs
  //     from M = 224, else the 128-row tiles;
  //   - M = 257–768: the same in four to eight token tiles (three at M =
  //     257–288 where four leave one wave), where they fit one wave and
  //     fill 70 % of it or bring 15 k-tiles per SM; at M = 257–384 up to two
  //     waves from K = 8192 (4096 at M ≤ 320).
  struct Case {
    int64_t m, n, k;
    bool workspace;
    GemmKernel fp8, int8;  // what precise and fast fp8 get, what int8 gets
  };
  constexpr GemmKernel kStreamK = GemmKernel::kSm90SwappedStreamK, kHalves = GemmKernel::kSm90SwappedHalves,
                       kTwin = GemmKernel::kSm90SwappedHalvesStreamK, kWhole = GemmKernel::kSm90Swapped,
                       kNarrow = GemmKernel::kSm90Narrow, kPairs80 = GemmKernel::kSm90Wide80Pairs;
  const Case cases[] = {
      {136, 10240, 8192, true, kStreamK, kStreamK},
      {160, 4096, 14336, false, kHalves, kHalves},  {160, 4096, 14336, true, kHalves, kHalves},
      {176, 4096, 28672, false, kHalves, kHalves},  {176, 4096, 28672, true, kTwin, kHalves},
      {176, 2048, 14336, false, kHalves, kHalves},  {176, 2048, 14336, true, kHalves, kHalves},
      {176, 2048, 20480, false, kHalves, kHalves},  {176, 2048, 20480, true, kTwin, kTwin},
      {160, 5120, 4096, true, kTwin, kTwin},        {160, 5120, 3968, true, kWhole, kWhole},
      {160, 5120, 28672, false, kWhole, kWhole},    {160, 5120, 28672, true, kTwin, kTwin},
      {176, 5120, 14336, false, kNarrow, kNarrow},  {176, 5120, 14336, true, kTwin, kTwin},
      {176, 6016, 4096, false, kWhole, kWhole},     {176, 8448, 4096, true, kTwin, kTwin},
      {176, 8448, 3968, true, kWhole, kWhole},  // under 32 k-tiles
      {176, 10240, 8192, true, kTwin, kTwin},   {160, 10240, 8192, true, kStreamK, kStreamK},
      {192, 12288, 14336, true, kTwin, kTwin},  {192, 12288, 14336, false, kWhole, kWhole},
      {200, 5120, 8192, true, kStreamK, kStreamK},  {247, 4352, 2048, true, kStreamK, kStreamK},
      {256, 4352, 2048, true, kPairs80, kPairs80},  {240, 4800, 8192, true, kStreamK, kStreamK},
      {240, 4800, 8192, false, kPairs80, kPairs80}, {248, 5280, 14336, true, kPairs80, kPairs80},
      {193, 5632, 14336, true, kStreamK, kStreamK},  {300, 4096, 8192, true, kStreamK, kStreamK},
      {384, 2945, 2048, true, kStreamK, kStreamK},   {257, 4224, 14336, true, kStreamK, kStreamK},
      {272, 5120, 4096, true, kStreamK, kStreamK},   {320, 2048, 14336, true, kStreamK, kStreamK},
      {480, 3072, 4096, true, kStreamK, kStreamK},   {768, 1536, 4096, true, kStreamK, kStreamK},
      {300, 4352, 4096, true, kStreamK, kStreamK},   {384, 8192, 14336, true, kStreamK, kStreamK},
  };
  for (const int64_t dram : {int64_t{3352}, int64_t{4814}}) {
    for (const bool int8 : {true, false}) {
      for (const bool fast : {false, true}) {
        if (int8 && fast) continue;
        EXPECT_NE(table_kernel(90, int8, fast, 136, 10240, 8192, kH100Sms, dram, false), kStreamK);
        EXPECT_NE(table_kernel(90, int8, fast, 200, 5120, 8192, kH100Sms, dram, false), kStreamK);  // no workspace
        EXPECT_NE(table_kernel(90, int8, fast, 200, 5120, 1024, kH100Sms, dram, true), kStreamK);   // K < 2048
        EXPECT_NE(table_kernel(90, int8, fast, 256, 5760, 8192, kH100Sms, dram, true), kStreamK);   // two waves
        EXPECT_NE(table_kernel(90, int8, fast, 289, 5120, 2048, kH100Sms, dram, true), kStreamK);   // past a wave, short K
        EXPECT_NE(table_kernel(90, int8, fast, 400, 5120, 8192, kH100Sms, dram, true), kStreamK);   // past a wave, M > 384
        EXPECT_NE(table_kernel(90, int8, fast, 300, 4096, 8192, kH100Sms, dram, false), kStreamK);  // no workspace
        EXPECT_NE(table_kernel(90, int8, fast, 385, 4096, 8192, kH100Sms, dram, true), kStreamK);   // two waves
        EXPECT_NE(table_kernel(90, int8, fast, 480, 3072, 4096, kH100Sms, dram, false), kStreamK);  // no workspace
        EXPECT_NE(table_kernel(90, int8, fast, 769, 1024, 8192, kH100Sms, dram, true), kStreamK);   // M > 768
        for (const Case& c : cases) {
          EXPECT_EQ(table_kernel(90, int8, fast, c.m, c.n, c.k, kH100Sms, dram, c.workspace), int8 ? c.int8 : c.fp8)
              << c.m << "x" << c.n << "x" << c.k << (c.workspace ? " with" : " without") << " a workspace, "
              << (int8 ? "int8" : fast ? "fast fp8" : "fp8") << ", DRAM " << dram;
        }
      }
    }
  }
  EXPECT_EQ(table_kernel(80, true, false, 136, 10240, 8192, kH100Sms, 2039, true), GemmKernel::kSm80Large);
}

// Where M = 129–192 with a workspace takes the token halves' stream-K twin
// (kSm90SwappedHalvesStreamK): from N = 2048 to where the halves fit one
// wave (4224 on 132 SMs), fp8 from 160 k-tiles up to N = 3072 and from 224
// above; int8 from 160 below N = 3072; past that wave, up to where the
// whole swapped tiles take two (N = 8448 on 132 SMs), both from 32.
TEST(GemmDispatchTable, Sm90SwappedHalvesStreamKTakes) {
  const auto takes = [](int64_t m, int64_t n, int64_t k, bool int8, int sm_count = kH100Sms) {
    return detail::swapped_halves_stream_k_takes(m, n, k, sm_count, int8);
  };
  for (const bool int8 : {true, false}) {
    EXPECT_TRUE(takes(129, 2048, 20480, int8));
    EXPECT_TRUE(takes(192, 2048, 20353, int8));    // 160 k-tiles
    EXPECT_FALSE(takes(192, 2048, 20352, int8));   // 159
    EXPECT_FALSE(takes(160, 2048, 14336, int8));
    EXPECT_FALSE(takes(128, 2048, 28672, int8));   // M ≤ 128
    EXPECT_FALSE(takes(193, 2048, 28672, int8));
    EXPECT_FALSE(takes(160, 1984, 28672, int8));   // N < 2048
    // Past the halves' one wave, up to where the whole swapped tiles take
    // two (N = 8448 on 132 SMs): from 32 k-tiles.
    EXPECT_TRUE(takes(160, 4288, 28672, int8));
    EXPECT_TRUE(takes(129, 4288, 3969, int8));     // 32 k-tiles
    EXPECT_FALSE(takes(129, 4288, 3968, int8));    // 31
    EXPECT_TRUE(takes(192, 6144, 4096, int8));
    EXPECT_TRUE(takes(136, 8448, 4096, int8));     // 132 whole tiles: one wave
    EXPECT_FALSE(takes(136, 8449, 28672, int8));   // 134: two, and M ≤ 160
    // Two waves of whole tiles at M = 161–192, up to N = 12288: from 64.
    EXPECT_TRUE(takes(161, 8449, 8192, int8));
    EXPECT_FALSE(takes(176, 8449, 8064, int8));    // 63 k-tiles
    EXPECT_TRUE(takes(192, 12288, 8192, int8));
    EXPECT_FALSE(takes(192, 12289, 28672, int8));
    EXPECT_FALSE(takes(160, 10240, 28672, int8));  // M ≤ 160: the swapped stream-K tiles
    EXPECT_TRUE(takes(160, 4096, 4096, int8, 114));  // 128 halves on 114 SMs: two waves
    EXPECT_FALSE(takes(160, 4096, 3968, int8, 114));
    EXPECT_FALSE(takes(160, 2048, 28672, int8, 0));  // no SM count
    EXPECT_TRUE(takes(160, 2560, 20480, int8));
    EXPECT_FALSE(takes(136, 2560, 14336, int8));
  }
  // int8: from 160 k-tiles below N = 3072, never from 3072.
  EXPECT_TRUE(takes(136, 3071, 28672, true));
  EXPECT_FALSE(takes(136, 3072, 28672, true));
  EXPECT_FALSE(takes(192, 4096, 57344, true));
  // fp8: from 160 k-tiles up to N = 3072, from 224 above.
  EXPECT_TRUE(takes(136, 3072, 20353, false));   // 160 k-tiles
  EXPECT_FALSE(takes(136, 3072, 20352, false));  // 159
  EXPECT_FALSE(takes(136, 3073, 20480, false));
  EXPECT_TRUE(takes(136, 4096, 28545, false));   // 224 k-tiles
  EXPECT_FALSE(takes(136, 4096, 28544, false));  // 223
  EXPECT_TRUE(takes(192, 4224, 28672, false));
  EXPECT_FALSE(takes(192, 4224, 28544, false));  // 223 k-tiles, in the halves' one wave
  EXPECT_TRUE(takes(192, 4225, 4096, false));    // past it: 32
}

// The whole swapped tiles in two waves or more, short of 90 % of them.
TEST(GemmDispatchTable, Sm90SwappedTilesFillTwoWavesShort) {
  using detail::swapped_tiles_fill_two_waves_short;
  EXPECT_TRUE(swapped_tiles_fill_two_waves_short(14336, kH100Sms));   // 224 tiles: 85 % of two waves
  EXPECT_TRUE(swapped_tiles_fill_two_waves_short(28672, kH100Sms));   // 448: 85 % of four
  EXPECT_FALSE(swapped_tiles_fill_two_waves_short(16384, kH100Sms));  // 256: 97 % of two
  EXPECT_FALSE(swapped_tiles_fill_two_waves_short(57344, kH100Sms));  // 896: 97 % of seven
  EXPECT_FALSE(swapped_tiles_fill_two_waves_short(6144, kH100Sms));   // one wave
  EXPECT_FALSE(swapped_tiles_fill_two_waves_short(8448, kH100Sms));   // 132: one full wave
  EXPECT_TRUE(swapped_tiles_fill_two_waves_short(8512, kH100Sms));    // 134: two
  EXPECT_FALSE(swapped_tiles_fill_two_waves_short(14336, 0));         // no SM count
}

// The swapped tiles in token halves (kSm90SwappedHalves) fit one wave: two
// CTAs (one cluster) per 64-channel tile, at most one per SM.
TEST(GemmDispatchTable, Sm90SwappedHalvesFitOneWave) {
  using detail::swapped_halves_fit_one_wave;
  EXPECT_TRUE(swapped_halves_fit_one_wave(4096, kH100Sms));   // 128 CTAs
  EXPECT_TRUE(swapped_halves_fit_one_wave(4224, kH100Sms));   // 132
  EXPECT_FALSE(swapped_halves_fit_one_wave(4225, kH100Sms));  // 67 tiles: 134
  EXPECT_TRUE(swapped_halves_fit_one_wave(2560, kH100Sms));
  EXPECT_TRUE(swapped_halves_fit_one_wave(1, kH100Sms));      // one tile: 2 CTAs
  EXPECT_FALSE(swapped_halves_fit_one_wave(4096, 114));       // an H100 PCIe: 128 > 114
  EXPECT_TRUE(swapped_halves_fit_one_wave(3584, 114));        // 112
  EXPECT_TRUE(swapped_halves_fit_one_wave(3648, 114));        // 57 tiles: 114
  EXPECT_FALSE(swapped_halves_fit_one_wave(3649, 114));
  EXPECT_FALSE(swapped_halves_fit_one_wave(4096, 0));         // no SM count
}

// The fp8 wgmma decode kernel's K split (decode_wgmma_plan.h): doubled while
// its CTAs stay one per SM and each split keeps 8 stages of 128 bytes of K,
// within the largest cluster the device allows; and where the table runs it
// (decode_wgmma_fills_the_gpu: 0.9–2 tiles of 64 rows per SM).
TEST(GemmDispatchTable, Sm90DecodeWgmmaPlan) {
  using detail::decode_wgmma_splits;
  EXPECT_EQ(decode_wgmma_splits(4096, 4096, kH100Sms, 8), 2);    // 64 tiles
  EXPECT_EQ(decode_wgmma_splits(4096, 14336, kH100Sms, 8), 2);
  EXPECT_EQ(decode_wgmma_splits(2048, 8192, kH100Sms, 8), 4);    // 32 tiles
  EXPECT_EQ(decode_wgmma_splits(2048, 8192, kH100Sms, 2), 2);    // a partition's smaller cluster
  EXPECT_EQ(decode_wgmma_splits(192, 4224, kH100Sms, 8), 4);     // 3 tiles; 33 stages: 8 each at most 4
  EXPECT_EQ(decode_wgmma_splits(48, 1024, kH100Sms, 8), 1);      // 8 stages: one split
  EXPECT_EQ(decode_wgmma_splits(64, 65536, kH100Sms, 8), 8);     // the portable cluster at most
  EXPECT_EQ(decode_wgmma_splits(6144, 4096, kH100Sms, 8), 1);    // 96 tiles
  EXPECT_EQ(decode_wgmma_splits(10240, 8192, kH100Sms, 8), 1);
  EXPECT_TRUE(detail::decode_wgmma_fills_the_gpu(16896, kH100Sms));
  EXPECT_FALSE(detail::decode_wgmma_fills_the_gpu(16897, kH100Sms));
  EXPECT_FALSE(detail::decode_wgmma_fills_the_gpu(28672, kH100Sms));
  EXPECT_TRUE(detail::decode_wgmma_fills_the_gpu(7616, kH100Sms));   // 119 tiles ≥ 118.8
  EXPECT_FALSE(detail::decode_wgmma_fills_the_gpu(7552, kH100Sms));  // 118
  EXPECT_FALSE(detail::decode_wgmma_fills_the_gpu(4096, kH100Sms));
  EXPECT_TRUE(detail::decode_wgmma_fills_the_gpu(6144, 100));        // 96 tiles on 100 SMs
}

TEST(GemmDispatchTable, Sm90Int8) {
  expect_picks(detail::kSm90Int8Rules,
               {{1, 4096, GemmKernel::kSm90SkinnyStream},
                {16, 57344, GemmKernel::kSm90SkinnyStream},
                {16, 6144, GemmKernel::kSm90SkinnyStream},
                {16, 10240, GemmKernel::kSm90SkinnyStream},
                {1, 8192, GemmKernel::kSm90SkinnyStream},
                {8, 8192, GemmKernel::kSm90SkinnyStream},
                {9, 8192, GemmKernel::kSm90SkinnyStream},
                {16, 8192, GemmKernel::kSm90SkinnyStream},
                {17, 4096, GemmKernel::kSm90Thin48},   // 88 slots of 64×48 in clusters of four
                {64, 5568, GemmKernel::kSm90Thin48},   // 116: all co-resident
                {64, 5569, GemmKernel::kSm90Small1x2},  // 120: more than 132 − 16
                {64, 8192, GemmKernel::kSm90Small1x2},
                {64, 10240, GemmKernel::kSm90Narrow},
                {32, 28672, GemmKernel::kSm90Swapped},  // M = 17–32 where 64-channel tiles fill
                {17, 8192, GemmKernel::kSm90Swapped},
                {32, 10240, GemmKernel::kSm90Narrow},   // 160 swapped tiles: 61 % of two waves
                {33, 28672, GemmKernel::kSm90Narrow},
                {65, 4096, GemmKernel::kSm90Small2x1},
                {96, 6144, GemmKernel::kSm90Narrow2x1},
                {80, 28672, GemmKernel::kSm90Narrow2x1},
                {96, 4096, GemmKernel::kSm90Small2x1},
                {97, 28672, GemmKernel::kSm90Small2x1},
                {128, 28672, GemmKernel::kSm90Small2x1},
                {65, 10240, GemmKernel::kSm90Wide96x4},  // 108 slots of 128×96 in fours
                {128, 9216, GemmKernel::kSm90Wide80x4},  // 116 slots in clusters of four
                {100, 9280, GemmKernel::kSm90Wide80x4},
                {100, 9281, GemmKernel::kSm90Wide96x4},  // 120 slots of 128×80, 100 of 128×96
                {128, 8449, GemmKernel::kSm90Wide80x4},  // 133 tiles of 64×128
                {128, 8448, GemmKernel::kSm90Small2x1},  // 132 tiles of 64×128: one wave
                {128, 10576, GemmKernel::kSm90Wide96x4},  // 112 slots of 128×96 in fours
                {128, 11137, GemmKernel::kSm90Wide96},    // 120 in fours, 118 in pairs
                {100, 12288, GemmKernel::kSm90Wide96},
                {128, 12800, GemmKernel::kSm90Small2x1},  // 134 of 128×96: two waves
                {129, 4096, GemmKernel::kSm90SwappedHalves},  // M = 129–192, N = 2048–4224: token halves,
                {192, 4096, GemmKernel::kSm90SwappedHalves},  // 128 CTAs at N = 4096
                {160, 2560, GemmKernel::kSm90SwappedHalves},
                {176, 4224, GemmKernel::kSm90SwappedHalves},  // 132: one wave
                {160, 4225, GemmKernel::kSm90Swapped},        // 134 halves: two waves
                {128, 4096, GemmKernel::kSm90Small2x1},
                {193, 4096, GemmKernel::kSm90Narrow2x1},
                {129, 4352, GemmKernel::kSm90Swapped},   // M = 129–160, N = 4225–6143: 68 tiles of 64 channels
                {160, 5120, GemmKernel::kSm90Swapped},
                {161, 5120, GemmKernel::kSm90Narrow},
                {192, 4352, GemmKernel::kSm90Narrow},
                {192, 5632, GemmKernel::kSm90Narrow},    // 132 tiles of 64×128: one wave
                {192, 5633, GemmKernel::kSm90Swapped},   // 135: the 64×192 swapped tiles
                {176, 6016, GemmKernel::kSm90Swapped},
                {160, 2048, GemmKernel::kSm90SwappedHalves},
                {192, 2047, GemmKernel::kSm90Narrow},    // under 2048: three 64-row tiles
                {129, 6144, GemmKernel::kSm90Swapped},   // 96 tiles of 64 channels: 73 % of a wave
                {193, 4096, GemmKernel::kSm90Narrow2x1},
                {256, 4096, GemmKernel::kSm90Narrow2x1},
                {193, 4224, GemmKernel::kSm90Narrow2x1},  // 132 tiles of 64×128: one wave
                {200, 4225, GemmKernel::kSm90Square},     // 136: 128×128 ping-pong from 1–1.5 waves
                {223, 5120, GemmKernel::kSm90Square},
                {256, 4320, GemmKernel::kSm90Square},
                {256, 5120, GemmKernel::kSm90Wide80Pairs},  // M = 224–256: 128 tiles of 128×80 in pairs
                {224, 4321, GemmKernel::kSm90Wide80Pairs},  // 110: five sixths of 132
                {256, 5280, GemmKernel::kSm90Wide80Pairs},  // 132: one wave
                {256, 6144, GemmKernel::kSm90Wide96Pairs},  // M = 232–256: 128 tiles of 128×96 in pairs
                {232, 5665, GemmKernel::kSm90Wide96Pairs},  // 120 tiles: more than nine tenths of 132
                {256, 6336, GemmKernel::kSm90Wide96Pairs},  // 132: one wave
                {256, 5664, GemmKernel::kSm90Square},       // 118: not nine tenths
                {256, 6337, GemmKernel::kSm90Square},       // 134: two waves
                {231, 6144, GemmKernel::kSm90Square},       // the second token tile under 104 rows
                {129, 10240, GemmKernel::kSm90Wide192},  // 160 swapped tiles: 61 % of two waves
                {160, 11008, GemmKernel::kSm90Wide192},  // 172: 65 %; the tile model
                {160, 28672, GemmKernel::kSm90Swapped},  // M = 129–192 where the swapped tiles fill
                {144, 57344, GemmKernel::kSm90Swapped},
                {192, 8192, GemmKernel::kSm90Swapped},
                {192, 14336, GemmKernel::kSm90Swapped},  // 224 tiles: 85 % of two waves
                {256, 10240, GemmKernel::kSm90Wide192},
                {256, 28672, GemmKernel::kSm90Square},
                // M > 256: the tile the tile model picks (kSm90Int8Tiles)
                {384, 10240, GemmKernel::kSm90Wide1x2},
                {640, 28672, GemmKernel::kSm90Wide1x2},
                {448, 8192, GemmKernel::kSm90Wide},
                {512, 10240, GemmKernel::kSm90Wide192},
                {768, 8192, GemmKernel::kSm90Wide192},
                {1024, 6144, GemmKernel::kSm90Wide192},
                {1024, 8192, GemmKernel::kSm90Wide},
                {3000, 4096, GemmKernel::kSm90Wide},
                {8192, 8192, GemmKernel::kSm90Wide}},
               "int8");
}

TEST(GemmDispatchTable, Sm90Fp8Precise) {
  expect_picks(detail::kSm90Fp8Rules,
               {{16, 4096, GemmKernel::kSm90SkinnyStream},   // 64 tiles of 64 rows
                {16, 6144, GemmKernel::kSm90SkinnyStream},   // 96
                {16, 7552, GemmKernel::kSm90SkinnyStream},   // 118: under 0.9 × 132
                {16, 7616, GemmKernel::kSm90DecodeWgmma},    // 119
                {1, 8192, GemmKernel::kSm90SkinnyStream},
                {8, 8192, GemmKernel::kSm90SkinnyStream},
                {9, 8192, GemmKernel::kSm90DecodeWgmma},
                {16, 8192, GemmKernel::kSm90DecodeWgmma},
                {12, 10240, GemmKernel::kSm90DecodeWgmma},
                {16, 16896, GemmKernel::kSm90DecodeWgmma},   // 264 tiles: two per SM
                {16, 16897, GemmKernel::kSm90SkinnyStream},  // 265
                {16, 28672, GemmKernel::kSm90SkinnyStream},
                {64, 4096, GemmKernel::kSm90Thin48},
                {48, 6144, GemmKernel::kSm90Small1x2},
                {24, 6144, GemmKernel::kSm90Swapped},  // M = 17–32 where 64-channel tiles fill
                {32, 57344, GemmKernel::kSm90Swapped},
                {24, 10240, GemmKernel::kSm90Narrow},
                {64, 10240, GemmKernel::kSm90Narrow},
                {96, 4096, GemmKernel::kSm90Small2x1},
                {128, 6144, GemmKernel::kSm90Square},
                {128, 28672, GemmKernel::kSm90Square},
                {128, 10240, GemmKernel::kSm90Wide96x4},
                {80, 9216, GemmKernel::kSm90Wide80x4},
                {128, 11008, GemmKernel::kSm90Wide96x4},
                {80, 12288, GemmKernel::kSm90Wide96},
                {129, 4096, GemmKernel::kSm90SwappedHalves},  // M = 129–192, N = 2048–4224: token halves
                {192, 3072, GemmKernel::kSm90SwappedHalves},
                {136, 2048, GemmKernel::kSm90SwappedHalves},
                {160, 4225, GemmKernel::kSm90Swapped},
                {161, 4352, GemmKernel::kSm90Narrow},
                {192, 5120, GemmKernel::kSm90Narrow},
                {192, 6016, GemmKernel::kSm90Swapped},  // 141 tiles of 64×128: 1.07 waves
                {160, 2047, GemmKernel::kSm90Narrow},
                {193, 4096, GemmKernel::kSm90Square},
                {224, 4224, GemmKernel::kSm90Square},   // 132 tiles of 64×128: one wave
                {224, 4225, GemmKernel::kSm90Coop128},  // 136: 128×128 cooperative from 1–1.5 waves
                {223, 5120, GemmKernel::kSm90Coop128},
                {256, 5120, GemmKernel::kSm90Wide80Pairs},  // M = 224–256, as for int8
                {224, 5280, GemmKernel::kSm90Wide80Pairs},
                {192, 10240, GemmKernel::kSm90Wide192},
                {160, 11008, GemmKernel::kSm90Wide192},  // the tile model where the swapped tiles do not fill
                {160, 28672, GemmKernel::kSm90Swapped},  // M = 129–192 where they do
                {136, 57344, GemmKernel::kSm90Swapped},
                {192, 57344, GemmKernel::kSm90Swapped},
                {192, 8192, GemmKernel::kSm90Swapped},
                {129, 6144, GemmKernel::kSm90Swapped},
                {256, 6144, GemmKernel::kSm90Wide96Pairs},  // M = 232–256, as for int8
                {232, 6336, GemmKernel::kSm90Wide96Pairs},
                {231, 6144, GemmKernel::kSm90Coop128},
                {256, 6337, GemmKernel::kSm90Coop128},
                {256, 28672, GemmKernel::kSm90Coop128},
                // M > 256: the tile the tile model picks (kSm90Fp8Tiles)
                {384, 8192, GemmKernel::kSm90Wide},
                {384, 10240, GemmKernel::kSm90Wide1x2},
                {640, 6144, GemmKernel::kSm90Wide1x2},
                {512, 4096, GemmKernel::kSm90Coop128},
                {768, 4096, GemmKernel::kSm90Wide192},
                {1024, 10240, GemmKernel::kSm90Wide},
                {2048, 8192, GemmKernel::kSm90Wide},
                {4096, 8192, GemmKernel::kSm90Wide},
                {4096, 6144, GemmKernel::kSm90Wide}},
               "fp8");
}

TEST(GemmDispatchTable, Sm90Fp8Fast) {
  expect_picks(detail::kSm90Int8Rules,
               {{16, 4096, GemmKernel::kSm90SkinnyStream, true},
                {8, 8192, GemmKernel::kSm90SkinnyStream, true},
                {16, 8192, GemmKernel::kSm90SkinnyStream, true},
                {64, 4096, GemmKernel::kSm90Thin48},
                {64, 28672, GemmKernel::kSm90Narrow},
                {24, 28672, GemmKernel::kSm90Swapped, true},  // built precise only
                {72, 9216, GemmKernel::kSm90Wide80x4},
                {128, 10240, GemmKernel::kSm90Wide96x4},
                {96, 10240, GemmKernel::kSm90Wide96x4},
                {96, 8192, GemmKernel::kSm90Narrow2x1, true},
                {160, 4096, GemmKernel::kSm90SwappedHalves, true},  // built precise only
                {192, 4096, GemmKernel::kSm90SwappedHalves, true},
                {160, 5120, GemmKernel::kSm90Swapped, true},
                {192, 5120, GemmKernel::kSm90Narrow},
                {176, 6016, GemmKernel::kSm90Swapped, true},
                {160, 2048, GemmKernel::kSm90SwappedHalves, true},  // since their two whole partial sets
                {160, 2047, GemmKernel::kSm90Narrow},
                {160, 8192, GemmKernel::kSm90Swapped, true},
                {193, 4096, GemmKernel::kSm90Narrow2x1, true},
                {256, 4096, GemmKernel::kSm90Narrow2x1, true},
                {223, 5120, GemmKernel::kSm90Square},  // the fast 128×128 tile past one wave of 64×128
                {256, 5120, GemmKernel::kSm90Wide80Pairs},  // its fast build
                {256, 6144, GemmKernel::kSm90Wide96Pairs},  // its fast build
                {231, 6144, GemmKernel::kSm90Square},
                {256, 10240, GemmKernel::kSm90Wide192},
                {257, 4096, GemmKernel::kSm90Wide192},
                {384, 10240, GemmKernel::kSm90Wide1x2},
                {1024, 6144, GemmKernel::kSm90Wide192},
                {8192, 8192, GemmKernel::kSm90Wide}},
               "fp8 fast", true);
}

// Fast DRAM (an H200) at M = 65–128: 128×256 with cluster 1×2 at M = 65–96
// and N ≥ 28672 (int8, both fp8 modes); int8's 64×128 cluster-2×1 tile at
// M = 97–128 and N ≥ 6144 but where those tiles take 1–1.5 waves (N = 10240),
// and at M = 65–88 with N < 6144 (precise fp8 there too), which fp8 with fast
// accumulation runs precise. Both K regimes of fast DRAM
// pick alike; an H100 (the default regime) keeps the picks of the tests
// above.
TEST(GemmDispatchTable, Sm90SmallMOnFastDram) {
  using detail::DramRegime;
  for (const DramRegime regime : {DramRegime::kFast, DramRegime::kFastShortK}) {
    expect_picks(detail::kSm90Int8Rules,
                 {{65, 28672, GemmKernel::kSm90Wide1x2},
                  {96, 57344, GemmKernel::kSm90Wide1x2},
                  {64, 28672, GemmKernel::kSm90Narrow},        // M ≤ 64: unchanged
                  {96, 8192, GemmKernel::kSm90Narrow2x1},      // N < 28672: unchanged
                  {96, 10240, GemmKernel::kSm90Wide96x4},      // 128×96 tiles in fours
                  {97, 28672, GemmKernel::kSm90Narrow2x1},
                  {100, 6144, GemmKernel::kSm90Narrow2x1},
                  {128, 8192, GemmKernel::kSm90Narrow2x1},
                  {128, 57344, GemmKernel::kSm90Narrow2x1},
                  {128, 10240, GemmKernel::kSm90Wide96x4},     // 160 tiles of 64×128: 1.2 waves
                  {128, 11008, GemmKernel::kSm90Wide96x4},     // 116 slots of 128×96 in fours
                  {128, 13312, GemmKernel::kSm90Narrow2x1},    // every tile past one wave
                  {65, 4096, GemmKernel::kSm90Narrow2x1},
                  {88, 4096, GemmKernel::kSm90Narrow2x1},
                  {89, 4096, GemmKernel::kSm90Small2x1},       // M = 89–128, N < 6144: unchanged
                  {128, 4096, GemmKernel::kSm90Small2x1},
                  {160, 28672, GemmKernel::kSm90Swapped},      // M > 128: unchanged
                  {160, 11008, GemmKernel::kSm90Wide192}},
                 "int8 fast DRAM", false, regime);
    expect_picks(detail::kSm90Int8Rules,
                 {{80, 28672, GemmKernel::kSm90Wide1x2},
                  {100, 8192, GemmKernel::kSm90Narrow2x1, true},
                  {72, 4096, GemmKernel::kSm90Narrow2x1, true},
                  {128, 10240, GemmKernel::kSm90Wide96x4}},
                 "fp8 fast, fast DRAM", true, regime);
    expect_picks(detail::kSm90Fp8Rules,
                 {{65, 28672, GemmKernel::kSm90Wide1x2},
                  {96, 57344, GemmKernel::kSm90Wide1x2},
                  {96, 10240, GemmKernel::kSm90Wide96x4},
                  {96, 8192, GemmKernel::kSm90Square},
                  {97, 28672, GemmKernel::kSm90Square},
                  {88, 4096, GemmKernel::kSm90Square},
                  {96, 4096, GemmKernel::kSm90Small2x1}},
                 "fp8 fast DRAM", false, regime);
  }
  // The rules that need fast DRAM hold on no other DRAM, at a shape in
  // their bounds where they hold on fast DRAM.
  const auto only_on_fast_dram = [](const auto& rules) {
    for (const auto& rule : rules) {
      if (!rule.needs_fast_dram) continue;
      const int64_t n = std::max<int64_t>(rule.min_n, 4096);
      EXPECT_EQ(detail::pick_rule(rules, rule.max_m, n, kH100Sms, DramRegime::kFast), &rule) << rule.why;
      EXPECT_NE(detail::pick_rule(rules, rule.max_m, n, kH100Sms), &rule) << rule.why;
    }
  };
  only_on_fast_dram(detail::kSm90Int8Rules);
  only_on_fast_dram(detail::kSm90Fp8Rules);
  EXPECT_EQ(detail::pick_rule(detail::kSm90Int8Rules, 80, 28672, kH100Sms)->kernel, GemmKernel::kSm90Narrow2x1);
  EXPECT_EQ(detail::pick_rule(detail::kSm90Fp8Rules, 80, 28672, kH100Sms)->kernel, GemmKernel::kSm90Square);
}

// Every kernel has its own name (gemm_kernel_names.cpp): `qgemm bench gemm
// --kernels` and `qgemm dispatch` go by it.
TEST(GemmDispatchTable, KernelNamesAreDistinct) {
  std::vector<std::string> names;
  for (int i = 0; i < detail::kGemmKernelCount; ++i) {
    const std::string name = detail::gemm_kernel_name(static_cast<GemmKernel>(i));
    EXPECT_NE(name, "?") << i;
    EXPECT_EQ(std::count(names.begin(), names.end(), name), 0) << name;
    names.push_back(name);
  }
}

// table_kernel: the whole choice scaled_mm_cuda makes before it looks at the
// layout, as `qgemm dispatch` prints it — the rule or its model's pick, the
// swapped decode kernel and stream-K only with a workspace, the fast-DRAM
// rules only on fast DRAM, fp8 fast accumulation from int8's table, and the
// mma.sync tables (or the fallback) off Hopper.
TEST(GemmDispatchTable, TableKernel) {
  using detail::DramRegime;
  using detail::table_kernel;
  constexpr int64_t kH100 = 3352, kH200 = 4814;
  for (const int64_t dram : {kH100, kH200}) {
    EXPECT_EQ(table_kernel(90, true, false, 16, 57344, 8192, kH100Sms, dram, true), GemmKernel::kSm90Decode);
    EXPECT_EQ(table_kernel(90, true, false, 16, 57344, 8192, kH100Sms, dram, false), GemmKernel::kSm90SkinnyStream);
    EXPECT_EQ(table_kernel(90, false, true, 16, 57344, 8192, kH100Sms, dram, true), GemmKernel::kSm90Decode);
    // fp8 at M = 9–16 on weights whose 64-row tiles are all resident: the
    // e4m3 wgmma decode kernel, for fast accumulation too (the fp8 table at
    // M ≤ 16), with or without a workspace; int8 keeps the skinny kernel.
    for (const bool fast : {false, true}) {
      for (const bool workspace : {false, true}) {
        EXPECT_EQ(table_kernel(90, false, fast, 12, 8192, 8192, kH100Sms, dram, workspace),
                  GemmKernel::kSm90DecodeWgmma);
        EXPECT_EQ(table_kernel(90, false, fast, 8, 8192, 8192, kH100Sms, dram, workspace),
                  GemmKernel::kSm90SkinnyStream);
      }
    }
    EXPECT_EQ(table_kernel(90, true, false, 12, 8192, 8192, kH100Sms, dram, false), GemmKernel::kSm90SkinnyStream);
    EXPECT_EQ(table_kernel(90, false, true, 17, 4096, 4096, kH100Sms, dram, false), GemmKernel::kSm90Thin48);
    // 640×8192×28672: stream-K with a workspace, else the model's whole tile.
    const DramRegime regime = detail::dram_regime(28672, dram, kH100Sms);
    EXPECT_EQ(table_kernel(90, true, false, 640, 8192, 28672, kH100Sms, dram, true), GemmKernel::kSm90StreamK);
    EXPECT_EQ(table_kernel(90, true, false, 640, 8192, 28672, kH100Sms, dram, false),
              detail::modelled_tile(detail::kSm90Int8Model, 640, 8192, kH100Sms, regime));
    EXPECT_EQ(table_kernel(90, false, false, 640, 8192, 28672, kH100Sms, dram, false),
              detail::modelled_tile(detail::kSm90Fp8Model, 640, 8192, kH100Sms, regime));
  }
  // The fast-DRAM rules: the H200's picks, the H100's kept.
  EXPECT_EQ(table_kernel(90, true, false, 100, 8192, 8192, kH100Sms, kH100, true), GemmKernel::kSm90Small2x1);
  EXPECT_EQ(table_kernel(90, true, false, 100, 8192, 8192, kH100Sms, kH200, true), GemmKernel::kSm90Narrow2x1);
  EXPECT_EQ(table_kernel(90, false, false, 72, 28672, 4096, kH100Sms, kH100, true), GemmKernel::kSm90Square);
  EXPECT_EQ(table_kernel(90, false, false, 72, 28672, 4096, kH100Sms, kH200, true), GemmKernel::kSm90Wide1x2);
  EXPECT_EQ(table_kernel(90, false, true, 72, 28672, 4096, kH100Sms, kH200, true), GemmKernel::kSm90Wide1x2);
  // Off Hopper: int8 from sm_80, fp8 from sm_89, else the fallback (an sm_100
  // GPU takes the mma.sync tables).
  EXPECT_EQ(table_kernel(80, true, false, 1, 4096, 4096, 108, 2039, true), GemmKernel::kSkinny);
  EXPECT_EQ(table_kernel(80, true, false, 1024, 4096, 4096, 108, 2039, true), GemmKernel::kSm80Large);
  EXPECT_EQ(table_kernel(80, false, false, 1024, 4096, 4096, 108, 2039, true), GemmKernel::kFallback);
  EXPECT_EQ(table_kernel(89, false, true, 128, 4096, 4096, 142, 864, true), GemmKernel::kSm80Small);
  EXPECT_EQ(table_kernel(100, true, false, 1024, 4096, 4096, 148, 8000, true), GemmKernel::kSm80Large);
  EXPECT_EQ(table_kernel(75, true, false, 1024, 4096, 4096, 40, 320, true), GemmKernel::kFallback);
}

// The Hopper tile scheduler's swizzle: 8 only on grids with many tiles on
// both sides (M ≥ 8192 and N ≥ 10240; fp8 with fast accumulation from
// N = 8192), where it measured faster; 1 (CUTLASS's raster order) elsewhere,
// M = 1024 and 4096 included, where 8 measured slower or no faster.
TEST(GemmDispatchTable, Sm90TileSwizzle) {
  for (bool fast : {false, true}) {
    EXPECT_EQ(detail::sm90_tile_swizzle(8192, 10240, fast), 8);
    EXPECT_EQ(detail::sm90_tile_swizzle(8192, 57344, fast), 8);
    EXPECT_EQ(detail::sm90_tile_swizzle(16384, 28672, fast), 8);
    EXPECT_EQ(detail::sm90_tile_swizzle(8191, 57344, fast), 1);
    EXPECT_EQ(detail::sm90_tile_swizzle(4096, 57344, fast), 1);
    EXPECT_EQ(detail::sm90_tile_swizzle(1024, 57344, fast), 1);
    EXPECT_EQ(detail::sm90_tile_swizzle(8192, 6144, fast), 1);
  }
  EXPECT_EQ(detail::sm90_tile_swizzle(8192, 8192, true), 8);
  EXPECT_EQ(detail::sm90_tile_swizzle(8192, 8192, false), 1);
}

// Ampere int8 and Ada fp8 run the same mma.sync kernels by the same M
// bounds: skinny for decode, then the 64×128 tile up to M = 128, then
// 128×128 (an L40's 142 SMs or an A100's 108 change nothing: no wave rule).
TEST(GemmDispatchTable, MmaSyncTables) {
  for (int sms : {108, 142}) {
    for (const auto* table : {&detail::kSm80Int8Rules, &detail::kSm89Fp8Rules}) {
      const auto pick = [&](int64_t m) { return detail::pick_rule(*table, m, 4096, sms)->kernel; };
      EXPECT_EQ(pick(1), GemmKernel::kSkinny);
      EXPECT_EQ(pick(16), GemmKernel::kSkinny);
      EXPECT_EQ(pick(17), GemmKernel::kSm80Small);
      EXPECT_EQ(pick(128), GemmKernel::kSm80Small);
      EXPECT_EQ(pick(129), GemmKernel::kSm80Large);
      EXPECT_EQ(pick(8192), GemmKernel::kSm80Large);
    }
  }
}

// Outputs the 16-byte epilogues cannot take: every Hopper TMA kernel hands
// them to the direct-store kernel; the mma.sync tiles have no twin (their
// problems fall back) and the kernels that take any output keep them; every
// Hopper table's kernel has a twin that takes any output.
// kSm90SwappedHalves in four token tiles at M = 257–384 (the 64-channel
// quarters): 4·⌈N/64⌉ ping-pong tiles filling more than nine tenths of one
// wave, K ≤ 8192, with a workspace or without, ahead of the swapped
// stream-K token tiles and the tile model.
TEST(GemmDispatchTable, SwappedHalvesInFourTokenTiles) {
  using detail::swapped_halves_quarters_take;
  using detail::swapped_halves_take_m;
  using detail::swapped_halves_token_tiles;
  using detail::table_kernel;
  for (const int64_t m : {129, 192, 257, 300, 384}) EXPECT_TRUE(swapped_halves_take_m(m)) << m;
  for (const int64_t m : {1, 128, 193, 256, 385}) EXPECT_FALSE(swapped_halves_take_m(m)) << m;
  EXPECT_EQ(swapped_halves_token_tiles(129), 2);
  EXPECT_EQ(swapped_halves_token_tiles(192), 2);
  EXPECT_EQ(swapped_halves_token_tiles(257), 4);
  EXPECT_EQ(swapped_halves_token_tiles(384), 4);
  EXPECT_TRUE(swapped_halves_quarters_take(320, 2048, 4096, kH100Sms, false));      // 128 tiles
  EXPECT_TRUE(swapped_halves_quarters_take(257, 2112, 8192, kH100Sms, false));      // 132: one full wave
  EXPECT_FALSE(swapped_halves_quarters_take(257, 2113, 4096, kH100Sms, false));     // 136: two
  EXPECT_TRUE(swapped_halves_quarters_take(384, 1920, 2048, kH100Sms, false));      // 120: 91 %
  EXPECT_FALSE(swapped_halves_quarters_take(384, 1856, 2048, kH100Sms, false));     // 116: 88 %
  EXPECT_FALSE(swapped_halves_quarters_take(320, 2048, 8193, kH100Sms, false));     // K > 8192
  EXPECT_FALSE(swapped_halves_quarters_take(256, 2048, 4096, kH100Sms, false));     // M = 193–256: not in four
  EXPECT_FALSE(swapped_halves_quarters_take(385, 2048, 4096, kH100Sms, false));
  EXPECT_FALSE(swapped_halves_quarters_take(320, 2048, 4096, 0, false));            // no SM count
  EXPECT_TRUE(swapped_halves_quarters_take(320, 1664, 4096, 114, false));           // 104 tiles on 114 SMs
  // int8 at M ≤ 288 (its 80-column tiles 32–63 rows past M) up to K = 4096.
  EXPECT_TRUE(swapped_halves_quarters_take(288, 2048, 4096, kH100Sms, true));
  EXPECT_FALSE(swapped_halves_quarters_take(288, 2048, 4097, kH100Sms, true));
  EXPECT_TRUE(swapped_halves_quarters_take(288, 2048, 8192, kH100Sms, false));
  EXPECT_TRUE(swapped_halves_quarters_take(289, 2048, 8192, kH100Sms, true));
  for (const int64_t dram : {int64_t{3352}, int64_t{4814}}) {
    for (const bool workspace : {false, true}) {
      for (const bool int8 : {true, false}) {
        for (const bool fast : {false, true}) {
          if (int8 && fast) continue;
          EXPECT_EQ(table_kernel(90, int8, fast, 320, 2048, 4096, kH100Sms, dram, workspace),
                    GemmKernel::kSm90SwappedHalves);
          EXPECT_EQ(table_kernel(90, int8, fast, 384, 2048, 8192, kH100Sms, dram, workspace),
                    GemmKernel::kSm90SwappedHalves);
          EXPECT_NE(table_kernel(90, int8, fast, 320, 2048, 14336, kH100Sms, dram, workspace),
                    GemmKernel::kSm90SwappedHalves);
          EXPECT_NE(table_kernel(90, int8, fast, 320, 2560, 4096, kH100Sms, dram, workspace),
                    GemmKernel::kSm90SwappedHalves);
          EXPECT_NE(table_kernel(80, int8, fast, 320, 2048, 4096, kH100Sms, dram, workspace),
                    GemmKernel::kSm90SwappedHalves);  // Ampere: no such kernel
        }
      }
    }
  }
}

TEST(GemmDispatchTable, UnalignedOutputKernels) {
  for (GemmKernel k : {GemmKernel::kSm90Wide, GemmKernel::kSm90Square, GemmKernel::kSm90Narrow,
                       GemmKernel::kSm90Small1x2, GemmKernel::kSm90Small2x1, GemmKernel::kSm90Narrow2x1,
                       GemmKernel::kSm90Wide192, GemmKernel::kSm90Coop128, GemmKernel::kSm90Wide1x2,
                       GemmKernel::kSm90Wide80, GemmKernel::kSm90Wide96, GemmKernel::kSm90Thin48,
                       GemmKernel::kSm90Wide80x4, GemmKernel::kSm90Wide96x4, GemmKernel::kSm90Wide96Pairs,
                       GemmKernel::kSm90Wide80Pairs, GemmKernel::kSm90Swapped,
                       GemmKernel::kSm90SwappedStreamK, GemmKernel::kSm90SwappedHalves,
                       GemmKernel::kSm90SwappedHalvesStreamK}) {
    EXPECT_EQ(detail::unaligned_output_kernel(k), GemmKernel::kSm90Direct) << static_cast<int>(k);
  }
  for (GemmKernel k : {GemmKernel::kSkinny, GemmKernel::kSm90SkinnyStream, GemmKernel::kSm90DecodeWgmma,
                       GemmKernel::kFallback, GemmKernel::kSm90Direct, GemmKernel::kSm80Large,
                       GemmKernel::kSm80Small}) {
    EXPECT_EQ(detail::unaligned_output_kernel(k), k) << static_cast<int>(k);
  }
  EXPECT_TRUE(detail::fp8_fast_runs_precise(GemmKernel::kSm90Direct));
  EXPECT_TRUE(detail::fp8_fast_runs_precise(GemmKernel::kSm90Swapped));  // built precise only
  EXPECT_TRUE(detail::fp8_fast_runs_precise(GemmKernel::kSm90SwappedStreamK));
  EXPECT_TRUE(detail::fp8_fast_runs_precise(GemmKernel::kSm90SwappedHalves));
  EXPECT_TRUE(detail::fp8_fast_runs_precise(GemmKernel::kSm90SwappedHalvesStreamK));
  // Every kernel the int8 table (which fp8 fast accumulation reads) names
  // either has a fast build or runs precise.
  for (const auto& rule : detail::kSm90Int8Rules) {
    for (GemmKernel k : kernels_of(rule)) {
      EXPECT_NE(detail::has_fp8_fast_variant(k), detail::fp8_fast_runs_precise(k)) << rule.why;
    }
  }
  EXPECT_TRUE(detail::fp8_fast_runs_precise(GemmKernel::kSm90SkinnyStream));
  EXPECT_TRUE(detail::fp8_fast_runs_precise(GemmKernel::kSm90DecodeWgmma));
  const auto takes_any_output = [](GemmKernel k) {
    return k == GemmKernel::kSkinny || k == GemmKernel::kSm90SkinnyStream || k == GemmKernel::kSm90DecodeWgmma ||
           k == GemmKernel::kFallback || k == GemmKernel::kSm90Direct;
  };
  const auto every_twin_takes_any_output = [&](const auto& rules) {
    for (const auto& rule : rules) {
      for (GemmKernel k : kernels_of(rule)) EXPECT_TRUE(takes_any_output(detail::unaligned_output_kernel(k)));
    }
  };
  every_twin_takes_any_output(detail::kSm90Int8Rules);
  every_twin_takes_any_output(detail::kSm90Fp8Rules);
}

// What takes a call the table's kernel declines at run time: the other
// decode kernel, the whole swapped tiles, the token halves; each needs no workspace and runs
// fp8 the same way. Every other kernel has none.
TEST(GemmDispatchTable, DeclinedKernelTwins) {
  using detail::declined_kernel_twin;
  EXPECT_EQ(declined_kernel_twin(GemmKernel::kSm90Decode), GemmKernel::kSm90SkinnyStream);
  EXPECT_EQ(declined_kernel_twin(GemmKernel::kSm90DecodeWgmma), GemmKernel::kSm90SkinnyStream);
  EXPECT_EQ(declined_kernel_twin(GemmKernel::kSm90SwappedStreamK), GemmKernel::kSm90Swapped);
  EXPECT_EQ(declined_kernel_twin(GemmKernel::kSm90SwappedHalvesStreamK), GemmKernel::kSm90SwappedHalves);
  for (int i = 0; i < detail::kGemmKernelCount; ++i) {
    const auto k = static_cast<GemmKernel>(i);
    const GemmKernel twin = declined_kernel_twin(k);
    if (twin == k) continue;
    EXPECT_EQ(detail::fp8_fast_runs_precise(twin), detail::fp8_fast_runs_precise(k)) << detail::gemm_kernel_name(k);
    for (GemmKernel needs_workspace :
         {GemmKernel::kSm90Decode, GemmKernel::kSm90SwappedStreamK, GemmKernel::kSm90StreamK,
          GemmKernel::kSm90SwappedHalvesStreamK}) {
      EXPECT_NE(twin, needs_workspace) << detail::gemm_kernel_name(k);
    }
  }
  EXPECT_EQ(declined_kernel_twin(GemmKernel::kSm90StreamK), GemmKernel::kSm90StreamK);  // runs whole tiles instead
  EXPECT_EQ(declined_kernel_twin(GemmKernel::kSm90Swapped), GemmKernel::kSm90Swapped);
}

TEST(GemmDispatchTable, EveryShapeHasARule) {
  // The last row of each table takes any shape: no problem is left to the
  // fallback by the table (only by what a kernel cannot take).
  for (int64_t m : {1, 2, 17, 100, 1000, 100000}) {
    for (int64_t n : {16, 48, 4096, 100000}) {
      EXPECT_NE(detail::pick_rule(detail::kSm90Int8Rules, m, n, kH100Sms), nullptr);
      EXPECT_NE(detail::pick_rule(detail::kSm90Fp8Rules, m, n, kH100Sms), nullptr);
      EXPECT_NE(detail::pick_rule(detail::kSm80Int8Rules, m, n, kH100Sms), nullptr);
      EXPECT_NE(detail::pick_rule(detail::kSm89Fp8Rules, m, n, kH100Sms), nullptr);
    }
  }
}

// The Hopper decode kernel's CTAs per SM (skinny_stream_launch.h) on an
// H100 (two fit per SM): the fewest tiles on the busiest SM, and on a tie one
// CTA while M·K token bytes fit in L1 beside its stages.
constexpr int64_t kH100DramGbps = 3352;  // 2619 MHz × 2 × 5120 bits
constexpr int64_t kH200DramGbps = 4814;  // as the H200 of the device tool reports it (qgemm info)
TEST(GemmDispatchTable, SkinnyStreamCtasPerSm) {
  struct Case {
    int64_t m, n, k, most, want;
  };
  const Case cases[] = {
      // Not a tie: N = 6144 is 3 tiles per SM at one CTA, 4 at two (2 rounds
      // of 264); N = 10240 5 against 6; N ≤ 16·SMs 1 against 2.
      {16, 6144, 28672, 2, 1},
      {16, 10240, 28672, 2, 1},
      {16, 2048, 28672, 2, 1},
      // Ties (N = 4096, 8192, 28672, 57344): two only where the tokens overflow L1.
      {16, 8192, 28672, 2, 2},
      {8, 8192, 28672, 2, 2},
      {1, 8192, 28672, 2, 1},
      {16, 8192, 8192, 2, 1},
      {16, 57344, 8192, 2, 1},
      {16, 4096, 14336, 2, 2},
      {9, 4096, 14336, 2, 1},
      {16, 28672, 4096, 2, 1},
      // The forced test's two-per-SM case: 134 tiles, 16 × 10256 token bytes.
      {16, 2129, 10256, 2, 2},
      // Never more than fit; a third CTA only where it lowers the busiest SM's tiles.
      {16, 8192, 28672, 1, 1},
      {16, 8192, 28672, 3, 2},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(detail::skinny_stream_ctas_per_sm((c.n + 15) / 16, kH100Sms, c.most, c.m * c.k, kH100DramGbps), c.want)
        << c.m << "x" << c.n << "x" << c.k << ", at most " << c.most;
  }
}

// On an H200 one CTA per SM cannot keep up with the DRAM: two per SM where
// the busiest SM's tiles at the DRAM's rate take less time than one CTA's
// tiles at its own rate — every tie, and N = 10240 (6 tiles against 5) —
// but not N = 6144 (4 against 3).
TEST(GemmDispatchTable, SkinnyStreamCtasPerSmWithFasterDram) {
  struct Case {
    int64_t m, n, k, most, want;
  };
  const Case cases[] = {
      {16, 6144, 4096, 2, 1},   {1, 6144, 4096, 2, 1},   {16, 10240, 8192, 2, 2}, {1, 10240, 8192, 2, 2},
      {1, 8192, 28672, 2, 2},   {1, 57344, 8192, 2, 2},  {8, 28672, 4096, 2, 2},  {16, 8192, 8192, 2, 2},
      {1, 4096, 4096, 2, 2},    {16, 8192, 28672, 1, 1}, {16, 2048, 8192, 2, 1},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(detail::skinny_stream_ctas_per_sm((c.n + 15) / 16, kH100Sms, c.most, c.m * c.k, kH200DramGbps), c.want)
        << c.m << "x" << c.n << "x" << c.k << ", at most " << c.most;
  }
  // The DRAM's share is per SM: the H200's bandwidth over twice the SMs is below one CTA's rate.
  EXPECT_EQ(detail::skinny_stream_ctas_per_sm(512, 2 * kH100Sms, 2, 8192, kH200DramGbps), 1);
  // An unknown bandwidth (0) keeps the H100's rule.
  EXPECT_EQ(detail::skinny_stream_ctas_per_sm(512, kH100Sms, 2, 8192, 0), 1);
  EXPECT_EQ(detail::skinny_stream_ctas_per_sm(384, kH100Sms, 2, 16 * 28672, 0), 1);
  EXPECT_EQ(detail::skinny_stream_ctas_per_sm(512, kH100Sms, 2, 16 * 28672, 0), 2);
}

}  // namespace
}  // namespace qgemm
