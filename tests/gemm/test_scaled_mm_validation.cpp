// Every argument rejection of scaled_mm / scaled_mm_azp / azp_adj: each bad
// input throws qgemm::Error naming the argument and what was expected, before
// anything runs (the output stays untouched).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "common/expect_error.h"
#include "qgemm/error.h"
#include "qgemm/gemm.h"
#include "qgemm/version.h"

namespace qgemm {
namespace {

using test::expect_error;

constexpr int64_t M = 4, N = 6, K = 8;

// A valid problem; each test breaks one thing.
struct Args {
  std::vector<int8_t> a_data = std::vector<int8_t>(M * K, 1);
  std::vector<int8_t> b_data = std::vector<int8_t>(N * K, 1);
  std::vector<uint16_t> out_data = std::vector<uint16_t>(M * N, 0x7777);
  std::vector<float> scales = std::vector<float>(16, 1.0f);
  std::vector<uint16_t> bias_data = std::vector<uint16_t>(N, 0);
  std::vector<int32_t> ints = std::vector<int32_t>(16, 1);

  TensorView out = TensorView(out_data.data(), DType::kBFloat16, {M, N});
  TensorView a = TensorView(a_data.data(), DType::kInt8, {M, K});
  TensorView b = TensorView::strided(b_data.data(), DType::kInt8, {K, N}, {1, K});
  TensorView scale_a = TensorView(scales.data(), DType::kFloat32, {M});
  TensorView scale_b = TensorView(scales.data(), DType::kFloat32, {N});
  std::optional<TensorView> bias = TensorView(bias_data.data(), DType::kBFloat16, {N});
  TensorView azp_adj = TensorView(ints.data(), DType::kInt32, {N});
  std::optional<TensorView> azp = TensorView(ints.data(), DType::kInt32, {M});

