// CPU twin of weight_only_mm and weight_only_prepack.
//
// a is widened to fp32 once. Each task dequantizes a panel of kPanelRows
// weight rows into fp32 (ŵ = round_T(q·s_T + o_T) rounded once, through
// wonly_math.h — bit-identical to the CUDA kernels' HFMA2; tabulated per
// group where a group has more elements than codes) and sweeps every
// token past it; each dot product is dot_float's (16 interleaved fp32
// partial sums, a fixed order; advanced block by block), then bias and the
// final rounding.
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

// A task: kPanelRows weight rows, dequantized once, against every token,
// kTokenBlock tokens at a time (dot_panel).
constexpr int64_t kPanelRows = 8, kTokenBlock = 16;

// ŵ[row, 0..K) into `dst` (fp32 values exactly representable in the dtype).
// Within a group every element with the same code q has the same ŵ, so where
// a group holds more elements than there are codes (int4: 16 codes, every
// group size, ≥ 32; int8: 256 codes, groups of more than 256, i.e. per
// channel) the group's ŵ is tabulated once per code: the same values,
// computed 2–16× less often.
void dequantize_row(const WeightOnlyArgs& args, int64_t row, float* dst) {
  const bool is_bf16 = args.dtype == DType::kBFloat16;
  const int64_t elems = args.chunk_elems();
  const int codes = args.int4 ? 16 : 256;
  const bool tabulate = args.group_size > codes;  // always for int4
  float table[256];  // ŵ of code q (int4) or q + 128 (int8) in the current group
  int64_t table_group = -1;
  float scale = 0.0f, offset = 0.0f;
  const int64_t chunks_per_group = args.group_size / elems;
  for (int64_t c = 0; c < args.chunks_per_row(); ++c) {
    const uint8_t* chunk = args.w + args.w_addr.chunk_offset(row, c);
    const int64_t group = c / chunks_per_group;
    if (group != table_group) {
      // s_T, o_T: the parameters rounded to the activation dtype once per group.
      const int64_t at_group = group * args.params_group_stride;
      scale = wonly::round_to_act(args.param(args.scales, row * args.ld_scales + at_group), is_bf16);
      offset = args.offsets ? wonly::round_to_act(args.param(args.offsets, row * args.ld_offsets + at_group), is_bf16)
                            : 0.0f;
      if (tabulate) {
        const int first = args.int4 ? 0 : -128;
        for (int i = 0; i < codes; ++i) table[i] = wonly::dequant_exact(first + i, scale, offset, is_bf16);
      }
      table_group = group;
    }
    float* out = dst + c * elems;
    if (args.int4) {
      for (int64_t b = 0; b < elems / 2; ++b) {  // element 2b: the low nibble of byte b (wonly::int4_at)
        out[2 * b] = table[chunk[b] & 0x0f];
        out[2 * b + 1] = table[chunk[b] >> 4];
      }
    } else if (tabulate) {
      for (int64_t j = 0; j < elems; ++j) out[j] = table[static_cast<int8_t>(chunk[j]) + 128];
    } else {
      for (int64_t j = 0; j < elems; ++j) out[j] = wonly::dequant_exact(static_cast<int8_t>(chunk[j]), scale, offset, is_bf16);
    }
  }
}

}  // namespace

void weight_only_mm_cpu(const WeightOnlyArgs& args) {
  const int64_t m = args.m, n = args.n, k = args.k;  // k: a multiple of 32 (int4) or 16 (int8)
  std::vector<float> a(static_cast<size_t>(m * k));
#pragma omp parallel for schedule(static)
  for (int64_t row = 0; row < m; ++row) {
    for (int64_t i = 0; i < k; ++i) a[row * k + i] = load_float(args.a, row * args.lda + i, args.dtype);
  }
  const int64_t panels = (n + kPanelRows - 1) / kPanelRows;
#pragma omp parallel
  {
    std::vector<float> panel(static_cast<size_t>(kPanelRows * k));
    std::vector<float> lanes(static_cast<size_t>(kTokenBlock * kPanelRows * kDotLanes));
    std::vector<float> dots(static_cast<size_t>(kTokenBlock * kPanelRows));
#pragma omp for schedule(static)
    for (int64_t p = 0; p < panels; ++p) {
      const int64_t col0 = p * kPanelRows;
      const int64_t cols = std::min(n, col0 + kPanelRows) - col0;
      for (int64_t c = 0; c < cols; ++c) dequantize_row(args, col0 + c, &panel[c * k]);
      for (int64_t t0 = 0; t0 < m; t0 += kTokenBlock) {
        const int64_t tokens = std::min(m, t0 + kTokenBlock) - t0;
        dot_panel(dots.data(), lanes.data(), &a[t0 * k], k, tokens, panel.data(), k, cols, k);
        for (int64_t t = 0; t < tokens; ++t) {
          for (int64_t c = 0; c < cols; ++c) {
            const int64_t col = col0 + c;
            float value = dots[t * cols + c];
            if (args.bias) value = wonly::add_bias(value, load_float(args.bias, col, args.dtype));
            store_float(args.out, (t0 + t) * args.ldo + col, args.dtype, value);
          }
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
