// CUDA quantize / dequantize against the CPU backend: quantized values,
// scales, zero points and dequantized values must be bit-identical, for every
// mode × dtype over the hidden sizes and token counts, NaN / ±Inf
// inputs, padded and misaligned rows (the scalar kernels), with outputs
// poisoned before each run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "common/cuda_buffer.h"
#include "qgemm/gemm.h"
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
  QGEMM_TEST_CUDA(cudaDeviceSynchronize());
  std::vector<uint8_t> gpu_q, gpu_back;
  std::vector<float> gpu_scale;
  std::vector<int32_t> gpu_azp;
  q.download(gpu_q);
  back.download(gpu_back);
  scale.download(gpu_scale);
  azp.download(gpu_azp);

  cpu.quantize_cpu();
  cpu.dequantize_cpu();
  // Scales compared as bits (NaN poison left behind would differ from any value).
  int64_t bad_scale = 0;
  for (size_t i = 0; i < gpu_scale.size(); ++i) {
    bad_scale += numeric::float_bits(gpu_scale[i]) != numeric::float_bits(cpu.scale[i]);
  }
  EXPECT_EQ(bad_scale, 0) << c.name();
  EXPECT_EQ(gpu_azp, cpu.azp) << c.name();
  // Codes and dequantized values element by element (the row padding is not written).
  const size_t width = dtype_size(c.in);
  int64_t bad_q = 0, bad_back = 0;
  for (int64_t r = 0; r < c.tokens; ++r) {
    for (int64_t i = 0; i < c.hidden; ++i) {
      const int64_t k = c.index(r, i);
      if (gpu_q[k] != cpu.q[k] && bad_q++ < 3) {
        ADD_FAILURE() << c.name() << " q[" << r << "," << i << "] gpu " << int(gpu_q[k]) << " cpu " << int(cpu.q[k])
                      << " x=" << cpu.input(r, i);
      }
      if (std::memcmp(&gpu_back[k * width], &cpu.dequantized[k * width], width) != 0 && bad_back++ < 3) {
        ADD_FAILURE() << c.name() << " dequantized[" << r << "," << i << "] differs, cpu " << cpu.output(r, i);
      }
    }
  }
  EXPECT_EQ(bad_q, 0) << c.name();
  EXPECT_EQ(bad_back, 0) << c.name();
}

QuantCase make_case(int64_t t, int64_t h, DType in, DType quant, int variant) {
  QuantCase c;
  c.tokens = t, c.hidden = h, c.in = in, c.quant = quant;
  c.options.mode = variant < 2 ? QuantMode::kDynamicPerToken
                   : variant < 5 ? QuantMode::kDynamicPerGroup
                                 : QuantMode::kStaticPerTensor;
  c.options.symmetric = variant % 2 == 0 || quant != DType::kInt8;
  c.options.narrow_range = variant == 4;
  c.options.group_size = variant == 2 ? 32 : variant == 3 ? 64 : 128;
  c.scale_col_major = variant == 3;
  if (c.options.mode == QuantMode::kDynamicPerGroup && c.hidden % c.options.group_size != 0) {
    c.options.group_size = c.hidden;  // the whole row as one group
  }
  return c;
}

