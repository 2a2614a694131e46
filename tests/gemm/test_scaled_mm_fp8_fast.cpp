// scaled_mm with Fp8Accumulation::kFast (docs/gemm.md, "fp8 fast accumulation").
//
// CPU (every build): the flag never changes the CPU result (the CPU is the
// precise reference, for fp8 and int8 alike), and the tolerance used for the
// GPU's fast path is tight enough to catch a wrong scale or a missing bias on
// the data the GPU tests use — the test can fail.
// GPU (skipped without one): the public API with kFast across the dispatch
// buckets, odd M, K not a multiple of 128, sub-matrix views and both output
// dtypes, and the two fast kernels forced on every epilogue variant, against
// the CPU backend; on sm_90 the dispatcher picks the fast tiles.
//
// The tolerance (fast_bound below). With fast accumulation the CUTLASS
// mainloop issues one wgmma per 32 fp8 products along K (k = 32 per
// instruction) into one accumulator for the whole K, never promoting it into
// separate fp32 registers. Model of the tensor core (Hopper fp8; the
// accumulator format measured on the H100 is e8m13, the "~14 bits" of the
// DeepSeek-V3 report; Khattak & Mikaitis, arXiv:2512.07004, model the
// details): each instruction aligns its 32 products and the incoming
// accumulator C to the largest exponent among them, keeps 13 fraction bits
// of each (dropping the rest: truncation toward zero), adds, and truncates
// the sum to 13 fraction bits again — possibly in two halves of 16 products.
// Per instruction s, with e the exponent of the largest addend:
//   - each of the 32 products loses < 2^(e−13) ≤ 2^-13 · max(|C|, |p|),
//   - each of ≤ 2 truncations of the sum loses < 2^-13 · |sum|.
// Truncation toward zero never grows a magnitude, so every partial sum the
// hardware holds, and every product, is at most S_s = Σ_{k < 32·s} |a_k·b_k|
// (the absolute prefix sum through instruction s). Hence instruction s loses
// < 34 · 2^-13 · S_s, and over the ceil(K/32) instructions
//   |acc_fast − acc_exact| < 34 · 2^-13 · W,
//   W = Σ_s S_s = Σ_k (ceil(K/32) − floor(k/32)) · |a_k·b_k|  ≤ ceil(K/32) · S,
// with S = Σ_k |a_k·b_k|: the bound grows linearly with K (at most
// 2^-13·34·ceil(K/32)·S; about half of that when the |a_k·b_k| are alike).
// A simulation of this model (truncating every product, all-positive and
// mostly-positive data, blocks of 32 and 16, K = 208 … 16400) never exceeded
// 13 % of the bound: the bound is a worst case, not an estimate. On top: the
// precise path's own 2^-9 · S (the kernels that keep the precise mainloop
// under kFast: skinny, 64×128) and one ulp of the output dtype (GPU and CPU
// may round the final fp32 value to different neighbours). All of it is
// scaled by s_a·s_b, like the accumulator. The epilogue's two fp32 roundings
// are inside the output ulp.
//
// Why this can fail: on zero-mean random data |D| is of order S/√K, far below
// W, so a wrong scale could slip through there. The tests therefore also run
// "positive-biased" data (a and b mostly positive: |acc| ≈ 0.56 · S), where
// the bound is 14 % of |acc| at K = 1040 and 46 % at K = 4112: a scale off
// by 1.25× (2× at K = 4112), a per-channel scale read one column off, or a
// missing bias (|bias| mostly ≫ |D| here) moves almost every element outside
// it. FastBoundCatchesErrors checks exactly that on the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gemm/gemm_device_problem.h"
#include "gemm/gemm_problem.h"
#include "qgemm/error.h"
#include "qgemm/gemm.h"
#if QGEMM_WITH_CUDA
#include <cuda_runtime_api.h>

#include "common/cuda_buffer.h"
#include "core/cuda_dram_bandwidth.h"
#include "gemm/cuda/dispatch_table.h"
#include "gemm/cuda/scaled_mm_cuda.h"
#endif

