// The fused ops quantize exactly as qgemm::quantize() does (fused/fused_quant.h
// calls quant/quant_math.h): silu_and_mul_quant with every gate = 100 computes
// y = silu(100)·up = 100·up (e^−100 vanishes next to 1, so silu(100) is
// exactly 100), so its codes and scales must be bit-identical to quantize()
// of the fp32 tensor 100·up — for every scale mode and output dtype, on the
// CPU and (when there is a GPU) on CUDA.
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <vector>

#include "common/test_util.h"
#include "qgemm/fused.h"
#include "qgemm/quant.h"
#if QGEMM_WITH_CUDA
#include "common/cuda_buffer.h"
#endif

namespace qgemm::test {
namespace {

struct ParityCase {
  FusedScale mode;
  bool asymmetric;
  DType q;
  bool narrow_range;
  // 1000: rows that end inside a vector chunk; 1024 and 8192: rows that
  // fill their chunks exactly, with one and two chunks per GPU thread.
  int64_t hidden;
};

constexpr int64_t kTokens = 37;

// Each backend's results of both calls.
struct Results {
  std::vector<uint8_t> q;
  std::vector<float> scale;
  std::vector<int32_t> azp;
};

// Rows of mixed magnitude: outliers, constant and zero rows, NaN and Inf.
std::vector<uint16_t> make_up(int64_t hidden, uint64_t seed) {
  auto rng = make_rng(seed);
  std::vector<float> up = random_float(rng, kTokens * hidden, -3.0f, 3.0f);
  for (int64_t h = 0; h < hidden; ++h) {
    up[1 * hidden + h] = 0.0f;                 // all-zero row
    up[2 * hidden + h] = 0.5f;                 // constant row
    up[3 * hidden + h] = h % 2 ? 1e-3f : -2e-3f;
  }
  up[4 * hidden + 7] = 300.0f;  // outlier
  up[5 * hidden + 9] = NAN;
  up[6 * hidden + 11] = INFINITY;
  up[7 * hidden + 13] = -INFINITY;
  return to_half_bits(up, DType::kBFloat16);
}

QuantOptions quant_options(const ParityCase& c) {
  QuantOptions o;
  o.mode = c.mode == FusedScale::kStatic ? QuantMode::kStaticPerTensor : QuantMode::kDynamicPerToken;
  o.symmetric = !c.asymmetric;
  o.narrow_range = c.narrow_range;
  return o;
}

// Pointers of one backend's buffers: x = gate | up (bf16), y = 100·up (fp32),
// and the outputs of both calls.
struct Buffers {
  void *x, *y, *q_fused, *q_quant, *s_fused, *s_quant, *z_fused, *z_quant;
  Device device;
};

void run_both(const ParityCase& c, const Buffers& b) {
  const int64_t hidden = c.hidden;
  const int64_t scales = c.mode == FusedScale::kStatic ? 1 : kTokens;
  auto vec = [&](void* p, DType t) { return TensorView(p, t, {scales}, b.device); };
  QuantOutput out;
  out.q = TensorView(b.q_fused, c.q, {kTokens, hidden}, b.device);
  out.scale = vec(b.s_fused, DType::kFloat32);
  out.mode = c.mode;
  out.narrow_range = c.narrow_range;
  if (c.asymmetric) out.azp = vec(b.z_fused, DType::kInt32);
  silu_and_mul_quant(out, TensorView(b.x, DType::kBFloat16, {kTokens, 2 * hidden}, b.device));

  std::optional<TensorView> azp;
  if (c.asymmetric) azp = vec(b.z_quant, DType::kInt32);
  quantize(TensorView(b.q_quant, c.q, {kTokens, hidden}, b.device), vec(b.s_quant, DType::kFloat32), azp,
           TensorView(b.y, DType::kFloat32, {kTokens, hidden}, b.device), quant_options(c));
}

class FusedQuantParity : public ::testing::TestWithParam<ParityCase> {
 protected:
  void SetUp() override {
    hidden = GetParam().hidden;
    const std::vector<uint16_t> up = make_up(hidden, 17);
    x_.assign(kTokens * 2 * hidden, numeric::float_to_bf16_bits(100.0f));
    y_.resize(kTokens * hidden);
    for (int64_t t = 0; t < kTokens; ++t) {
      for (int64_t h = 0; h < hidden; ++h) {
        x_[t * 2 * hidden + hidden + h] = up[t * hidden + h];
        y_[t * hidden + h] = 100.0f * numeric::bf16_bits_to_float(up[t * hidden + h]);
      }
    }
  }
  // Static inputs: scale 0.05 (and zero point 3); dynamic outputs poisoned.
  void init_scales(std::vector<float>& s, std::vector<int32_t>& z) const {
    const bool dynamic = GetParam().mode != FusedScale::kStatic;
    s.assign(dynamic ? kTokens : 1, dynamic ? NAN : 0.05f);
    z.assign(dynamic ? kTokens : 1, dynamic ? -999 : 3);
  }
  static void expect_same(const Results& fused, const Results& quant, const char* backend) {
    EXPECT_EQ(fused.q, quant.q) << backend << ": codes";
    ASSERT_EQ(fused.scale.size(), quant.scale.size());
    EXPECT_EQ(0, std::memcmp(fused.scale.data(), quant.scale.data(), fused.scale.size() * sizeof(float)))
        << backend << ": scales";
    EXPECT_EQ(fused.azp, quant.azp) << backend << ": zero points";
  }

