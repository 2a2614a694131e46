// Every argument rejection of the fused ops: each bad input throws
// qgemm::Error of the right kind, naming the argument, what it got and what
// was expected, before anything runs (the outputs stay untouched).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "common/expect_error.h"
#include "qgemm/fused.h"
#include "qgemm/version.h"

namespace qgemm {
namespace {

using test::expect_error;

constexpr int64_t T = 4, N = 64;

// A valid problem for every op; each test breaks one thing.
struct Args {
  std::vector<uint16_t> x_data = std::vector<uint16_t>(T * 2 * N, 0x3f80);  // bf16 1.0
  std::vector<uint16_t> residual_data = std::vector<uint16_t>(T * N, 0x3f80);
  std::vector<uint16_t> params = std::vector<uint16_t>(4 * N, 0x3f80);
  std::vector<int32_t> acc_data = std::vector<int32_t>(T * N, 7);
  std::vector<int8_t> residual_q = std::vector<int8_t>(T * N, 3);
  std::vector<float> scales = std::vector<float>(2 * N, 0.5f);
  std::vector<int8_t> q_data = std::vector<int8_t>(T * N, 0x55);
  std::vector<float> out_scale = std::vector<float>(T, -1.0f);
  std::vector<int32_t> out_azp = std::vector<int32_t>(T, -1);

  TensorView x = TensorView(x_data.data(), DType::kBFloat16, {T, N});
  TensorView x2 = TensorView(x_data.data(), DType::kBFloat16, {T, 2 * N});
  TensorView residual = TensorView(residual_data.data(), DType::kBFloat16, {T, N});
  TensorView weight = TensorView(params.data(), DType::kBFloat16, {N});
  TensorView beta = TensorView(params.data() + N, DType::kBFloat16, {N});
  std::optional<TensorView> bias = TensorView(params.data() + 2 * N, DType::kBFloat16, {N});
  Int32GemmOutput acc{TensorView(acc_data.data(), DType::kInt32, {T, N}),
                      TensorView(scales.data(), DType::kFloat32, {T}),
                      TensorView(scales.data() + N, DType::kFloat32, {N})};
  TensorView rq = TensorView(residual_q.data(), DType::kInt8, {T, N});
  TensorView rq_scale = TensorView(scales.data(), DType::kFloat32, {1});
  QuantOutput out{TensorView(q_data.data(), DType::kInt8, {T, N}),
                  TensorView(out_scale.data(), DType::kFloat32, {T}), std::nullopt,
                  FusedScale::kDynamicPerToken, false};
  float eps = 1e-6f;