  void run() { scaled_mm(out, a, b, scale_a, scale_b, bias); }
  void run_azp() { scaled_mm_azp(out, a, b, scale_a, scale_b, azp_adj, azp, bias); }
  bool out_untouched() const {
    for (auto v : out_data) if (v != 0x7777) return false;
    return true;
  }
};

TEST(ScaledMmValidation, ValidArgumentsRun) {
  Args args;
  args.run();
  EXPECT_FALSE(args.out_untouched());
  Args azp_args;
  azp_args.run_azp();
}

TEST(ScaledMmValidation, WrongDtypes) {
  Args x;
  x.out = TensorView(x.out_data.data(), DType::kInt32, {M, N / 2});
  expect_error([&] { x.run(); }, ErrorKind::kType, {"out", "bf16, fp16 or fp32", "int32"});
  Args y;
  y.a = TensorView(y.a_data.data(), DType::kUInt8, {M, K});
  expect_error([&] { y.run(); }, ErrorKind::kType, {"a:", "int8 or fp8e4m3", "uint8"});
  Args z;
  z.b = TensorView::strided(z.b_data.data(), DType::kFloat8E4M3, {K, N}, {1, K});
  expect_error([&] { z.run(); }, ErrorKind::kType, {"b:", "int8 (the dtype of a)", "fp8e4m3"});
  Args s;
  s.scale_a = TensorView(s.bias_data.data(), DType::kBFloat16, {1});
  expect_error([&] { s.run(); }, ErrorKind::kType, {"scale_a", "fp32", "bf16"});
  Args t;
  t.scale_b = TensorView(t.ints.data(), DType::kInt32, {N});
  expect_error([&] { t.run(); }, ErrorKind::kType, {"scale_b", "fp32", "int32"});
  Args u;
  u.bias = TensorView(u.scales.data(), DType::kFloat32, {N});
  expect_error([&] { u.run(); }, ErrorKind::kType, {"bias", "bf16 (the dtype of out)", "fp32"});
  Args v;
  v.azp_adj = TensorView(v.scales.data(), DType::kFloat32, {N});
  expect_error([&] { v.run_azp(); }, ErrorKind::kType, {"azp_adj", "int32", "fp32"});
  Args w;
  w.azp = TensorView(w.scales.data(), DType::kFloat32, {M});
  expect_error([&] { w.run_azp(); }, ErrorKind::kType, {"azp:", "int32", "fp32"});
  EXPECT_TRUE(x.out_untouched());
}

TEST(ScaledMmValidation, ZeroPointsNeedInt8) {
  Args x;
  x.a = TensorView(x.a_data.data(), DType::kFloat8E4M3, {M, K});
  x.b = TensorView::strided(x.b_data.data(), DType::kFloat8E4M3, {K, N}, {1, K});
  expect_error([&] { x.run_azp(); }, ErrorKind::kType, {"zero-point", "int8", "fp8e4m3"});
  EXPECT_TRUE(x.out_untouched());
}

TEST(ScaledMmValidation, WrongRanksAndShapes) {
  Args x;
  x.a = TensorView(x.a_data.data(), DType::kInt8, {M * K});
  expect_error([&] { x.run(); }, ErrorKind::kValue, {"a:", "2-D", "[32]"});
  Args y;
  y.a = TensorView(y.a_data.data(), DType::kInt8, {M - 1, K});
  expect_error([&] { y.run(); }, ErrorKind::kValue, {"a:", "[M=4, K=8]", "[3, 8]"});
  Args z;
  z.b = TensorView::strided(z.b_data.data(), DType::kInt8, {K - 2, N}, {1, K});
  expect_error([&] { z.run(); }, ErrorKind::kValue, {"b:", "[K=8, N=6]", "[6, 6]"});
  Args w;
  w.out = TensorView(w.out_data.data(), DType::kBFloat16, {M, N, 1});
  expect_error([&] { w.run(); }, ErrorKind::kValue, {"out", "2-D"});
  Args k0;
  k0.a = TensorView(k0.a_data.data(), DType::kInt8, {M, 0});
  expect_error([&] { k0.run(); }, ErrorKind::kValue, {"a:", "K >= 1"});
}

TEST(ScaledMmValidation, WrongStrides) {
  Args x;  // a with non-contiguous rows
  x.a = TensorView::strided(x.a_data.data(), DType::kInt8, {M, K / 2}, {K, 2});
  expect_error([&] { x.run(); }, ErrorKind::kValue, {"a:", "stride(1) == 1"});
  Args y;  // b stored row-major instead of column-major
  y.b = TensorView(y.b_data.data(), DType::kInt8, {K, N});
  expect_error([&] { y.run(); }, ErrorKind::kValue, {"b:", "column-major", "stride(0) == 1"});
  Args z;  // overlapping rows of out
  z.out = TensorView::strided(z.out_data.data(), DType::kBFloat16, {M, N}, {N - 1, 1});
  expect_error([&] { z.run(); }, ErrorKind::kValue, {"out", "stride(0) >= N=6"});
  Args w;  // b's columns overlap
  w.b = TensorView::strided(w.b_data.data(), DType::kInt8, {K, N}, {1, K - 1});
  expect_error([&] { w.run(); }, ErrorKind::kValue, {"b:", "stride(1) >= K=8"});
  Args s;  // non-contiguous scale vector
  s.scale_b = TensorView::strided(s.scales.data(), DType::kFloat32, {N}, {2});
  expect_error([&] { s.run(); }, ErrorKind::kValue, {"scale_b", "stride 1"});
  EXPECT_TRUE(x.out_untouched());
}

TEST(ScaledMmValidation, MismatchedVectorLengths) {
  Args x;
  x.scale_a = TensorView(x.scales.data(), DType::kFloat32, {M - 1});
  expect_error([&] { x.run(); }, ErrorKind::kValue, {"scale_a", "1 or M=4 elements", "got shape [3]"});
  Args y;
  y.scale_b = TensorView(y.scales.data(), DType::kFloat32, {N + 1});
  expect_error([&] { y.run(); }, ErrorKind::kValue, {"scale_b", "1 or N=6 elements"});
  Args z;  // per-token scales laid out as a row
  z.scale_a = TensorView(z.scales.data(), DType::kFloat32, {1, M});
  expect_error([&] { z.run(); }, ErrorKind::kValue, {"scale_a", "[M=4, 1]"});
  Args w;
  w.bias = TensorView(w.bias_data.data(), DType::kBFloat16, {N - 1});
  expect_error([&] { w.run(); }, ErrorKind::kValue, {"bias", "N=6 elements"});
  Args v;
  v.azp_adj = TensorView(v.ints.data(), DType::kInt32, {N - 2});
  expect_error([&] { v.run_azp(); }, ErrorKind::kValue, {"azp_adj", "N=6"});
  Args u;
  u.azp = TensorView(u.ints.data(), DType::kInt32, {1});
  expect_error([&] { u.run_azp(); }, ErrorKind::kValue, {"azp:", "M=4"});
}

TEST(ScaledMmValidation, BroadcastShapesAccepted) {
  for (auto shape : {std::vector<int64_t>{1}, {1, 1}, {M}, {M, 1}}) {
    Args x;
    x.scale_a = TensorView(x.scales.data(), DType::kFloat32, 1, shape.data(), nullptr);
    EXPECT_NO_THROW(x.run()) << shape.size();
  }
  for (auto shape : {std::vector<int64_t>{1}, {1, 1}, {N}, {1, N}}) {
    Args x;
    x.scale_b = TensorView(x.scales.data(), DType::kFloat32, static_cast<int>(shape.size()),
                           shape.data(), nullptr);
    EXPECT_NO_THROW(x.run());
  }
}

TEST(ScaledMmValidation, NullPointers) {
  Args x;
  x.a = TensorView(static_cast<const void*>(nullptr), DType::kInt8, {M, K});
  expect_error([&] { x.run(); }, ErrorKind::kValue, {"a:", "null"});
  Args y;
  y.scale_b = TensorView(static_cast<const void*>(nullptr), DType::kFloat32, {1});
  expect_error([&] { y.run(); }, ErrorKind::kValue, {"scale_b", "null"});
  Args z;
  z.bias = TensorView(static_cast<const void*>(nullptr), DType::kBFloat16, {N});
  expect_error([&] { z.run(); }, ErrorKind::kValue, {"bias", "null"});
  Args w;
  w.out = TensorView(static_cast<const void*>(nullptr), DType::kBFloat16, {M, N});
  expect_error([&] { w.run(); }, ErrorKind::kValue, {"out", "null"});
}

TEST(ScaledMmValidation, MisalignedPointers) {
  Args x;
  auto* odd = reinterpret_cast<uint8_t*>(x.out_data.data()) + 1;
  x.out = TensorView(odd, DType::kBFloat16, {M, N - 1});
  x.b = TensorView::strided(x.b_data.data(), DType::kInt8, {K, N - 1}, {1, K});
  x.scale_b = TensorView(x.scales.data(), DType::kFloat32, {1});
  x.bias = std::nullopt;
  expect_error([&] { x.run(); }, ErrorKind::kValue, {"out", "aligned to 2 bytes"});
  Args y;
  y.scale_a = TensorView(reinterpret_cast<uint8_t*>(y.scales.data()) + 2, DType::kFloat32, {M});
  expect_error([&] { y.run(); }, ErrorKind::kValue, {"scale_a", "aligned to 4 bytes"});
}

TEST(ScaledMmValidation, DeviceMix) {
  Args x;
  x.scale_a = TensorView(x.scales.data(), DType::kFloat32, {M}, Device::cuda(0));
  expect_error([&] { x.run(); }, ErrorKind::kValue, {"scale_a", "cpu (the device of out)", "cuda:0"});
  Args y;
  y.azp = TensorView(y.ints.data(), DType::kInt32, {M}, Device::cuda(0));
  expect_error([&] { y.run_azp(); }, ErrorKind::kValue, {"azp", "cuda:0"});
}

TEST(ScaledMmValidation, CudaTensorsWithoutCudaBackendOrDevice) {
  Args x;
  const Device gpu = Device::cuda(7);
  x.out = TensorView(x.out_data.data(), DType::kBFloat16, {M, N}, gpu);
  // Either this build has no CUDA backend, or it has fewer than 8 GPUs.
  expect_error([&] { x.run(); }, built_with_cuda() ? ErrorKind::kValue : ErrorKind::kNotImplemented,
               {"cuda:7"});
}

TEST(ScaledMmValidation, Fp32OutputOnlyOnCpu) {
  Args x;
  std::vector<float> out(M * N);
  x.out = TensorView(out.data(), DType::kFloat32, {M, N});
  x.bias = std::nullopt;
  EXPECT_NO_THROW(x.run());
}

TEST(ScaledMmValidation, Int8KTooLarge) {
  Args x;
  const int64_t k = 131073;
  std::vector<int8_t> big(k);
  x.a = TensorView(big.data(), DType::kInt8, {1, k});
  x.out = TensorView(x.out_data.data(), DType::kBFloat16, {1, N});
  x.scale_a = TensorView(x.scales.data(), DType::kFloat32, {1});
  expect_error([&] { x.run(); }, ErrorKind::kValue, {"a:", "K=131073", "overflow"});
}

// Fp8Accumulation: values outside the enum are rejected before anything
// runs; kFast is accepted for fp8 and ignored for int8 (whose int32
// accumulation is exact); the old 7-argument call still compiles and means
// kPrecise.
TEST(ScaledMmValidation, Fp8AccumulationOutOfRange) {
  for (int raw : {2, 255}) {
    Args x;
    expect_error([&] { scaled_mm(x.out, x.a, x.b, x.scale_a, x.scale_b, x.bias, nullptr,
                                 static_cast<Fp8Accumulation>(raw)); },
                 ErrorKind::kValue, {"fp8_accumulation", "kPrecise or kFast", std::to_string(raw)});
    EXPECT_TRUE(x.out_untouched());
  }
}

TEST(ScaledMmValidation, Fp8AccumulationAcceptedForFp8IgnoredForInt8) {
  // int8: kFast runs and gives the precise (exact) result.
  Args precise, fast;
  scaled_mm(precise.out, precise.a, precise.b, precise.scale_a, precise.scale_b, precise.bias, nullptr,
            Fp8Accumulation::kPrecise);
  scaled_mm(fast.out, fast.a, fast.b, fast.scale_a, fast.scale_b, fast.bias, nullptr, Fp8Accumulation::kFast);
  EXPECT_FALSE(fast.out_untouched());
  EXPECT_EQ(precise.out_data, fast.out_data);
  // fp8: accepted on the CPU (which computes the precise result).
  for (Fp8Accumulation mode : {Fp8Accumulation::kPrecise, Fp8Accumulation::kFast}) {
    Args x;
    std::fill(x.a_data.begin(), x.a_data.end(), int8_t{0x38});  // 1.0 in e4m3
    std::fill(x.b_data.begin(), x.b_data.end(), int8_t{0x38});
    x.a = TensorView(x.a_data.data(), DType::kFloat8E4M3, {M, K});
    x.b = TensorView::strided(x.b_data.data(), DType::kFloat8E4M3, {K, N}, {1, K});
    scaled_mm(x.out, x.a, x.b, x.scale_a, x.scale_b, x.bias, nullptr, mode);
    for (auto v : x.out_data) EXPECT_EQ(v, 0x4100);  // bf16 8.0 = K · 1 · 1
  }
  // Source compatibility: the pre-existing call forms.
  Args y;
  scaled_mm(y.out, y.a, y.b, y.scale_a, y.scale_b);
  scaled_mm(y.out, y.a, y.b, y.scale_a, y.scale_b, y.bias, nullptr);
  EXPECT_EQ(y.out_data, precise.out_data);
}

// The workspace overloads: uint8, rank 1, contiguous, apart from the other
// tensors, on out's device; the CPU needs none (0 bytes) and runs the same
// with one.
TEST(ScaledMmValidation, Workspace) {
  EXPECT_EQ(scaled_mm_workspace_bytes(Device::cpu()), 0);
  std::vector<uint8_t> scratch(64, 0xab);
  const TensorView workspace(scratch.data(), DType::kUInt8, {64});
  Args plain, with;
  plain.run();
  scaled_mm(with.out, with.a, with.b, with.scale_a, with.scale_b, with.bias, workspace);
  EXPECT_EQ(with.out_data, plain.out_data);
  scaled_mm_azp(with.out, with.a, with.b, with.scale_a, with.scale_b, with.azp_adj, with.azp, with.bias,
                TensorView(scratch.data(), DType::kUInt8, {0}));

  Args x;
  auto run_with = [&](const TensorView& w) { scaled_mm(x.out, x.a, x.b, x.scale_a, x.scale_b, x.bias, w); };
  expect_error([&] { run_with(TensorView(scratch.data(), DType::kInt8, {64})); }, ErrorKind::kType,
               {"workspace", "uint8", "int8"});
  expect_error([&] { run_with(TensorView(scratch.data(), DType::kUInt8, {8, 8})); }, ErrorKind::kValue,
               {"workspace", "1-D"});
  expect_error([&] { run_with(TensorView::strided(scratch.data(), DType::kUInt8, {32}, {2})); }, ErrorKind::kValue,
               {"workspace", "contiguous", "stride 2"});
  expect_error([&] { run_with(TensorView(scratch.data(), DType::kUInt8, {64}, Device::cuda(0))); },
               ErrorKind::kValue, {"workspace", "cuda:0", "cpu"});
  expect_error([&] { run_with(TensorView(x.a_data.data(), DType::kUInt8, {M * K})); }, ErrorKind::kValue,
               {"workspace", "must not overlap a"});
  expect_error([&] { run_with(TensorView(x.out_data.data(), DType::kUInt8, {8})); }, ErrorKind::kValue,
               {"workspace", "must not overlap out"});
  expect_error([&] { run_with(TensorView(static_cast<void*>(nullptr), DType::kUInt8, {64})); }, ErrorKind::kValue,
               {"workspace", "null"});
  expect_error(
      [&] {
        scaled_mm_azp(x.out, x.a, x.b, x.scale_a, x.scale_b, x.azp_adj, x.azp, x.bias,
                      TensorView(x.ints.data(), DType::kUInt8, {16}));
      },
      ErrorKind::kValue, {"workspace", "must not overlap azp_adj"});
  EXPECT_TRUE(x.out_untouched());
}

TEST(AzpAdjValidation, Rejections) {
  std::vector<int8_t> b(K * N, 1);
  std::vector<int32_t> out(N);
  std::vector<float> fout(N);
  const auto bv = TensorView::strided(b.data(), DType::kInt8, {K, N}, {1, K});
  expect_error([&] { azp_adj(TensorView(fout.data(), DType::kFloat32, {N}), bv); }, ErrorKind::kType,
               {"out", "int32", "fp32"});
  expect_error([&] { azp_adj(TensorView(out.data(), DType::kInt32, {N - 1}), bv); }, ErrorKind::kValue,
               {"out", "N=6"});
  expect_error([&] { azp_adj(TensorView(out.data(), DType::kInt32, {N}), TensorView(b.data(), DType::kInt8, {K, N})); },
               ErrorKind::kValue, {"b:", "column-major"});
  expect_error([&] {
    azp_adj(TensorView(out.data(), DType::kInt32, {N}),
            TensorView::strided(b.data(), DType::kFloat8E4M3, {K, N}, {1, K}));
  }, ErrorKind::kType, {"b:", "int8"});
}

}  // namespace
}  // namespace qgemm
