// CUDA scaled_mm / scaled_mm_azp / azp_adj against the CPU backend on random
// problems: every epilogue × scale granularity × input dtype × output dtype
// over many shapes (odd, tiny, padded). int8 accumulates exactly, so outputs
// must agree with the CPU to within one ulp of the output dtype; fp8 within
// the bound of tensor-core fp8 accumulation (test_scaled_mm_kernels.cpp says
// why: 2^-9 of s_a·s_b·Σ|a·b| plus one output ulp). Outputs are poisoned
// before each run.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/cuda_buffer.h"
#include "gemm/gemm_compare.h"
#include "gemm/gemm_problem.h"

namespace qgemm::test {
namespace {

const Device kGpu = Device::cuda(0);

// Runs the problem on the GPU into `gpu_out` (host copy, same layout as p.out).
void run_on_gpu(const GemmProblem& p, std::vector<uint8_t>& gpu_out, cudaStream_t stream = nullptr) {
  CudaBuffer a(p.a), b(p.b), sa(p.scale_a), sb(p.scale_b), bias(p.bias), azp(p.azp),
      azp_adj(p.azp_adj), out(p.out.size());
  out.poison();
  if (p.c.zero_point == ZeroPoint::kNone) {
    scaled_mm(p.out_view(out.get(), kGpu), p.a_view(a.get(), kGpu), p.b_view(b.get(), kGpu),
              p.scale_a_view(sa.get(), kGpu), p.scale_b_view(sb.get(), kGpu),
              p.bias_view(bias.get(), kGpu), stream);
  } else {
    scaled_mm_azp(p.out_view(out.get(), kGpu), p.a_view(a.get(), kGpu), p.b_view(b.get(), kGpu),
                  p.scale_a_view(sa.get(), kGpu), p.scale_b_view(sb.get(), kGpu),
                  p.azp_adj_view(azp_adj.get(), kGpu), p.azp_view(azp.get(), kGpu),
                  p.bias_view(bias.get(), kGpu), stream);
  }
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  out.download(gpu_out);
}

class ScaledMmCuda : public ::testing::TestWithParam<GemmCase> {
 protected:
  void SetUp() override { QGEMM_SKIP_WITHOUT_GPU(); }
};

TEST_P(ScaledMmCuda, MatchesCpu) {
  auto rng = make_rng(static_cast<uint64_t>(GetParam().m * 7919 + GetParam().n * 31 + GetParam().k));
  GemmProblem p(GetParam(), rng);
  std::vector<uint8_t> gpu_out;
  run_on_gpu(p, gpu_out);
  EXPECT_EQ(compare_all(p, gpu_out, "scaled_mm", true), 0);
}

std::vector<GemmCase> cuda_cases() {
  std::vector<GemmCase> cases;
  const int64_t shapes[][3] = {{1, 32, 32}, {3, 17, 100}, {17, 48, 64}, {100, 1000, 48}, {128, 256, 512}, {255, 96, 96}};
  for (const auto& s : shapes) {
    const std::vector<GemmCase> variants = epilogue_cases(s[0], s[1], s[2]);
    cases.insert(cases.end(), variants.begin(), variants.end());
  }
  GemmCase padded;
  padded.m = 33, padded.n = 64, padded.k = 96;
  padded.lda_pad = 32, padded.ldb_pad = 16, padded.ldo_pad = 8;
  cases.push_back(padded);
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllEpilogues, ScaledMmCuda, ::testing::ValuesIn(cuda_cases()),
                         [](const auto& info) { return gtest_name(info.param, info.index); });

TEST(AzpAdjCuda, MatchesCpu) {
  QGEMM_SKIP_WITHOUT_GPU();
  auto rng = make_rng();
  const int64_t k = 1000, n = 333, ldb = 1024;
  const auto b = random_int8(rng, n * ldb);
  std::vector<int32_t> cpu(n), gpu;
  const auto b_host = TensorView::strided(b.data(), DType::kInt8, {k, n}, {1, ldb});
  azp_adj(TensorView(cpu.data(), DType::kInt32, {n}), b_host, 5);
  CudaBuffer b_dev(b), out_dev(n * sizeof(int32_t));
  out_dev.poison();
  azp_adj(TensorView(out_dev.get(), DType::kInt32, {n}, kGpu),
          TensorView::strided(b_dev.get(), DType::kInt8, {k, n}, {1, ldb}, kGpu), 5);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  out_dev.download(gpu);
  EXPECT_EQ(gpu, cpu);
}

}  // namespace
}  // namespace qgemm::test
