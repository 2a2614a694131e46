// CPU backend of scaled_mm / scaled_mm_azp / azp_adj.
//
// a is [M,K] row-major and b is [K,N] column-major, so every output element
// is a dot product of two contiguous K-vectors. The loops are blocked so that
// a panel of B columns stays in cache while rows of A stream past it, and a
// 2×2 register tile reuses every loaded vector twice. OpenMP splits the tiles
// across cores. int8 accumulates in int32 (exact); fp8 is widened to fp32 (A
// once, B one column panel at a time)
// and accumulated in fp32 with 16 interleaved partial sums (a fixed order).
#include "gemm/cpu/scaled_mm_cpu.h"

#include <algorithm>
#include <vector>

#include "core/cpu_dot.h"
#include "core/cpu_simd.h"
#include "core/numeric.h"
#include "gemm/cpu/output_store.h"
#include "gemm/epilogue_math.h"

namespace qgemm::detail {
namespace {

constexpr int64_t kRowBlock = 32;
constexpr int64_t kColBlock = 64;

// acc[i][j] = Σ_k a_i[k]·b_j[k] for i, j ∈ {0, 1} (int32, exact).
QGEMM_CPU_CLONES void dot_int8_2x2(const int8_t* a0, const int8_t* a1, const int8_t* b0,
                                   const int8_t* b1, int64_t k, int32_t acc[4]) {
  int32_t c00 = 0, c01 = 0, c10 = 0, c11 = 0;
  for (int64_t i = 0; i < k; ++i) {
    const int32_t x0 = a0[i], x1 = a1[i], y0 = b0[i], y1 = b1[i];
    c00 += x0 * y0;
    c01 += x0 * y1;
    c10 += x1 * y0;
    c11 += x1 * y1;
  }
  acc[0] = c00;
  acc[1] = c01;
  acc[2] = c10;
  acc[3] = c11;
}


struct Epilogue {
  const ScaledMmArgs& args;

  float bias_at(int64_t col) const {
    return args.bias ? load_float(args.bias, col, args.out_dtype) : 0.0f;
  }
  // Writes out[row, col] from the raw accumulator (int32 for int8 inputs).
  void store_int(int64_t row, int64_t col, int32_t accumulator) const {
    int32_t corrected = accumulator;
    if (args.azp_adj != nullptr) {
      // Two's-complement wrap-around, as the GPU's int32 arithmetic does.
      const uint32_t zero_point = static_cast<uint32_t>(args.azp != nullptr ? args.azp[row] : 1);
      corrected = static_cast<int32_t>(static_cast<uint32_t>(accumulator) -
                                       zero_point * static_cast<uint32_t>(args.azp_adj[col]));
    }
    store_float_acc(row, col, static_cast<float>(corrected));
  }
  void store_float_acc(int64_t row, int64_t col, float accumulator) const {
    const float sa = args.scale_a[args.scale_a_per_token ? row : 0];
    const float sb = args.scale_b[args.scale_b_per_channel ? col : 0];
    const float value = dequant_epilogue(accumulator, sa, sb, bias_at(col), args.bias != nullptr);
    store_float(args.out, row * args.ldo + col, args.out_dtype, value);
  }
};

void scaled_mm_int8(const ScaledMmArgs& args) {
  const auto* a = static_cast<const int8_t*>(args.a);
  const auto* b = static_cast<const int8_t*>(args.b);
  const Epilogue epilogue{args};
  const int64_t row_blocks = (args.m + kRowBlock - 1) / kRowBlock;
  const int64_t col_blocks = (args.n + kColBlock - 1) / kColBlock;

#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t rb = 0; rb < row_blocks; ++rb) {
    for (int64_t cb = 0; cb < col_blocks; ++cb) {
      const int64_t row_end = std::min(args.m, (rb + 1) * kRowBlock);
      const int64_t col_end = std::min(args.n, (cb + 1) * kColBlock);
      for (int64_t row = rb * kRowBlock; row < row_end; row += 2) {
        // A trailing odd row or column reuses the last one; its duplicate
        // result is simply not stored.
        const int64_t row1 = std::min(row + 1, row_end - 1);
        for (int64_t col = cb * kColBlock; col < col_end; col += 2) {
          const int64_t col1 = std::min(col + 1, col_end - 1);
          int32_t acc[4];
          dot_int8_2x2(a + row * args.lda, a + row1 * args.lda, b + col * args.ldb,
                       b + col1 * args.ldb, args.k, acc);
          epilogue.store_int(row, col, acc[0]);
          if (col1 != col) epilogue.store_int(row, col1, acc[1]);
          if (row1 != row) {
            epilogue.store_int(row1, col, acc[2]);
            if (col1 != col) epilogue.store_int(row1, col1, acc[3]);
          }
        }
      }
    }
  }
}

// fp8 → fp32 for all 256 codes (NaN codes decode to NaN).
struct Fp8Table {
  float value[256];
  Fp8Table() {
    for (int v = 0; v < 256; ++v) value[v] = numeric::fp8e4m3_bits_to_float(static_cast<uint8_t>(v));
  }
};

// Widens `count` fp8 vectors of `length` elements that sit `stride` apart
// into a dense fp32 buffer (vector i at i·length).
void widen_fp8(const uint8_t* bytes, int64_t count, int64_t length, int64_t stride, float* widened) {
  static const Fp8Table table;
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t j = 0; j < length; ++j) widened[i * length + j] = table.value[bytes[i * stride + j]];
  }
}

