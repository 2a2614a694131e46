// Every argument rejection of quantize / dequantize and the int4 weight
// helpers, each before anything is written.
#include <gtest/gtest.h>

#include <vector>

#include "common/expect_error.h"
#include "qgemm/quant.h"
#include "qgemm/version.h"

namespace qgemm::test {
namespace {

constexpr int64_t T = 4, H = 128;

struct Args {
  std::vector<float> x = std::vector<float>(T * H, 1.0f);
  std::vector<int8_t> q = std::vector<int8_t>(T * H, 42);
  std::vector<float> scales = std::vector<float>(T * H, 1.0f);
  std::vector<int32_t> zps = std::vector<int32_t>(T * H, 0);
  TensorView in = TensorView(x.data(), DType::kFloat32, {T, H});
  TensorView out = TensorView(q.data(), DType::kInt8, {T, H});
  TensorView scale = TensorView(scales.data(), DType::kFloat32, {T});
  std::optional<TensorView> azp;
  QuantOptions options;
  void run() { quantize(out, scale, azp, in, options); }
  bool untouched() const {
    for (auto v : q) if (v != 42) return false;
    return true;
  }
};

TEST(QuantValidation, ValidCallRuns) {
  Args a;
  a.run();
  EXPECT_FALSE(a.untouched());
}

TEST(QuantValidation, WrongDtypes) {
  Args a;
  a.out = TensorView(a.q.data(), DType::kUInt8, {T, H});
  expect_error([&] { a.run(); }, ErrorKind::kType, {"out", "int8 or fp8e4m3", "uint8"});
  Args b;
  b.in = TensorView(b.q.data(), DType::kInt8, {T, H});
  expect_error([&] { b.run(); }, ErrorKind::kType, {"in", "fp32, fp16 or bf16", "int8"});
  Args c;
  c.scale = TensorView(c.zps.data(), DType::kInt32, {T});
  expect_error([&] { c.run(); }, ErrorKind::kType, {"scale", "fp32", "int32"});
  Args d;
  d.options.symmetric = false;
  d.azp = TensorView(d.scales.data(), DType::kFloat32, {T});
  expect_error([&] { d.run(); }, ErrorKind::kType, {"azp", "int32", "fp32"});
  EXPECT_TRUE(a.untouched());
}

TEST(QuantValidation, ShapesAndStrides) {
  Args a;
  a.out = TensorView(a.q.data(), DType::kInt8, {T, H - 1});
  expect_error([&] { a.run(); }, ErrorKind::kValue, {"out", "[T=4, H=128]", "[4, 127]"});
  Args b;
  b.in = TensorView::strided(b.x.data(), DType::kFloat32, {T, H / 2}, {H, 2});
  b.out = TensorView(b.q.data(), DType::kInt8, {T, H / 2});
  expect_error([&] { b.run(); }, ErrorKind::kValue, {"in", "stride(1) == 1"});
  Args c;
  c.in = TensorView(c.x.data(), DType::kFloat32, {T * H});
  expect_error([&] { c.run(); }, ErrorKind::kValue, {"in", "2-D"});
}

TEST(QuantValidation, ScaleLengthsPerMode) {
  Args a;
  a.scale = TensorView(a.scales.data(), DType::kFloat32, {T - 1});
  expect_error([&] { a.run(); }, ErrorKind::kValue, {"scale", "T=4", "[3]"});
  Args b;
  b.options.mode = QuantMode::kStaticPerTensor;
  expect_error([&] { b.run(); }, ErrorKind::kValue, {"scale", "1 element", "[4]"});
  Args c;
  c.options.mode = QuantMode::kDynamicPerGroup;
  c.options.group_size = 32;
  c.scale = TensorView(c.scales.data(), DType::kFloat32, {T, 3});
  expect_error([&] { c.run(); }, ErrorKind::kValue, {"scale", "H/group_size=4", "[4, 3]"});
  Args d;
  d.options.mode = QuantMode::kDynamicPerGroup;
  d.options.group_size = 32;
  d.scale = TensorView::strided(d.scales.data(), DType::kFloat32, {T, 4}, {2, 2});
  expect_error([&] { d.run(); }, ErrorKind::kValue, {"scale", "row-major", "column-major"});
}

TEST(QuantValidation, GroupSizeMustDivideHidden) {
  Args a;
  a.options.mode = QuantMode::kDynamicPerGroup;
  a.options.group_size = 48;
  a.scale = TensorView(a.scales.data(), DType::kFloat32, {T, 2});
  expect_error([&] { a.run(); }, ErrorKind::kValue, {"group_size", "divisor of H=128", "48"});
  a.options.group_size = 0;
  expect_error([&] { a.run(); }, ErrorKind::kValue, {"group_size", "got 0"});
}

TEST(QuantValidation, ZeroPointConsistency) {
  Args a;  // symmetric but azp given
  a.azp = TensorView(a.zps.data(), DType::kInt32, {T});
  expect_error([&] { a.run(); }, ErrorKind::kValue, {"azp", "symmetric is true"});
  Args b;  // asymmetric but no azp
  b.options.symmetric = false;
  expect_error([&] { b.run(); }, ErrorKind::kValue, {"azp", "required"});
  Args c;  // fp8 is symmetric only
  std::vector<uint8_t> f8(T * H);
  c.out = TensorView(f8.data(), DType::kFloat8E4M3, {T, H});
  c.options.symmetric = false;
  c.azp = TensorView(c.zps.data(), DType::kInt32, {T});
  expect_error([&] { c.run(); }, ErrorKind::kValue, {"fp8e4m3", "symmetric only"});
  Args d;  // azp length
  d.options.symmetric = false;
  d.azp = TensorView(d.zps.data(), DType::kInt32, {T + 1});
  expect_error([&] { d.run(); }, ErrorKind::kValue, {"azp", "T=4"});
}

TEST(QuantValidation, NullMisalignedAndDevices) {
  Args a;
  a.in = TensorView(static_cast<const void*>(nullptr), DType::kFloat32, {T, H});
  expect_error([&] { a.run(); }, ErrorKind::kValue, {"in", "null"});
  Args b;
  b.scale = TensorView(reinterpret_cast<uint8_t*>(b.scales.data()) + 1, DType::kFloat32, {T});
  expect_error([&] { b.run(); }, ErrorKind::kValue, {"scale", "aligned to 4 bytes"});
  Args c;
  c.scale = TensorView(c.scales.data(), DType::kFloat32, {T}, Device::cuda(0));
  expect_error([&] { c.run(); }, ErrorKind::kValue, {"scale", "cpu (the device of out)", "cuda:0"});
}

TEST(QuantValidation, DequantizeRejections) {
  std::vector<int8_t> q(T * H, 1);
  std::vector<float> out(T * H), scale(T, 1.0f);
  std::vector<int32_t> azp(T, 0);
  QuantOptions o;
  expect_error([&] {
    dequantize(TensorView(out.data(), DType::kFloat32, {T, H}), TensorView(q.data(), DType::kInt8, {T, H}),
               TensorView(scale.data(), DType::kFloat32, {T - 1}), std::nullopt, o);
  }, ErrorKind::kValue, {"scale", "T=4"});
  expect_error([&] {
    dequantize(TensorView(out.data(), DType::kInt32, {T, H}), TensorView(q.data(), DType::kInt8, {T, H}),
               TensorView(scale.data(), DType::kFloat32, {T}), std::nullopt, o);
  }, ErrorKind::kType, {"out", "fp32, fp16 or bf16"});
  std::vector<uint8_t> f8(T * H);
  expect_error([&] {
    dequantize(TensorView(out.data(), DType::kFloat32, {T, H}), TensorView(f8.data(), DType::kFloat8E4M3, {T, H}),
               TensorView(scale.data(), DType::kFloat32, {T}), TensorView(azp.data(), DType::kInt32, {T}), o);
  }, ErrorKind::kValue, {"symmetric only"});
}

TEST(QuantValidation, QuantizeWeightRejections) {
  std::vector<float> w(8 * 64, 0.5f);
  std::vector<int8_t> q(8 * 64, 42);
  std::vector<float> scale(8 * 2);
  const TensorView w_v(w.data(), DType::kFloat32, {8, 64}), q_v(q.data(), DType::kInt8, {8, 64});
  expect_error([&] { quantize_weight(q_v, TensorView(scale.data(), DType::kFloat32, {7}), w_v); },
               ErrorKind::kValue, {"scale", "T=8", "[7]"});
  expect_error([&] { quantize_weight(q_v, TensorView(scale.data(), DType::kFloat32, {8, 2}), w_v, 48); },
               ErrorKind::kValue, {"group_size", "divisor of H=64", "48"});
  expect_error([&] { quantize_weight(q_v, TensorView(scale.data(), DType::kFloat32, {8}), TensorView(q.data(), DType::kInt8, {8, 64})); },
               ErrorKind::kType, {"w", "fp32, fp16 or bf16", "int8"});
  expect_error([&] { quantize_weight(q_v, TensorView(scale.data(), DType::kFloat32, {8}), TensorView(w.data(), DType::kFloat32, {8, 32})); },
               ErrorKind::kValue, {"out", "[T=8, H=32]"});
  for (auto v : q) ASSERT_EQ(v, 42);
}

TEST(QuantValidation, Int4Helpers) {
  std::vector<uint8_t> values(2 * 8, 3), packed(2 * 4);
  values[5] = 16;
  expect_error([&] {
    pack_int4(TensorView(packed.data(), DType::kUInt8, {2, 4}), TensorView(values.data(), DType::kUInt8, {2, 8}));
  }, ErrorKind::kValue, {"values", "[0, 5]", "16", "4 bits"});
  expect_error([&] {
    pack_int4(TensorView(packed.data(), DType::kUInt8, {2, 3}), TensorView(values.data(), DType::kUInt8, {2, 7}));
  }, ErrorKind::kValue, {"K=7", "even"});
  expect_error([&] {
    pack_int4(TensorView(packed.data(), DType::kUInt8, {2, 8}), TensorView(values.data(), DType::kUInt8, {2, 8}));
  }, ErrorKind::kValue, {"out_packed", "K/2=4"});
  std::vector<float> w(2 * 64), s(2 * 2), off(2 * 2);
  expect_error([&] {
    quantize_weight_int4(TensorView(packed.data(), DType::kUInt8, {2, 32}), TensorView(s.data(), DType::kFloat32, {2, 2}),
                         TensorView(off.data(), DType::kFloat32, {2, 2}), TensorView(w.data(), DType::kFloat32, {2, 64}), 48);
  }, ErrorKind::kValue, {"group_size", "K=64", "48"});
  expect_error([&] {
    quantize_weight_int4(TensorView(packed.data(), DType::kUInt8, {2, 32}), TensorView(s.data(), DType::kFloat32, {2, 1}),
                         TensorView(off.data(), DType::kFloat32, {2, 2}), TensorView(w.data(), DType::kFloat32, {2, 64}), 32);
  }, ErrorKind::kValue, {"scale", "K/group_size=2"});
  expect_error([&] {
    quantize_weight_int4(TensorView(packed.data(), DType::kUInt8, {2, 32}, Device::cuda(0)),
                         TensorView(s.data(), DType::kFloat32, {2, 2}), TensorView(off.data(), DType::kFloat32, {2, 2}),
                         TensorView(w.data(), DType::kFloat32, {2, 64}), 32);
  }, ErrorKind::kValue, {"out_packed", "CPU"});
  // Group-major parameters ([G, N] viewed transposed) need a group stride >= N.
  std::vector<uint8_t> packed4(4 * 16);
  std::vector<float> w4(4 * 32), s_gm(2 * 4), off_gm(2 * 4);
  expect_error([&] {
    quantize_weight_int4(TensorView(packed4.data(), DType::kUInt8, {4, 16}),
                         TensorView::strided(s_gm.data(), DType::kFloat32, {4, 2}, {1, 3}),
                         TensorView(off_gm.data(), DType::kFloat32, {4, 2}), TensorView(w4.data(), DType::kFloat32, {4, 32}), 16);
  }, ErrorKind::kValue, {"scale", "stride(1) >= N=4", "(1, 3)"});
  expect_error([&] {
    quantize_weight_int4(TensorView(packed4.data(), DType::kUInt8, {4, 16}), TensorView(s_gm.data(), DType::kFloat32, {4, 2}),
                         TensorView::strided(off_gm.data(), DType::kFloat32, {4, 2}, {1, 4}, Device::cuda(0)),
                         TensorView(w4.data(), DType::kFloat32, {4, 32}), 16);
  }, ErrorKind::kValue, {"offset", "CPU"});
}

}  // namespace
}  // namespace qgemm::test