namespace qgemm::test {
namespace {

// Makes a and b "mostly positive": |x| with 1 in 8 values negated, so most
// products are positive and |Σ a·b| ≈ 0.6 · Σ |a·b| (see the header).
void make_positive_biased(GemmProblem& p, std::mt19937_64& rng) {
  std::bernoulli_distribution negate(0.125);
  auto flip = [&](std::vector<uint8_t>& v) {
    for (auto& x : v) x = static_cast<uint8_t>((x & 0x7f) | (negate(rng) ? 0x80 : 0));
  };
  flip(p.a);
  flip(p.b);
}

// |a|, |b| as doubles (decoded once), for the sums of the bound:
// S = Σ_k |a_ik·b_kj| and W = Σ_k (ceil(K/32) − floor(k/32)) · |a_ik·b_kj|.
struct AbsOperands {
  std::vector<double> a, b;  // [M][K], [N][K]
  std::vector<double> weight;  // ceil(K/32) − floor(k/32)
  int64_t k = 0;
  explicit AbsOperands(const GemmProblem& p) : a(p.c.m * p.c.k), b(p.c.n * p.c.k), weight(p.c.k), k(p.c.k) {
    for (int64_t i = 0; i < p.c.m; ++i)
      for (int64_t kk = 0; kk < k; ++kk) a[i * k + kk] = std::fabs(p.a_value(i, kk));
    for (int64_t j = 0; j < p.c.n; ++j)
      for (int64_t kk = 0; kk < k; ++kk) b[j * k + kk] = std::fabs(p.b_value(kk, j));
    const int64_t instructions = (k + 31) / 32;
    for (int64_t kk = 0; kk < k; ++kk) weight[kk] = static_cast<double>(instructions - kk / 32);
  }
  // {S, W} of element (i, j).
  std::pair<double, double> sums(int64_t i, int64_t j) const {
    double s = 0, w = 0;
    const double* x = &a[i * k];
    const double* y = &b[j * k];
    for (int64_t kk = 0; kk < k; ++kk) {
      const double prod = x[kk] * y[kk];
      s += prod;
      w += prod * weight[kk];
    }
    return {s, w};
  }
};

// The bound derived in the header on |D_fast − D_exact| before the output
// rounding: s_a·s_b · (2^-9 · S + 34 · 2^-13 · W).
double fast_bound(const GemmProblem& p, const AbsOperands& ops, int64_t i, int64_t j) {
  const auto [s, w] = ops.sums(i, j);
  return p.scale(i, j) * (std::ldexp(1.0, -9) * s + 34 * std::ldexp(1.0, -13) * w);
}

// Elements of `got` (layout of p.out) outside reference ± bound, where
// `reference` is the CPU backend's output for p. Reports the first few
// failures when `report`.
int64_t fast_mismatches(const GemmProblem& p, const AbsOperands& ops, const std::vector<uint8_t>& reference,
                        const std::vector<uint8_t>& got, bool report, const std::string& what) {
  int64_t bad = 0;
  for (int64_t i = 0; i < p.c.m; ++i) {
    for (int64_t j = 0; j < p.c.n; ++j) {
      const double want = detail::load_float(reference.data(), i * p.ldo + j, p.c.out);
      const double have = detail::load_float(got.data(), i * p.ldo + j, p.c.out);
      const double tol = fast_bound(p, ops, i, j) +
                         unit_roundoff(p.c.out) * std::fabs(want) + subnormal_spacing(p.c.out);
      if (!(std::fabs(have - want) <= tol)) {
        if (report && bad < 5) {
          ADD_FAILURE() << what << " " << p.c.name() << ": [" << i << "," << j << "] got " << have
                        << ", cpu " << want << " ± " << tol;
        }
        ++bad;
      }
    }
  }
  return bad;
}

// Runs p on the CPU with the given accumulation request; returns the output.
std::vector<uint8_t> cpu_output(GemmProblem& p, Fp8Accumulation accumulation) {
  poison(p.out.data(), p.out.size());
  scaled_mm(p.out_view(p.out.data()), p.a_view(p.a.data()), p.b_view(p.b.data()),
            p.scale_a_view(p.scale_a.data()), p.scale_b_view(p.scale_b.data()), p.bias_view(p.bias.data()),
            nullptr, accumulation);
  return p.out;
}

GemmCase fp8_case(int64_t m, int64_t n, int64_t k, DType out = DType::kBFloat16) {
  GemmCase c;
  c.m = m, c.n = n, c.k = k;
  c.input = DType::kFloat8E4M3;
  c.out = out;
  return c;
}

// ---- CPU ----------------------------------------------------------------

// The CPU computes the precise result for either request: same bits.
TEST(ScaledMmFp8FastCpu, SameBitsAsPrecise) {
  for (DType input : {DType::kFloat8E4M3, DType::kInt8}) {
    for (DType out : {DType::kBFloat16, DType::kFloat16, DType::kFloat32}) {
      GemmCase c = fp8_case(37, 50, 300, out);
      c.input = input;
      auto rng = make_rng(11);
      GemmProblem p(c, rng);
      const std::vector<uint8_t> precise = cpu_output(p, Fp8Accumulation::kPrecise);
      const std::vector<uint8_t> fast = cpu_output(p, Fp8Accumulation::kFast);
      EXPECT_EQ(precise, fast) << c.name();
      EXPECT_EQ(count_mismatches(p), 0) << c.name();  // and it is the exact reference's
    }
  }
}

// The fast bound accepts the right answer and rejects wrong ones: a missing
// bias, a scale off by 1.25× (2× at K = 4112, where the bound is 46 % of
// |acc|), a per-channel scale read at the wrong column. The scale checks run
// without bias, where one output ulp of a large bias would otherwise hide
// them (the GPU tests run both).
TEST(ScaledMmFp8FastCpu, FastBoundCatchesErrors) {
  for (const GemmCase& base : {fp8_case(33, 48, 1040), fp8_case(21, 40, 208, DType::kFloat16),
                               fp8_case(20, 64, 4112, DType::kFloat16)}) {
    for (bool bias : {true, false}) {
      GemmCase c = base;
      c.bias = bias;
      auto rng = make_rng(static_cast<uint64_t>(c.k));
      GemmProblem p(c, rng);
      make_positive_biased(p, rng);
      const AbsOperands ops(p);
      const std::vector<uint8_t> reference = cpu_output(p, Fp8Accumulation::kPrecise);
      const int64_t total = c.m * c.n;
      EXPECT_EQ(fast_mismatches(p, ops, reference, reference, true, "self"), 0);
      if (bias) {
        GemmProblem no_bias = p;
        no_bias.c.bias = false;
        const int64_t missed = fast_mismatches(p, ops, reference, cpu_output(no_bias, Fp8Accumulation::kFast), false, "");
        EXPECT_GE(missed, total * 3 / 4) << c.name() << ": a missing bias must fail the bound";
        continue;
      }
      const float factor = c.k <= 1040 ? 1.25f : 2.0f;
      GemmProblem scaled = p;
      for (float& s : scaled.scale_b) s *= factor;
      const int64_t missed_scale = fast_mismatches(p, ops, reference, cpu_output(scaled, Fp8Accumulation::kFast), false, "");
      EXPECT_GE(missed_scale, total * 9 / 10) << c.name() << ": a scale off by " << factor << "× must fail the bound";

      GemmProblem shifted = p;
      for (int64_t j = 0; j < c.n; ++j) shifted.scale_b[j] = p.scale_b[(j + 1) % c.n];
      const int64_t missed_index = fast_mismatches(p, ops, reference, cpu_output(shifted, Fp8Accumulation::kFast), false, "");
      EXPECT_GE(missed_index, total / 2) << c.name() << ": scale_b read at the wrong column must fail the bound";
    }
  }
}

#if QGEMM_WITH_CUDA
// ---- GPU ----------------------------------------------------------------

const Device kGpu = Device::cuda(0);

// The fast-accumulation arguments of a problem's device copy.
detail::ScaledMmArgs fast_args(const DeviceProblem& d, const GemmProblem& p) {
  detail::ScaledMmArgs r = d.args(p);
  r.fp8_fast_accum = true;
  return r;
}

int compute_capability() {
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  return major * 10 + minor;
}

struct FastShape {
  int64_t m, n, k;
  int64_t lda_pad = 0, ldb_pad = 0, ldo_pad = 0;
  DType out = DType::kBFloat16;
};

// M across the sm_90 fast table's buckets (skinny ≤ 16, precise 64×128
// ≤ 128, fast 128×128 ≤ 512 and ragged ≤ 1024, fast 128×256 above), odd M,
// K = 128·q + 16, sub-matrix views, fp16 out, and a long K for the bound.
std::vector<FastShape> fast_shapes() {
  return {
      {1, 512, 4112},           {7, 1024, 1040},           {16, 272, 4096},
      {100, 512, 1040},         {129, 512, 4112},          {255, 1024, 4096, 0, 0, 0, DType::kFloat16},
      {300, 512, 1040, 16, 32, 8}, {512, 768, 2064},        {777, 512, 1040, 0, 0, 0, DType::kFloat16},
      {1100, 256, 4112},        {1040, 128, 16400},        {2049, 272, 208, 48, 16, 24},
      {8200, 8208, 80},  // tile swizzle 8 (dispatch_table.h), ragged bands in M and N
  };
}

class ScaledMmFp8Fast : public ::testing::TestWithParam<FastShape> {
 protected:
  // Any GPU: without a fast kernel (not sm_90) the precise kernels or the
  // fallback run, which are within the bound too.
  void SetUp() override { QGEMM_SKIP_WITHOUT_GPU(); }
};

// Public API, kFast, on zero-mean and on positive-biased data, against the CPU.
TEST_P(ScaledMmFp8Fast, MatchesCpuWithinFastBound) {
  const FastShape& s = GetParam();
  for (bool positive : {false, true}) {
    GemmCase c = fp8_case(s.m, s.n, s.k, s.out);
    c.lda_pad = s.lda_pad, c.ldb_pad = s.ldb_pad, c.ldo_pad = s.ldo_pad;
    c.per_token = positive;  // per-token / per-channel on one, per-tensor scale_a on the other
    auto rng = make_rng(static_cast<uint64_t>(s.m * 977 + s.n * 13 + s.k + positive));
    GemmProblem p(c, rng);
    if (positive) make_positive_biased(p, rng);
    DeviceProblem d(p);
    scaled_mm(p.out_view(d.out.get(), kGpu), p.a_view(d.a.get(), kGpu), p.b_view(d.b.get(), kGpu),
              p.scale_a_view(d.sa.get(), kGpu), p.scale_b_view(d.sb.get(), kGpu),
              p.bias_view(d.bias.get(), kGpu), nullptr, Fp8Accumulation::kFast);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<uint8_t> gpu_out;
    d.out.download(gpu_out);
    const std::vector<uint8_t> reference = cpu_output(p, Fp8Accumulation::kPrecise);
    const AbsOperands ops(p);
    const std::string what = std::string("fast ") + detail::gemm_kernel_name(detail::scaled_mm_cuda_kernel(fast_args(d, p))) +
                             (positive ? " positive" : " zero-mean");
    EXPECT_EQ(fast_mismatches(p, ops, reference, gpu_out, true, what), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, ScaledMmFp8Fast, ::testing::ValuesIn(fast_shapes()),
                         [](const ::testing::TestParamInfo<FastShape>& info) {
                           const FastShape& s = info.param;
                           return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
                                  (s.lda_pad ? "_view" : "") + (s.out == DType::kFloat16 ? "_fp16" : "_bf16");
                         });

// Each fast kernel forced on every epilogue variant (scale granularities,
// bias, bf16 / fp16 out) at shapes with ragged tiles in M, N and K.
TEST(ScaledMmFp8FastKernels, EveryEpilogueMatchesCpu) {
  QGEMM_SKIP_WITHOUT_GPU();
  if (compute_capability() / 10 != 9) GTEST_SKIP() << "the fast fp8 kernels are sm_90a";
  int ran = 0;
  const detail::GemmKernel kernels[] = {detail::GemmKernel::kSm90Wide,    detail::GemmKernel::kSm90Wide192,
                                        detail::GemmKernel::kSm90Wide1x2, detail::GemmKernel::kSm90Square,
                                        detail::GemmKernel::kSm90Narrow,  detail::GemmKernel::kSm90Small1x2,
                                        detail::GemmKernel::kSm90Small2x1, detail::GemmKernel::kSm90Wide80,
                                        detail::GemmKernel::kSm90Wide96,  detail::GemmKernel::kSm90Thin48,
                                        detail::GemmKernel::kSm90Wide80x4, detail::GemmKernel::kSm90Wide96x4,
                                        detail::GemmKernel::kSm90Wide80Pairs, detail::GemmKernel::kSm90Wide96Pairs};
  for (detail::GemmKernel kernel : kernels) {
    for (const FastShape& s : {FastShape{1, 48, 80}, FastShape{130, 272, 208}, FastShape{300, 400, 528}}) {
      for (DType out : {DType::kBFloat16, DType::kFloat16}) {
        for (int granularity = 0; granularity < 4; ++granularity) {
          for (bool bias : {false, true}) {
            GemmCase c = fp8_case(s.m, s.n, s.k, out);
            c.per_token = granularity & 1;
            c.per_channel = granularity & 2;
            c.bias = bias;
            auto rng = make_rng(static_cast<uint64_t>(s.m * 31 + s.k + granularity));
            GemmProblem p(c, rng);
            if (granularity & 1) make_positive_biased(p, rng);
            DeviceProblem d(p);
            ASSERT_TRUE(detail::scaled_mm_cuda_with(fast_args(d, p), kernel))
                << detail::gemm_kernel_name(kernel) << " fast refused " << c.name();
            ++ran;
            ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
            std::vector<uint8_t> gpu_out;
            d.out.download(gpu_out);
            const std::vector<uint8_t> reference = cpu_output(p, Fp8Accumulation::kPrecise);
            const AbsOperands ops(p);
            EXPECT_EQ(fast_mismatches(p, ops, reference, gpu_out, true,
                                      std::string("forced fast ") + detail::gemm_kernel_name(kernel)),
                      0);
          }
        }
      }
    }
  }
  EXPECT_EQ(ran, static_cast<int>(std::size(kernels)) * 3 * 2 * 4 * 2);  // kernels × shapes × outputs × scales × bias
}

// The fast path enqueues one kernel, no workspace, no allocation: it can be
// captured in a CUDA graph and replayed (on every dispatch path the shapes
// reach: fast 128×256, 128×128 and 64×128).
TEST(ScaledMmFp8FastKernels, GraphCaptureAndReplay) {
  QGEMM_SKIP_WITHOUT_GPU();
  for (int64_t m : {64, 256, 2048}) {
    GemmCase c = fp8_case(m, 256, 528);
    auto rng = make_rng(static_cast<uint64_t>(m));
    GemmProblem p(c, rng);
    DeviceProblem d(p);
    cudaStream_t stream = nullptr;
    QGEMM_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    QGEMM_TEST_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    scaled_mm(p.out_view(d.out.get(), kGpu), p.a_view(d.a.get(), kGpu), p.b_view(d.b.get(), kGpu),
              p.scale_a_view(d.sa.get(), kGpu), p.scale_b_view(d.sb.get(), kGpu), p.bias_view(d.bias.get(), kGpu),
              stream, Fp8Accumulation::kFast);
    QGEMM_TEST_CUDA(cudaStreamEndCapture(stream, &graph));
    QGEMM_TEST_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int replay = 0; replay < 2; ++replay) {
      d.out.poison();
      QGEMM_TEST_CUDA(cudaDeviceSynchronize());
      QGEMM_TEST_CUDA(cudaGraphLaunch(exec, stream));
      QGEMM_TEST_CUDA(cudaStreamSynchronize(stream));
      std::vector<uint8_t> gpu_out;
      d.out.download(gpu_out);
      const std::vector<uint8_t> reference = cpu_output(p, Fp8Accumulation::kPrecise);
      EXPECT_EQ(fast_mismatches(p, AbsOperands(p), reference, gpu_out, true, "graph replay"), 0);
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
  }
}

// The sm_90 fast table on this GPU: the skinny kernel up to M = 16
// (precise), int8's tiles above, except where int8's table picks the 64×128
// cluster-2×1 tile (M = 193–256 with N < 6144 here), which fp8 runs as its
// precise kernel. The whole table, GPU-free: test_gemm_dispatch_table.cpp.
TEST(ScaledMmFp8FastKernels, DispatchPicksFastTiles) {
  QGEMM_SKIP_WITHOUT_GPU();
  if (compute_capability() / 10 != 9) GTEST_SKIP() << "the fast table is sm_90's";
  using detail::GemmKernel;
  struct Want {
    int64_t m, n, k;
    GemmKernel kernel;
  };
  int sm_count = 0;
  cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0);
  // K = 4096: short on a GPU with fast DRAM (detail::dram_regime).
  const detail::DramRegime regime = detail::dram_regime(4096, detail::cuda_peak_dram_gbps(0), sm_count);
  const GemmKernel at_1024 = detail::modelled_tile(detail::kSm90Int8Model, 1024, 4096, sm_count, regime);
  const GemmKernel at_4096 = detail::modelled_tile(detail::kSm90Int8Model, 4096, 4096, sm_count, regime);
  const GemmKernel at_64 = detail::thin48_fits(64, 4096, sm_count)              ? GemmKernel::kSm90Thin48
                           : detail::small_tiles_fit_one_wave(64, 4096, sm_count) ? GemmKernel::kSm90Small1x2
                                                                                  : GemmKernel::kSm90Narrow;
  for (const Want& w : {Want{8, 4096, 4096, GemmKernel::kSm90SkinnyStream}, Want{64, 4096, 4096, at_64},
                        Want{256, 4096, 4096, GemmKernel::kSm90Narrow2x1}, Want{1024, 4096, 4096, at_1024},
                        Want{4096, 4096, 4096, at_4096}}) {
    detail::ScaledMmArgs args;
    args.m = w.m, args.n = w.n, args.k = w.k;
    args.input_dtype = DType::kFloat8E4M3;
    args.lda = w.k, args.ldb = w.k, args.ldo = w.n;
    // Any 16-byte aligned non-null address: only the choice is asked for.
    alignas(16) static uint8_t dummy[16];
    args.a = args.b = dummy;
    args.out = dummy;
    args.scale_a = args.scale_b = reinterpret_cast<const float*>(dummy);
    args.fp8_fast_accum = true;
    args.device = kGpu;
    EXPECT_EQ(detail::scaled_mm_cuda_kernel(args), w.kernel) << w.m << "x" << w.n << "x" << w.k;
    // M = 193–256 with N < 6144 runs the precise 64×128 cluster-2×1 kernel (faster there); N ≥ 6144
    // stays fast.
    EXPECT_EQ(detail::scaled_mm_cuda_choice(args).fp8_fast_accum, w.m != 256 && w.m > 16) << w.m;
    if (w.m == 256) {
      args.n = args.ldo = 6144;
      EXPECT_TRUE(detail::scaled_mm_cuda_choice(args).fp8_fast_accum) << "256x6144";
      args.n = args.ldo = w.n;
    }
    args.fp8_fast_accum = false;  // the precise table: the tile its tile model picks above M = 256
    if (w.m >= 512) {
      EXPECT_EQ(detail::scaled_mm_cuda_kernel(args),
                detail::modelled_tile(detail::kSm90Fp8Model, w.m, w.n, sm_count, regime))
          << "precise " << w.m;
    }
  }
}
#endif  // QGEMM_WITH_CUDA

}  // namespace
}  // namespace qgemm::test