// fp8: A is widened to fp32 once; each task widens one panel of kColBlock
// columns of B and sweeps every row of A past it, kFp8RowBlock rows at a
// time (dot_panel: each value dot_float's, bit for bit).
constexpr int64_t kFp8RowBlock = 16;
void scaled_mm_fp8(const ScaledMmArgs& args) {
  const auto* a_bytes = static_cast<const uint8_t*>(args.a);
  const auto* b_bytes = static_cast<const uint8_t*>(args.b);
  std::vector<float> a(static_cast<size_t>(args.m * args.k));
#pragma omp parallel for schedule(static)
  for (int64_t row = 0; row < args.m; ++row) {
    widen_fp8(a_bytes + row * args.lda, 1, args.k, args.lda, &a[row * args.k]);
  }
  const Epilogue epilogue{args};
  const int64_t col_blocks = (args.n + kColBlock - 1) / kColBlock;

#pragma omp parallel
  {
    std::vector<float> panel(static_cast<size_t>(kColBlock * args.k));
    std::vector<float> lanes(static_cast<size_t>(kFp8RowBlock * kColBlock * kDotLanes));
    std::vector<float> dots(static_cast<size_t>(kFp8RowBlock * kColBlock));
#pragma omp for schedule(static)
    for (int64_t cb = 0; cb < col_blocks; ++cb) {
      const int64_t col0 = cb * kColBlock;
      const int64_t cols = std::min(args.n, col0 + kColBlock) - col0;
      widen_fp8(b_bytes + col0 * args.ldb, cols, args.k, args.ldb, panel.data());
      for (int64_t row0 = 0; row0 < args.m; row0 += kFp8RowBlock) {
        const int64_t rows = std::min(args.m, row0 + kFp8RowBlock) - row0;
        dot_panel(dots.data(), lanes.data(), &a[row0 * args.k], args.k, rows, panel.data(), args.k, cols, args.k);
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t c = 0; c < cols; ++c) epilogue.store_float_acc(row0 + r, col0 + c, dots[r * cols + c]);
        }
      }
    }
  }
}

}  // namespace

// args.fp8_fast_accum is not read: fast accumulation is a rounding mode of
// the GPU's fp8 tensor cores (fewer bits kept while k-blocks are added up),
// not a different formula, so the CPU computes the precise fp32-accumulated
// result for either request — the reference the GPU's fast path is tested
// against, with a K-dependent tolerance (tests/gemm/test_scaled_mm_fp8_fast.cpp).
void scaled_mm_cpu(const ScaledMmArgs& args) {
  if (args.m == 0 || args.n == 0) return;
  if (args.input_dtype == DType::kInt8) {
    scaled_mm_int8(args);
  } else {
    scaled_mm_fp8(args);
  }
}

void azp_adj_cpu(int32_t* out, const int8_t* b, int64_t k, int64_t n, int64_t ldb, int32_t azp) {
#pragma omp parallel for schedule(static)
  for (int64_t col = 0; col < n; ++col) {
    int32_t sum = 0;
    for (int64_t i = 0; i < k; ++i) sum += b[col * ldb + i];
    out[col] = static_cast<int32_t>(static_cast<uint32_t>(azp) * static_cast<uint32_t>(sum));
  }
}

}  // namespace qgemm::detail