  void rms() { rms_norm_quant(out, x, weight, eps); }
  void add_rms() { add_rms_norm_quant(out, x, residual, weight, eps); }
  void ln() { layer_norm_quant(out, x, weight, beta, eps, residual, bias); }
  void ln_int32() { layer_norm_quant_int32(out, acc, rq, rq_scale, weight, beta, eps, bias); }
  void silu() { silu_and_mul_quant(out, x2); }
  void gelu() { bias_gelu_quant(out, x, bias, GeluApproximation::kErf); }
  void gelu_int32() { bias_gelu_quant_int32(out, acc, bias, GeluApproximation::kTanh); }
  bool untouched() const {
    for (auto v : q_data) if (v != 0x55) return false;
    for (auto v : out_scale) if (v != -1.0f) return false;
    return true;
  }
};

void expect_rejected(void (Args::*call)(), void (*breaker)(Args&), ErrorKind kind,
                     const std::vector<std::string>& pieces) {
  Args a;
  breaker(a);
  expect_error([&] { (a.*call)(); }, kind, pieces);
  EXPECT_TRUE(a.untouched()) << pieces.front();
}

TEST(FusedValidation, ValidArgumentsRunEveryOp) {
  for (auto call : {&Args::rms, &Args::add_rms, &Args::ln, &Args::ln_int32, &Args::silu, &Args::gelu,
                    &Args::gelu_int32}) {
    Args a;
    (a.*call)();
    EXPECT_FALSE(a.untouched());
  }
}

TEST(FusedValidation, WrongDtypes) {
  expect_rejected(&Args::rms, [](Args& a) { a.out.q = TensorView(a.x_data.data(), DType::kBFloat16, {T, N}); },
                  ErrorKind::kType, {"out.q", "int8 or fp8e4m3", "bf16"});
  expect_rejected(&Args::rms, [](Args& a) { a.x = TensorView(a.q_data.data(), DType::kInt8, {T, N}); },
                  ErrorKind::kType, {"x:", "fp32, fp16 or bf16", "int8"});
  expect_rejected(&Args::rms, [](Args& a) { a.weight = TensorView(a.scales.data(), DType::kFloat32, {N}); },
                  ErrorKind::kType, {"weight", "bf16 (the dtype of x)", "fp32"});
  expect_rejected(&Args::add_rms, [](Args& a) { a.residual = TensorView(a.residual_data.data(), DType::kFloat16, {T, N}); },
                  ErrorKind::kType, {"residual", "bf16 (the dtype of x)", "fp16"});
  expect_rejected(&Args::ln, [](Args& a) { a.beta = TensorView(a.scales.data(), DType::kFloat32, {N}); },
                  ErrorKind::kType, {"beta", "bf16", "fp32"});
  expect_rejected(&Args::ln, [](Args& a) { a.bias = TensorView(a.scales.data(), DType::kFloat32, {N}); },
                  ErrorKind::kType, {"bias", "bf16", "fp32"});
  expect_rejected(&Args::rms, [](Args& a) { a.out.scale = TensorView(a.params.data(), DType::kBFloat16, {T}); },
                  ErrorKind::kType, {"out.scale", "fp32", "bf16"});
  expect_rejected(&Args::rms, [](Args& a) { a.out.azp = TensorView(a.scales.data(), DType::kFloat32, {T}); },
                  ErrorKind::kType, {"out.azp", "int32", "fp32"});
  expect_rejected(&Args::rms, [](Args& a) {
    a.out.q = TensorView(a.q_data.data(), DType::kFloat8E4M3, {T, N});
    a.out.azp = TensorView(a.out_azp.data(), DType::kInt32, {T});
  }, ErrorKind::kType, {"out.azp", "int8", "fp8e4m3"});
  expect_rejected(&Args::ln_int32, [](Args& a) { a.acc.acc = TensorView(a.scales.data(), DType::kFloat32, {T, N}); },
                  ErrorKind::kType, {"x.acc", "int32", "fp32"});
  expect_rejected(&Args::ln_int32, [](Args& a) { a.acc.scale_w = TensorView(a.params.data(), DType::kBFloat16, {N}); },
                  ErrorKind::kType, {"x.scale_w", "fp32", "bf16"});
  expect_rejected(&Args::ln_int32, [](Args& a) { a.rq = a.residual; },
                  ErrorKind::kType, {"residual", "int8", "bf16"});
  expect_rejected(&Args::ln_int32, [](Args& a) { a.rq_scale = TensorView(a.params.data(), DType::kBFloat16, {1}); },
                  ErrorKind::kType, {"residual_scale", "fp32", "bf16"});
  expect_rejected(&Args::ln_int32, [](Args& a) { a.weight = TensorView(a.q_data.data(), DType::kInt8, {N}); },
                  ErrorKind::kType, {"gamma", "fp32, fp16 or bf16", "int8"});
  expect_rejected(&Args::ln_int32, [](Args& a) { a.beta = TensorView(a.scales.data(), DType::kFloat32, {N}); },
                  ErrorKind::kType, {"beta", "bf16 (the dtype of gamma)", "fp32"});
  expect_rejected(&Args::gelu_int32, [](Args& a) { a.bias = TensorView(a.acc_data.data(), DType::kInt32, {N}); },
                  ErrorKind::kType, {"bias", "fp32, fp16 or bf16", "int32"});
}

TEST(FusedValidation, MismatchedLengthsAndShapes) {
  expect_rejected(&Args::rms, [](Args& a) { a.weight = TensorView(a.params.data(), DType::kBFloat16, {N - 1}); },
                  ErrorKind::kValue, {"weight", "N=64", "[63]"});
  expect_rejected(&Args::ln, [](Args& a) { a.beta = TensorView(a.params.data(), DType::kBFloat16, {N + 1}); },
                  ErrorKind::kValue, {"beta", "N=64"});
  expect_rejected(&Args::ln, [](Args& a) { a.bias = TensorView(a.params.data(), DType::kBFloat16, {2, N}); },
                  ErrorKind::kValue, {"bias", "N=64"});
  expect_rejected(&Args::rms, [](Args& a) { a.x = TensorView(a.x_data.data(), DType::kBFloat16, {T, N + 1}); },
                  ErrorKind::kValue, {"x:", "N=64", "[4, 65]"});
  expect_rejected(&Args::rms, [](Args& a) { a.x = TensorView(a.x_data.data(), DType::kBFloat16, {T - 1, N}); },
                  ErrorKind::kValue, {"x:", "T=4"});
  expect_rejected(&Args::silu, [](Args& a) { a.x2 = a.x; }, ErrorKind::kValue, {"x:", "2N=128", "[4, 64]"});
  expect_rejected(&Args::add_rms, [](Args& a) { a.residual = TensorView(a.residual_data.data(), DType::kBFloat16, {T, N - 2}); },
                  ErrorKind::kValue, {"residual", "N=64"});
  expect_rejected(&Args::rms, [](Args& a) {
    a.x = TensorView::strided(a.x_data.data(), DType::kBFloat16, {T, N}, {1, T});
  }, ErrorKind::kValue, {"x:", "stride(1) == 1"});
  expect_rejected(&Args::rms, [](Args& a) { a.out.scale = TensorView(a.out_scale.data(), DType::kFloat32, {T - 1}); },
                  ErrorKind::kValue, {"out.scale", "T=4", "[3]"});
  expect_rejected(&Args::rms, [](Args& a) {
    a.out.mode = FusedScale::kStatic;
    a.out.scale = TensorView(a.scales.data(), DType::kFloat32, {2});
  }, ErrorKind::kValue, {"out.scale", "1 element", "static", "[2]"});
  expect_rejected(&Args::rms, [](Args& a) {
    a.out.mode = FusedScale::kStatic;
    a.out.scale = TensorView(a.scales.data(), DType::kFloat32, {1});
    a.out.azp = TensorView(a.acc_data.data(), DType::kInt32, {T});
  }, ErrorKind::kValue, {"out.azp", "1 element"});
  expect_rejected(&Args::rms, [](Args& a) { a.out.azp = TensorView(a.out_azp.data(), DType::kInt32, {T + 1}); },
                  ErrorKind::kValue, {"out.azp", "T=4"});
  expect_rejected(&Args::rms, [](Args& a) { a.out.q = TensorView(a.q_data.data(), DType::kInt8, {T, 0}); },
                  ErrorKind::kValue, {"out.q", "N >= 1"});
  expect_rejected(&Args::ln_int32, [](Args& a) { a.acc.scale_a = TensorView(a.scales.data(), DType::kFloat32, {T + 1}); },
                  ErrorKind::kValue, {"x.scale_a", "T=4"});
  expect_rejected(&Args::gelu_int32, [](Args& a) { a.acc.scale_w = TensorView(a.scales.data(), DType::kFloat32, {N - 1}); },
                  ErrorKind::kValue, {"x.scale_w", "N=64"});
  expect_rejected(&Args::ln_int32, [](Args& a) { a.rq_scale = TensorView(a.scales.data(), DType::kFloat32, {3}); },
                  ErrorKind::kValue, {"residual_scale", "T=4"});
  expect_rejected(&Args::rms, [](Args& a) { a.out.azp = TensorView(a.out_azp.data(), DType::kInt32, {T}); a.out.narrow_range = true; },
                  ErrorKind::kValue, {"narrow_range", "symmetric int8"});
}

TEST(FusedValidation, BadEps) {
  expect_rejected(&Args::rms, [](Args& a) { a.eps = -1e-6f; }, ErrorKind::kValue, {"eps", ">= 0", "-0.000001"});
  expect_rejected(&Args::ln, [](Args& a) { a.eps = NAN; }, ErrorKind::kValue, {"eps", "finite"});
  expect_rejected(&Args::ln_int32, [](Args& a) { a.eps = INFINITY; }, ErrorKind::kValue, {"eps"});
}

TEST(FusedValidation, AliasingRejected) {
  expect_rejected(&Args::rms, [](Args& a) {
    a.out.q = TensorView(a.x_data.data(), DType::kInt8, {T, N});
  }, ErrorKind::kValue, {"out.q: must not overlap x"});
  expect_rejected(&Args::add_rms, [](Args& a) { a.residual = a.x; }, ErrorKind::kValue,
                  {"residual: must not overlap x"});
  expect_rejected(&Args::rms, [](Args& a) {
    a.out.scale = TensorView(a.q_data.data(), DType::kFloat32, {T});
  }, ErrorKind::kValue, {"must not overlap", "out.q"});
  expect_rejected(&Args::rms, [](Args& a) {
    a.out.azp = TensorView(a.out_scale.data(), DType::kInt32, {T});
  }, ErrorKind::kValue, {"out.scale: must not overlap out.azp"});
  expect_rejected(&Args::ln, [](Args& a) { a.weight = TensorView(a.out_scale.data(), DType::kBFloat16, {N}); },
                  ErrorKind::kValue, {"out.scale: must not overlap gamma"});
  expect_rejected(&Args::add_rms, [](Args& a) { a.weight = TensorView(a.residual_data.data(), DType::kBFloat16, {N}); },
                  ErrorKind::kValue, {"residual: must not overlap weight"});
  // Inputs may share memory with each other (read-only), and a static scale
  // is an input.
  Args ok;
  ok.beta = ok.weight;
  ok.ln();
  EXPECT_FALSE(ok.untouched());
}

TEST(FusedValidation, DevicesAndBackends) {
  expect_rejected(&Args::rms, [](Args& a) {
    a.x = TensorView(a.x_data.data(), DType::kBFloat16, {T, N}, Device::cuda(0));
  }, ErrorKind::kValue, {"x:", "cpu", "cuda:0"});
  // out on the GPU, the rest on the CPU: without a usable GPU the backend
  // check fires first, with one the device check of the next tensor.
  Args a;
  a.out.q = TensorView(a.q_data.data(), DType::kInt8, {T, N}, Device::cuda(0));
  if (!built_with_cuda()) {
    expect_error([&] { a.rms(); }, ErrorKind::kNotImplemented, {"rms_norm_quant", "no CUDA backend"});
  } else if (cuda_device_count() == 0) {
    expect_error([&] { a.rms(); }, ErrorKind::kValue, {"rms_norm_quant", "cuda:0", "0 CUDA device"});
  } else {
    expect_error([&] { a.rms(); }, ErrorKind::kValue, {"out.scale", "cuda:0", "cpu"});
  }
}

}  // namespace
}  // namespace qgemm