std::vector<QuantCase> cuda_cases() {
  std::vector<QuantCase> cases;
  // The grid (hidden × tokens) for the four kernels that matter most,
  // with NaN / ±Inf rows: bf16 → int8 per token, fp16 → int8 per token
  // asymmetric, bf16 → fp8 per token, fp32 → int8 per group of 128.
  for (int64_t h : {1, 7, 64, 4096, 5120, 8192, 14336}) {
    for (int64_t t : {1, 3, 64, 1000, 4096}) {
      if (t * h > 4096 * 8192) continue;  // keep the CPU oracle quick
      for (int k = 0; k < 4; ++k) {
        const DType in[] = {DType::kBFloat16, DType::kFloat16, DType::kBFloat16, DType::kFloat32};
        const DType quant[] = {DType::kInt8, DType::kInt8, DType::kFloat8E4M3, DType::kInt8};
        const int variant[] = {0, 1, 0, 4};
        QuantCase c = make_case(t, h, in[k], quant[k], variant[k]);
        c.specials = true;
        cases.push_back(c);
      }
    }
  }
  // Every mode × dtype on a smaller grid, including per-group layouts whose
  // group is not a power-of-two number of vectors (384 = the whole row),
  // rows longer than the register cache (fp32 20000) and NaN rows.
  const int64_t shapes[][2] = {{1, 4096}, {3, 7}, {64, 5120}, {37, 384}, {5, 14336}, {3, 20000}};
  for (DType in : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    for (DType quant : {DType::kInt8, DType::kFloat8E4M3}) {
      for (const auto& s : shapes) {
        for (int variant = 0; variant < 6; ++variant) {
          QuantCase c = make_case(s[0], s[1], in, quant, variant);
          c.specials = variant == 1 || variant == 5;
          cases.push_back(c);
        }
      }
    }
  }
  // Padded rows (vectorized while the stride keeps 16-byte alignment) and
  // misaligned ones (scalar kernels), every mode.
  for (int variant = 0; variant < 6; ++variant) {
    for (DType in : {DType::kFloat32, DType::kBFloat16}) {
      QuantCase aligned = make_case(9, 1024, in, DType::kInt8, variant);
      aligned.row_pad = 64;
      cases.push_back(aligned);
      QuantCase padded = make_case(9, 1024, in, DType::kInt8, variant);
      padded.row_pad = 3;
      cases.push_back(padded);
      QuantCase shifted = make_case(9, 1024, in, DType::kFloat8E4M3, variant);
      shifted.offset = 1;
      shifted.specials = true;
      cases.push_back(shifted);
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Modes, QuantCuda, ::testing::ValuesIn(cuda_cases()),
                         [](const auto& info) { return info.param.name() + "_" + std::to_string(info.index); });

// The asymmetric pipeline end to end on the GPU: quantize activations per
// token with zero points, then scaled_mm_azp — against the float product.
TEST(QuantCudaPipeline, AsymmetricActivationsThroughScaledMmAzp) {
  QGEMM_SKIP_WITHOUT_GPU();
  const int64_t m = 64, n = 128, k = 256;
  auto rng = make_rng();
  auto x = random_float(rng, m * k, -0.5f, 2.0f);
  auto w = random_float(rng, n * k, -1.0f, 1.0f);
  CudaBuffer x_d(x), w_d(w), xq(m * k), wq(n * k), sx(m * 4), sw(n * 4), zx(m * 4), adj(n * 4), out_d(m * n * 4);
  QuantOptions asym;
  asym.symmetric = false;
  quantize(TensorView(xq.get(), DType::kInt8, {m, k}, kGpu), TensorView(sx.get(), DType::kFloat32, {m}, kGpu),
           TensorView(zx.get(), DType::kInt32, {m}, kGpu), TensorView(x_d.get(), DType::kFloat32, {m, k}, kGpu), asym);
  quantize(TensorView(wq.get(), DType::kInt8, {n, k}, kGpu), TensorView(sw.get(), DType::kFloat32, {n}, kGpu),
           std::nullopt, TensorView(w_d.get(), DType::kFloat32, {n, k}, kGpu), QuantOptions{});
  const auto wq_t = TensorView::strided(wq.get(), DType::kInt8, {k, n}, {1, k}, kGpu);
  azp_adj(TensorView(adj.get(), DType::kInt32, {n}, kGpu), wq_t);
  scaled_mm_azp(TensorView(out_d.get(), DType::kBFloat16, {m, n}, kGpu), TensorView(xq.get(), DType::kInt8, {m, k}, kGpu),
                wq_t, TensorView(sx.get(), DType::kFloat32, {m}, kGpu), TensorView(sw.get(), DType::kFloat32, {n}, kGpu),
                TensorView(adj.get(), DType::kInt32, {n}, kGpu), TensorView(zx.get(), DType::kInt32, {m}, kGpu));
  QGEMM_TEST_CUDA(cudaDeviceSynchronize());
  std::vector<uint16_t> out;
  out_d.download(out);
  double err2 = 0, ref2 = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0;
      for (int64_t kk = 0; kk < k; ++kk) ref += static_cast<double>(x[i * k + kk]) * w[j * k + kk];
      const double got = numeric::bf16_bits_to_float(out[i * n + j]);
      err2 += (got - ref) * (got - ref);
      ref2 += ref * ref;
    }
  }
  EXPECT_LT(std::sqrt(err2 / ref2), 0.02);  // int8 activations and weights: ~0.5 % each
}

}  // namespace
}  // namespace qgemm::test
