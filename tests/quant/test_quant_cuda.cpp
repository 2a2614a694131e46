// CUDA quantize / dequantize against the CPU backend: quantized values,
// scales, zero points and dequantized values must be bit-identical, for every
// mode × dtype over the hidden sizes and token counts, with outputs
// poisoned before each run.
#include <gtest/gtest.h>

#include <vector>

#include "common/cuda_buffer.h"
#include "quant/quant_problem.h"

namespace qgemm::test {
namespace {

const Device kGpu = Device::cuda(0);

class QuantCuda : public ::testing::TestWithParam<QuantCase> {
 protected:
  void SetUp() override { QGEMM_SKIP_WITHOUT_GPU(); }
};

TEST_P(QuantCuda, BitIdenticalToCpu) {
  const QuantCase& c = GetParam();
  auto rng = make_rng(static_cast<uint64_t>(c.tokens * 7 + c.hidden));
  QuantBuffers cpu(c, rng);
  CudaBuffer in(cpu.in), q(cpu.q.size()), scale(cpu.scale), azp(cpu.azp), back(cpu.dequantized.size());
  q.poison();
  back.poison();
  if (c.options.mode != QuantMode::kStaticPerTensor) {
    scale.poison();
    azp.poison();
  }
  quantize(cpu.q_view(q.get(), kGpu), cpu.scale_view(scale.get(), DType::kFloat32, kGpu), cpu.azp_view(azp.get(), kGpu),
           cpu.in_view(in.get(), kGpu), c.options);
  dequantize(cpu.dequantized_view(back.get(), kGpu), cpu.q_view(q.get(), kGpu),
             cpu.scale_view(scale.get(), DType::kFloat32, kGpu), cpu.azp_view(azp.get(), kGpu), c.options);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint8_t> gpu_q, gpu_back;
  std::vector<float> gpu_scale;
  std::vector<int32_t> gpu_azp;
  q.download(gpu_q);
  back.download(gpu_back);
  scale.download(gpu_scale);
  azp.download(gpu_azp);

  cpu.quantize_cpu();
  cpu.dequantize_cpu();
  EXPECT_EQ(gpu_scale, cpu.scale) << c.name();
  EXPECT_EQ(gpu_azp, cpu.azp) << c.name();
  int64_t bad_q = 0, bad_back = 0;
  for (size_t i = 0; i < gpu_q.size(); ++i) bad_q += gpu_q[i] != cpu.q[i];
  for (size_t i = 0; i < gpu_back.size(); ++i) bad_back += gpu_back[i] != cpu.dequantized[i];
  EXPECT_EQ(bad_q, 0) << c.name();
  EXPECT_EQ(bad_back, 0) << c.name();
}

std::vector<QuantCase> cuda_cases() {
  std::vector<QuantCase> cases;
  // The grid for the common case (bf16 → int8 per token), then every
  // mode × dtype on a smaller grid.
  for (int64_t h : {1, 7, 64, 4096, 5120, 8192, 14336}) {
    for (int64_t t : {1, 3, 64, 1000, 4096}) {
      if (t * h > 4096 * 8192) continue;  // keep the CPU oracle quick
      QuantCase c;
      c.tokens = t, c.hidden = h;
      cases.push_back(c);
    }
  }
  const int64_t shapes[][2] = {{1, 4096}, {3, 7}, {64, 5120}, {37, 384}, {5, 14336}};
  for (DType in : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    for (DType quant : {DType::kInt8, DType::kFloat8E4M3}) {
      for (const auto& s : shapes) {
        for (int variant = 0; variant < 6; ++variant) {
          QuantCase c;
          c.tokens = s[0], c.hidden = s[1], c.in = in, c.quant = quant;
          c.options.mode = variant < 2 ? QuantMode::kDynamicPerToken
                           : variant < 5 ? QuantMode::kDynamicPerGroup
                                         : QuantMode::kStaticPerTensor;
          c.options.symmetric = variant % 2 == 0 || quant != DType::kInt8;
          c.options.narrow_range = variant == 4;
          c.options.group_size = variant == 2 ? 32 : variant == 3 ? 64 : 128;
          c.scale_col_major = variant == 3;
          if (c.options.mode == QuantMode::kDynamicPerGroup && c.hidden % c.options.group_size != 0) {
            c.options.group_size = c.hidden;
          }
          cases.push_back(c);
        }
      }
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Modes, QuantCuda, ::testing::ValuesIn(cuda_cases()),
                         [](const auto& info) { return info.param.name() + "_" + std::to_string(info.index); });

}  // namespace
}  // namespace qgemm::test