  int64_t hidden = 0;
  std::vector<uint16_t> x_;
  std::vector<float> y_;
};

TEST_P(FusedQuantParity, CpuCodesEqualQuantize) {
  const ParityCase c = GetParam();
  Results fused, quant;
  fused.q.assign(kTokens * hidden, 0xAB);
  quant.q.assign(kTokens * hidden, 0xCD);
  init_scales(fused.scale, fused.azp);
  init_scales(quant.scale, quant.azp);
  run_both(c, {x_.data(), y_.data(), fused.q.data(), quant.q.data(), fused.scale.data(), quant.scale.data(),
               fused.azp.data(), quant.azp.data(), Device::cpu()});
  expect_same(fused, quant, "cpu");
}

#if QGEMM_WITH_CUDA
TEST_P(FusedQuantParity, CudaCodesEqualQuantize) {
  if (!has_cuda_device()) GTEST_SKIP() << "no CUDA GPU";
  const ParityCase c = GetParam();
  Results host;
  init_scales(host.scale, host.azp);
  CudaBuffer x(x_), y(y_), q_fused(kTokens * hidden), q_quant(kTokens * hidden);
  CudaBuffer s_fused(host.scale), s_quant(host.scale), z_fused(host.azp), z_quant(host.azp);
  q_fused.poison();
  q_quant.poison();
  run_both(c, {x.get(), y.get(), q_fused.get(), q_quant.get(), s_fused.get(), s_quant.get(), z_fused.get(),
               z_quant.get(), Device::cuda()});
  QGEMM_TEST_CUDA(cudaDeviceSynchronize());
  Results fused, quant;
  q_fused.download(fused.q);
  q_quant.download(quant.q);
  s_fused.download(fused.scale);
  s_quant.download(quant.scale);
  z_fused.download(fused.azp);
  z_quant.download(quant.azp);
  expect_same(fused, quant, "cuda");

  // And the CPU backend's bits.
  Results cpu;
  cpu.q.assign(kTokens * hidden, 0);
  init_scales(cpu.scale, cpu.azp);
  std::vector<uint8_t> unused_q(kTokens * hidden);
  std::vector<float> unused_s = cpu.scale;
  std::vector<int32_t> unused_z = cpu.azp;
  run_both(c, {x_.data(), y_.data(), cpu.q.data(), unused_q.data(), cpu.scale.data(), unused_s.data(),
               cpu.azp.data(), unused_z.data(), Device::cpu()});
  expect_same(fused, cpu, "cuda vs cpu");
}
#endif

std::vector<ParityCase> all_cases() {
  const ParityCase modes[] = {{FusedScale::kDynamicPerToken, false, DType::kInt8, false, 0},
                              {FusedScale::kDynamicPerToken, false, DType::kInt8, true, 0},
                              {FusedScale::kDynamicPerToken, true, DType::kInt8, false, 0},
                              {FusedScale::kDynamicPerToken, false, DType::kFloat8E4M3, false, 0},
                              {FusedScale::kStatic, false, DType::kInt8, false, 0},
                              {FusedScale::kStatic, true, DType::kInt8, false, 0},
                              {FusedScale::kStatic, false, DType::kInt8, true, 0},
                              {FusedScale::kStatic, false, DType::kFloat8E4M3, false, 0}};
  std::vector<ParityCase> cases;
  for (const int64_t hidden : {1000, 1024, 8192}) {
    for (ParityCase c : modes) {
      c.hidden = hidden;
      cases.push_back(c);
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllModes, FusedQuantParity, ::testing::ValuesIn(all_cases()));

}  // namespace
}  // namespace qgemm::test
