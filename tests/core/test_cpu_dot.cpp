// The CPU backends' fp32 dot product (core/cpu_dot.h): its documented order,
// and the block form that computes it in pieces for many pairs at once.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/cpu_dot.h"

namespace qgemm::detail {
namespace {

std::vector<float> random_vector(std::mt19937& rng, int64_t n) {
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = value(rng);
  return v;
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

// The order cpu_dot.h documents, spelled out in scalar code: lane l sums the
// terms i ≡ l (mod 16) in order, then the lanes are added pairwise.
float documented_dot(const float* a, const float* b, int64_t k) {
  float lanes[kDotLanes] = {};
  for (int64_t i = 0; i < k; ++i) {
    const float product = a[i] * b[i];
    lanes[i % kDotLanes] = lanes[i % kDotLanes] + product;
  }
  for (int width = kDotLanes / 2; width >= 1; width /= 2) {
    for (int l = 0; l < width; ++l) lanes[l] = lanes[l] + lanes[l + width];
  }
  return lanes[0];
}

TEST(CpuDot, DotFloatFollowsTheDocumentedOrder) {
  std::mt19937 rng(7);
  for (int64_t k : {1, 5, 15, 16, 17, 31, 32, 100, 512, 4099}) {
    const auto a = random_vector(rng, k), b = random_vector(rng, k);
    EXPECT_EQ(bits(dot_float(a.data(), b.data(), k)), bits(documented_dot(a.data(), b.data(), k))) << "k=" << k;
  }
}

// Pieces of lengths that are multiples of 16, 1…9 rows (the four-row and
// one-row paths), several tokens, padded row strides: the same bits as one
// dot_float per pair.
TEST(CpuDot, LanesBlockInPiecesEqualsDotFloat) {
  std::mt19937 rng(11);
  const int64_t k = 1024, lda = k + 16, ldb = k + 32;
  for (int64_t tokens : {1, 3}) {
    for (int64_t rows = 1; rows <= 9; ++rows) {
      const auto a = random_vector(rng, tokens * lda), b = random_vector(rng, rows * ldb);
      std::vector<float> lanes(static_cast<size_t>(tokens * rows * kDotLanes), 0.0f);
      for (int64_t k0 = 0, piece = 16; k0 < k; k0 += piece, piece = piece * 2 % 496 + 16) {
        const int64_t len = std::min(piece, k - k0);
        dot_lanes_block(lanes.data(), a.data() + k0, lda, tokens, b.data() + k0, ldb, rows, len);
      }
      for (int64_t t = 0; t < tokens; ++t) {
        for (int64_t r = 0; r < rows; ++r) {
          const float want = dot_float(a.data() + t * lda, b.data() + r * ldb, k);
          EXPECT_EQ(bits(dot_lanes_total(&lanes[(t * rows + r) * kDotLanes])), bits(want))
              << "tokens=" << tokens << " rows=" << rows << " t=" << t << " r=" << r;
        }
      }
    }
  }
}

// Many k blocks, a tail of k % 16 elements, 1…9 rows and up to 16 tokens:
// every value dot_float's.
TEST(CpuDot, PanelEqualsDotFloatPerPair) {
  std::mt19937 rng(13);
  for (int64_t k : {7, 48, 520, 1301}) {
    for (int64_t tokens : {1, 5, 16}) {
      for (int64_t rows : {1, 4, 9}) {
        const int64_t lda = k + 3, ldb = k + 5;
        const auto a = random_vector(rng, tokens * lda), b = random_vector(rng, rows * ldb);
        std::vector<float> lanes(static_cast<size_t>(tokens * rows * kDotLanes), 1.0f);  // dirty: dot_panel zeroes it
        std::vector<float> dots(static_cast<size_t>(tokens * rows));
        dot_panel(dots.data(), lanes.data(), a.data(), lda, tokens, b.data(), ldb, rows, k);
        for (int64_t t = 0; t < tokens; ++t) {
          for (int64_t r = 0; r < rows; ++r) {
            EXPECT_EQ(bits(dots[t * rows + r]), bits(dot_float(a.data() + t * lda, b.data() + r * ldb, k)))
                << "k=" << k << " tokens=" << tokens << " rows=" << rows << " t=" << t << " r=" << r;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace qgemm::detail
