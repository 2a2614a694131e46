// CPU twin of weight_only_mm and weight_only_prepack.
//
// a is widened to fp32 once. Each task dequantizes a panel of kPanelRows
// weight rows into fp32 (ŵ = round_T(q·s_T + o_T) rounded once, through
// wonly_math.h — bit-identical to the CUDA kernels' HFMA2) and sweeps every
// token past it; the dot products accumulate in fp32 with 16 interleaved
// partial sums (a fixed order), then bias and the final rounding.
#include "wonly/cpu/wonly_cpu.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/cpu_simd.h"
#include "core/cpu_dot.h"
#include "gemm/cpu/output_store.h"
#include "wonly/wonly_math.h"

namespace qgemm::detail {
namespace {

constexpr int64_t kPanelRows = 8;

// ŵ[row, 0..K) into `dst` (fp32 values exactly representable in the dtype).
void dequantize_row(const WeightOnlyArgs& args, int64_t row, float* dst) {
  const bool is_bf16 = args.dtype == DType::kBFloat16;
  const int64_t elems = args.chunk_elems();
  for (int64_t c = 0; c < args.chunks_per_row(); ++c) {
    const uint8_t* chunk = args.w + args.w_addr.chunk_offset(row, c);
    const int64_t group = c * elems / args.group_size;
    // s_T, o_T: the parameters rounded to the activation dtype once per chunk.
    const int64_t at_group = group * args.params_group_stride;
    const float scale = wonly::round_to_act(args.param(args.scales, row * args.ld_scales + at_group), is_bf16);
    const float offset =
        args.offsets ? wonly::round_to_act(args.param(args.offsets, row * args.ld_offsets + at_group), is_bf16)
                     : 0.0f;
    for (int64_t j = 0; j < elems; ++j) {
      const int q = args.int4 ? wonly::int4_at(chunk, j) : static_cast<int8_t>(chunk[j]);
      dst[c * elems + j] = wonly::dequant_exact(q, scale, offset, is_bf16);
    }
  }
}

}  // namespace

void weight_only_mm_cpu(const WeightOnlyArgs& args) {
  const int64_t m = args.m, n = args.n, k = args.k;
  std::vector<float> a(static_cast<size_t>(m * k));
#pragma omp parallel for schedule(static)
  for (int64_t row = 0; row < m; ++row) {
    for (int64_t i = 0; i < k; ++i) a[row * k + i] = load_float(args.a, row * args.lda + i, args.dtype);
  }
  const int64_t panels = (n + kPanelRows - 1) / kPanelRows;
#pragma omp parallel
  {
    std::vector<float> panel(static_cast<size_t>(kPanelRows * k));
#pragma omp for schedule(static)
    for (int64_t p = 0; p < panels; ++p) {
      const int64_t col0 = p * kPanelRows;
      const int64_t cols = std::min(n, col0 + kPanelRows) - col0;
      for (int64_t c = 0; c < cols; ++c) dequantize_row(args, col0 + c, &panel[c * k]);
      for (int64_t row = 0; row < m; ++row) {
        for (int64_t c = 0; c < cols; ++c) {
          const int64_t col = col0 + c;
          float value = dot_float(&a[row * k], &panel[c * k], k);
          if (args.bias) value = wonly::add_bias(value, load_float(args.bias, col, args.dtype));
          store_float(args.out, row * args.ldo + col, args.dtype, value);
        }
      }
    }
  }
}

void weight_only_prepack_cpu(uint8_t* out, const uint8_t* w, int64_t n, int64_t k,
                             int64_t ld_bytes, bool int4) {
  const int64_t kc = int4 ? 128 : 64;  // elements per tile of 4 chunks
  const int64_t k_tiles = (k + kc - 1) / kc;
  const int64_t row_blocks = (n + 15) / 16;
  std::memset(out, 0, static_cast<size_t>(row_blocks * k_tiles * 1024));
  const WeightAddressing addr = prepacked_addressing(k_tiles);
  const int64_t chunks = k / (int4 ? 32 : 16);
#pragma omp parallel for schedule(static)
  for (int64_t row = 0; row < n; ++row) {
    for (int64_t c = 0; c < chunks; ++c) {
      std::memcpy(out + addr.chunk_offset(row, c), w + row * ld_bytes + c * 16, 16);
    }
  }
}

}  // namespace qgemm::detail
