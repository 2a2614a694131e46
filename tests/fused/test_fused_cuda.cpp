// CUDA fused ops against the CPU backend on random data: the issue's hidden
// sizes {1 … 14336} × tokens {1, 5, 128, 2048} for every op, then every op ×
// dtype × output × scale mode × option on odd shapes, padded rows (the scalar,
// unaligned path) and rows long enough for the streaming kernel. Outputs are
// poisoned before each run.
//
// Both backends evaluate the same fused_math.h formulas. The norms differ in
// the order of their fp32 row sums, the activations (SiLU-and-mul, GELU) by
// the few ulps of the GPU's SFU exp / reciprocal (fused_fast_math.cuh), so:
// scales within 1e-5 relative, zero points within 1, q − z (fp8: code
// ordinal) within 1 — the issue's tolerance. The residual update is a single
// rounding of the same fp32 sum: exact.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "common/cuda_buffer.h"
#include "fused/fused_problem.h"

namespace qgemm::test {
namespace {

const Device kGpu = Device::cuda(0);

struct DeviceCopy {
  CudaBuffer x, residual, weight, beta, bias, scale_a, scale_w, residual_scale, q, scale, azp;
  explicit DeviceCopy(const FusedBuffers& b)
      : x(b.x), residual(b.residual), weight(b.weight), beta(b.beta), bias(b.bias), scale_a(b.scale_a),
        scale_w(b.scale_w), residual_scale(b.residual_scale), q(b.q), scale(b.scale), azp(b.azp) {}
  FusedPointers pointers() const {
    return {x.get(), residual.get(), weight.get(), beta.get(), bias.get(), scale_a.get(), scale_w.get(),
            residual_scale.get(), q.get(), scale.get(), azp.get(), kGpu};
  }
};

void compare(const FusedCase& c, const FusedBuffers& cpu, const FusedBuffers& gpu) {
  EXPECT_EQ(gpu.residual, cpu.residual) << "residual";
  const bool dynamic = c.mode == FusedScale::kDynamicPerToken;
  int64_t bad = 0, off_by_one = 0;
  for (int64_t t = 0; t < c.tokens; ++t) {
    const int64_t st = dynamic ? t : 0;
    if (dynamic) {
      const float s_cpu = scale_at(cpu, st), s_gpu = scale_at(gpu, st);
      EXPECT_NEAR(s_gpu, s_cpu, 1e-5 * s_cpu) << "scale row " << t;
      EXPECT_LE(std::abs(azp_at(gpu, st) - azp_at(cpu, st)), 1) << "azp row " << t;
    }
    for (int64_t h = 0; h < c.hidden; ++h) {
      const int q_cpu = q_ordinal(c, cpu, t, h, azp_at(cpu, st));
      const int q_gpu = q_ordinal(c, gpu, t, h, azp_at(gpu, st));
      if (std::abs(q_gpu - q_cpu) > 1) {
        if (bad++ < 5) ADD_FAILURE() << "q[" << t << "," << h << "]: gpu " << q_gpu << ", cpu " << q_cpu;
      }
      off_by_one += std::abs(q_gpu - q_cpu) == 1;
    }
  }
  EXPECT_EQ(bad, 0);
  // A step of difference needs y on a rounding boundary to within a few
  // ulps: rare. A systematic error (a wrong rounding mode, an operand off by
  // a ulp everywhere) would move far more than 1 % of the codes.
  EXPECT_LE(off_by_one, 2 + c.tokens * c.hidden / 100) << "codes one step off";
}

// `edit` changes the random inputs before both backends run.
void run_case(const FusedCase& c, const std::function<void(FusedBuffers&)>& edit = {}) {
  FusedBuffers cpu = make_buffers(c, static_cast<uint64_t>(c.tokens * 1000003 + c.hidden * 7 + static_cast<int>(c.kind)));
  if (edit) edit(cpu);
  DeviceCopy dev(cpu);
  dev.q.poison();
  if (c.mode == FusedScale::kDynamicPerToken) {
    dev.scale.poison();
    dev.azp.poison();
  }
  run_fused(c, dev.pointers());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  FusedBuffers gpu = cpu;
  dev.q.download(gpu.q);
  dev.scale.download(gpu.scale);
  dev.azp.download(gpu.azp);
  dev.residual.download(gpu.residual);
  run_fused(c, host_pointers(cpu));
  compare(c, cpu, gpu);
}

class FusedCuda : public ::testing::TestWithParam<FusedCase> {
 protected:
  void SetUp() override { QGEMM_SKIP_WITHOUT_GPU(); }
};

TEST_P(FusedCuda, MatchesCpu) { run_case(GetParam()); }

constexpr FusedKind kAllKinds[] = {FusedKind::kRmsNorm,        FusedKind::kAddRmsNorm, FusedKind::kLayerNorm,
                                   FusedKind::kLayerNormInt32, FusedKind::kSiluMul,    FusedKind::kGelu,
                                   FusedKind::kGeluInt32};

// The issue's grid, bf16 (int32 for the int32 forms) → int8, dynamic per token.
std::vector<FusedCase> issue_grid() {
  std::vector<FusedCase> cases;
  for (FusedKind kind : kAllKinds) {
    for (int64_t n : {1, 8, 100, 384, 768, 4096, 5120, 8192, 14336}) {
      for (int64_t t : {1, 5, 128, 2048}) {
        FusedCase c;
        c.kind = kind, c.tokens = t, c.hidden = n;
        cases.push_back(c);
      }
    }
  }
  return cases;
}

// Every dtype × output × mode, on shapes that take each launch config: the
// vector path (N = 4096, 14336; fp32 rows of 14336 take 8 items), the scalar
// path (N = 100: 1 item, 3001: 8 items), and the streaming kernel
// (N = 40000 vector, 9001 scalar).
std::vector<FusedCase> mode_grid() {
  std::vector<FusedCase> cases;
  for (FusedKind kind : kAllKinds) {
    for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
      for (DType q : {DType::kInt8, DType::kFloat8E4M3}) {
        for (int mode = 0; mode < 4; ++mode) {  // dynamic, static, dynamic asym, static asym
          if (mode >= 2 && q != DType::kInt8) continue;
          for (int64_t n : {100, 3001, 4096, 14336}) {
            FusedCase c;
            c.kind = kind, c.dtype = dtype, c.q = q, c.tokens = 37, c.hidden = n;
            c.mode = mode % 2 ? FusedScale::kStatic : FusedScale::kDynamicPerToken;
            c.asymmetric = mode >= 2;
            cases.push_back(c);
          }
        }
      }
    }
    for (int64_t n : {40000, 9001}) {
      FusedCase c;
      c.kind = kind, c.tokens = 6, c.hidden = n;
      cases.push_back(c);
      c.mode = FusedScale::kStatic, c.asymmetric = true;
      cases.push_back(c);
    }
  }
  return cases;
}

// Options: optional inputs, GELU tanh, narrow range, per-tensor scales,
// per-token residual scales, padded (unaligned) rows, eps = 0.
std::vector<FusedCase> option_grid() {
  std::vector<FusedCase> cases;
  for (FusedKind kind : kAllKinds) {
    for (int variant = 0; variant < 6; ++variant) {
      FusedCase c;
      c.kind = kind, c.tokens = 19, c.hidden = 1024;
      c.bias = variant % 2 == 0;
      c.residual = variant % 3 != 0;
      c.gelu_tanh = variant % 2 == 1;
      c.narrow_range = variant == 2;
      c.per_token_a = variant != 3, c.per_channel_w = variant != 4;
      c.residual_per_token = variant >= 3;
      c.pad = variant == 5 ? 3 : (variant == 4 ? 8 : 0);
      c.eps = variant == 1 ? 0.0f : 1e-6f;
      cases.push_back(c);
    }
  }
  return cases;
}

auto case_name = [](const auto& info) { return info.param.name(info.index); };

INSTANTIATE_TEST_SUITE_P(IssueGrid, FusedCuda, ::testing::ValuesIn(issue_grid()), case_name);
INSTANTIATE_TEST_SUITE_P(Modes, FusedCuda, ::testing::ValuesIn(mode_grid()), case_name);
INSTANTIATE_TEST_SUITE_P(Options, FusedCuda, ::testing::ValuesIn(option_grid()), case_name);

// Rows holding ±Inf or NaN: a dynamic row's scale comes from its finite
// values only, which the GPU finds with a second, finite-only reduction of
// the rare row whose fast statistic is infinite (fused_row_kernel.cuh). GELU
// from 16-bit input has warp 0 compute the code (code_by_warp0), the other
// ops every warp; SiLU-and-mul's rows are checked bit for bit against
// quantize() in test_fused_quant_parity.cpp.
TEST(FusedCudaNonFinite, RowsWithInfAndNanMatchCpu) {
  QGEMM_SKIP_WITHOUT_GPU();
  for (FusedKind kind : {FusedKind::kGelu, FusedKind::kRmsNorm, FusedKind::kLayerNorm}) {
    for (DType dtype : {DType::kBFloat16, DType::kFloat16}) {
      for (int64_t n : {1000, 1024, 4096}) {  // any row, rows that fill their chunks
        for (bool asymmetric : {false, true}) {
          FusedCase c;
          c.kind = kind, c.dtype = dtype, c.tokens = 9, c.hidden = n, c.asymmetric = asymmetric;
          SCOPED_TRACE(c.name(0));
          const bool bf16 = dtype == DType::kBFloat16;
          const uint16_t inf = bf16 ? 0x7f80 : 0x7c00, ninf = bf16 ? 0xff80 : 0xfc00, nan = bf16 ? 0x7fc0 : 0x7e00;
          run_case(c, [&](FusedBuffers& b) {
            auto* x = reinterpret_cast<uint16_t*>(b.x.data());
            x[1 * n + 3] = inf;
            x[2 * n + 5] = ninf;
            x[3 * n + 7] = nan;
            x[4 * n + 11] = inf, x[4 * n + n - 1] = ninf;
            for (int64_t h = 0; h < n; ++h) x[5 * n + h] = h % 3 ? inf : ninf;  // no finite value but GELU(−Inf) = 0
          });
        }
      }
    }
  }
}

// LayerNorm rows far from zero mean: v = 64 + 0.5·k for integers k in
// −4…4, so |mean| ≈ 50·σ. Every partial sum of these bf16 values, and every
// mean the GPU's merge tree (fused_row_kernel.cuh, block_merge) merges from
// groups of equal count, lies on a grid fp32 holds exactly, so both backends
// get the exact mean; the general merge (N = 1000: 125 threads of 8 values
// in a block of 128) rounds its weights and is held to the usual tolerance
// too. The Σv² − n·mean² shortcut would lose log2(50²) ≈ 11 of fp32's 24
// bits to cancellation and move the scales by far more than 1e-5. Rows at
// N = 1000, 1024, 4096 take the one-item merge tree, N = 8192 (and 4096 at
// 600 tokens) two items and two sum trees.
TEST(FusedCudaLayerNorm, RowsFarFromZeroMeanMatchCpu) {
  QGEMM_SKIP_WITHOUT_GPU();
  for (int64_t tokens : {9, 600}) {
    for (int64_t n : {1000, 1024, 4096, 8192}) {
      for (bool asymmetric : {false, true}) {
        FusedCase c;
        c.kind = FusedKind::kLayerNorm, c.tokens = tokens, c.hidden = n, c.asymmetric = asymmetric;
        c.bias = false, c.residual = false;
        SCOPED_TRACE(c.name(0));
        run_case(c, [&](FusedBuffers& b) {
          auto* x = reinterpret_cast<uint16_t*>(b.x.data());
          for (int64_t i = 0; i < tokens * n; ++i) {
            const float k = std::nearbyint(uniform_at(17, static_cast<uint64_t>(i), -4.49f, 4.49f));
            x[i] = numeric::float_to_bf16_bits(64.0f + 0.5f * k);
          }
        });
      }
    }
  }
}

// LayerNorm rows of one huge finite value (bf16 1e20, every row but the
// first): mean = v exactly and Σ(v − mean)² = 0 on both backends, so y = β.
// N = 1000 leaves three threads of the block without values, whose empty
// groups the merge tree must pass over rather than weigh by 0 (δ² of 1e20
// overflows, and ∞·0 is NaN).
TEST(FusedCudaLayerNorm, RowsOfOneHugeValueMatchCpu) {
  QGEMM_SKIP_WITHOUT_GPU();
  for (int64_t n : {1000, 1024}) {
    FusedCase c;
    c.kind = FusedKind::kLayerNorm, c.tokens = 5, c.hidden = n, c.bias = false, c.residual = false;
    SCOPED_TRACE(c.name(0));
    run_case(c, [&](FusedBuffers& b) {
      auto* x = reinterpret_cast<uint16_t*>(b.x.data());
      for (int64_t i = n; i < c.tokens * n; ++i) x[i] = numeric::float_to_bf16_bits(1e20f);
    });
  }
}

// The op runs on the given stream (no hidden default-stream work): enqueue
// behind a busy stream, then synchronize only that stream.
TEST(FusedCudaStreams, RunsOnTheGivenStream) {
  QGEMM_SKIP_WITHOUT_GPU();
  FusedCase c;
  c.kind = FusedKind::kAddRmsNorm, c.tokens = 64, c.hidden = 4096;
  FusedBuffers cpu = make_buffers(c, 99);
  DeviceCopy dev(cpu);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  run_fused(c, dev.pointers(), stream);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  FusedBuffers gpu = cpu;
  dev.q.download(gpu.q);
  dev.scale.download(gpu.scale);
  dev.residual.download(gpu.residual);
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  run_fused(c, host_pointers(cpu));
  compare(c, cpu, gpu);
}

}  // namespace
}  // namespace qgemm::test
