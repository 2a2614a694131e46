// Every argument rejection of weight_only_mm / weight_only_prepack: each bad
// input throws qgemm::Error naming the argument and what was expected, before
// anything runs (the output stays untouched).
#include <gtest/gtest.h>

#include <vector>

#include "common/expect_error.h"
#include "qgemm/weight_only.h"

namespace qgemm {
namespace {

using test::expect_error;

constexpr int64_t M = 3, N = 20, K = 128, G = 32;

// A valid W4A16 problem with group 32; each test breaks one thing.
struct Args {
  std::vector<uint16_t> a_data = std::vector<uint16_t>(M * K, 0x3f80);  // bf16 1.0
  std::vector<uint8_t> w_data = std::vector<uint8_t>(N * K, 0x21);
  std::vector<uint16_t> out_data = std::vector<uint16_t>(M * N, 0x7777);
  std::vector<float> params = std::vector<float>(N * K, 0.5f);
  std::vector<uint16_t> bias_data = std::vector<uint16_t>(N, 0);

  TensorView out = TensorView(out_data.data(), DType::kBFloat16, {M, N});
  TensorView a = TensorView(a_data.data(), DType::kBFloat16, {M, K});
  TensorView w = TensorView(w_data.data(), DType::kUInt8, {N, K / 2});
  TensorView scales = TensorView(params.data(), DType::kFloat32, {N, K / G});
  std::optional<TensorView> offsets = TensorView(params.data(), DType::kFloat32, {N, K / G});
  std::optional<TensorView> bias = TensorView(bias_data.data(), DType::kBFloat16, {N});
  int group_size = G;

  void run() { weight_only_mm(out, a, w, scales, offsets, group_size, bias); }
  bool out_untouched() const {
    for (auto v : out_data) if (v != 0x7777) return false;
    return true;
  }
};

void expect_rejected(Args& args, ErrorKind kind, const std::vector<std::string>& pieces) {
  expect_error([&] { args.run(); }, kind, pieces);
  EXPECT_TRUE(args.out_untouched());
}

TEST(WeightOnlyValidation, ValidArgumentsRun) {
  Args args;
  args.run();
  EXPECT_FALSE(args.out_untouched());
  Args int8;
  int8.w = TensorView(int8.w_data.data(), DType::kInt8, {N, K});
  int8.run();
  Args per_channel;  // [N] and [N,1] scales, no offsets, no bias
  per_channel.group_size = K;
  per_channel.scales = TensorView(per_channel.params.data(), DType::kFloat32, {N});
  per_channel.offsets = TensorView(per_channel.params.data(), DType::kFloat32, {N, 1});
  per_channel.bias = std::nullopt;
  per_channel.run();
  EXPECT_FALSE(per_channel.out_untouched());
  Args half;  // 16-bit parameters in the activation dtype, [N, G] and per channel [N]
  half.scales = TensorView(half.a_data.data(), DType::kBFloat16, {N, K / G});
  half.offsets = TensorView(half.a_data.data(), DType::kBFloat16, {N, K / G});
  half.run();
  EXPECT_FALSE(half.out_untouched());
  Args half_channel;
  half_channel.group_size = K;
  half_channel.scales = TensorView(half_channel.a_data.data(), DType::kBFloat16, {N});
  half_channel.offsets = std::nullopt;
  half_channel.run();
  EXPECT_FALSE(half_channel.out_untouched());
}

// The workspace overload: the CPU backend needs no workspace
// (weight_only_workspace_bytes = 0) and computes the same bits with one; a
// workspace of the wrong dtype, rank or stride, on another device or
// overlapping an input is refused (the GPU-only checks — size, alignment —
// are in test_wonly_stream_k.cpp).
TEST(WeightOnlyValidation, Workspace) {
  EXPECT_EQ(weight_only_workspace_bytes(Device::cpu()), 0);
  Args plain, with;
  plain.run();
  std::vector<uint8_t> scratch(64, 0xab);
  auto run_with = [&](Args& x, const TensorView& ws) {
    weight_only_mm(x.out, x.a, x.w, x.scales, x.offsets, x.group_size, x.bias, ws);
  };
  run_with(with, TensorView(scratch.data(), DType::kUInt8, {64}));
  EXPECT_EQ(with.out_data, plain.out_data);
  run_with(with, TensorView(scratch.data(), DType::kUInt8, {0}));  // empty: fine on the CPU

  auto rejected = [&](const TensorView& ws, ErrorKind kind, const std::vector<std::string>& pieces) {
    Args x;
    expect_error([&] { run_with(x, ws); }, kind, pieces);
    EXPECT_TRUE(x.out_untouched());
  };
  rejected(TensorView(scratch.data(), DType::kInt8, {64}), ErrorKind::kType, {"workspace", "uint8"});
  rejected(TensorView(scratch.data(), DType::kUInt8, {8, 8}), ErrorKind::kValue, {"workspace", "1"});
  rejected(TensorView::strided(scratch.data(), DType::kUInt8, {32}, {2}), ErrorKind::kValue,
           {"workspace", "contiguous", "stride 2"});
  rejected(TensorView(scratch.data(), DType::kUInt8, {64}, Device::cuda(0)), ErrorKind::kValue,
           {"workspace", "device"});
  Args overlap;
  expect_error([&] { run_with(overlap, TensorView(overlap.out_data.data(), DType::kUInt8, {16})); },
               ErrorKind::kValue, {"workspace", "overlap", "out"});
}

TEST(WeightOnlyValidation, WrongDtypes) {
  Args x;
  x.out = TensorView(x.params.data(), DType::kFloat32, {M, N});
  expect_rejected(x, ErrorKind::kType, {"out", "bf16 or fp16", "fp32"});
  Args y;
  y.a = TensorView(y.a_data.data(), DType::kFloat16, {M, K});
  expect_rejected(y, ErrorKind::kType, {"a:", "bf16 (the dtype of out)", "fp16"});
  Args z;
  z.w = TensorView(z.a_data.data(), DType::kFloat16, {N, K});
  expect_rejected(z, ErrorKind::kType, {"w:", "int8 or uint8", "fp16"});
  // Parameters are fp32 or the activation dtype (bf16 here), offsets in the scales' dtype.
  Args s;
  s.scales = TensorView(s.a_data.data(), DType::kFloat16, {N, K / G});
  expect_rejected(s, ErrorKind::kType, {"scales", "fp32 or bf16", "fp16"});
  Args o;
  o.offsets = TensorView(o.a_data.data(), DType::kFloat16, {N, K / G});
  expect_rejected(o, ErrorKind::kType, {"offsets", "fp32 or bf16", "fp16"});
  Args mixed;
  mixed.offsets = TensorView(mixed.a_data.data(), DType::kBFloat16, {N, K / G});
  expect_rejected(mixed, ErrorKind::kType, {"offsets", "fp32 (the dtype of scales)", "bf16"});
  Args fp16_out;  // fp16 activations: fp16 parameters, not bf16
  fp16_out.out = TensorView(fp16_out.out_data.data(), DType::kFloat16, {M, N});
  fp16_out.a = TensorView(fp16_out.a_data.data(), DType::kFloat16, {M, K});
  fp16_out.bias = TensorView(fp16_out.bias_data.data(), DType::kFloat16, {N});
  fp16_out.scales = TensorView(fp16_out.a_data.data(), DType::kBFloat16, {N, K / G});
  fp16_out.offsets = std::nullopt;
  expect_rejected(fp16_out, ErrorKind::kType, {"scales", "fp32 or fp16", "bf16"});
  Args b;
  b.bias = TensorView(b.params.data(), DType::kFloat32, {N});
  expect_rejected(b, ErrorKind::kType, {"bias", "bf16 (the dtype of out)", "fp32"});
}

TEST(WeightOnlyValidation, KAndGroupSize) {
  Args k;  // K = 100: not a multiple of 32
  k.a = TensorView(k.a_data.data(), DType::kBFloat16, {M, 100});
  expect_rejected(k, ErrorKind::kValue, {"a:", "K=100", "multiple of 32"});
  Args g;
  g.group_size = 48;
  expect_rejected(g, ErrorKind::kValue, {"group_size", "32, 64, 128 or K=128", "48"});
  Args d;  // K = 96 with group 64
  d.a = TensorView(d.a_data.data(), DType::kBFloat16, {M, 96});
  d.w = TensorView(d.w_data.data(), DType::kUInt8, {N, 48});
  d.group_size = 64;
  expect_rejected(d, ErrorKind::kValue, {"group_size", "K=96", "not divisible by group_size=64"});
  Args zero;
  zero.group_size = 0;
  expect_rejected(zero, ErrorKind::kValue, {"group_size", "got 0"});
}

TEST(WeightOnlyValidation, WeightShapes) {
  Args unpacked;  // uint8 [N, K]: one value per byte
  unpacked.w = TensorView(unpacked.w_data.data(), DType::kUInt8, {N, K});
  expect_rejected(unpacked, ErrorKind::kValue, {"w:", "[N=20, K/2=64]", "pack_int4", "unpacked int4?"});
  Args half;  // int8 [N, K/2]
  half.w = TensorView(half.w_data.data(), DType::kInt8, {N, K / 2});
  expect_rejected(half, ErrorKind::kValue, {"w:", "[N=20, K=128]", "[20, 64]"});
  Args rows;
  rows.w = TensorView(rows.w_data.data(), DType::kUInt8, {N - 1, K / 2});
  expect_rejected(rows, ErrorKind::kValue, {"w:", "N=20", "[19, 64]"});
  Args col_major;
  col_major.w = TensorView::strided(col_major.w_data.data(), DType::kUInt8, {N, K / 2}, {1, N});
  expect_rejected(col_major, ErrorKind::kValue, {"w:", "row-major"});
  Args rank;
  rank.w = TensorView(rank.w_data.data(), DType::kUInt8, {N * K / 2});
  expect_rejected(rank, ErrorKind::kValue, {"w:", "2-D plain", "3-D prepacked", "[1280]"});
  Args packed;  // prepacked for int4 N=20, K=128 is [2, 1, 1024]
  packed.w = TensorView(packed.w_data.data(), DType::kUInt8, {2, 2, 1024});
  expect_rejected(packed, ErrorKind::kValue, {"w:", "prepacked int4", "[2, 1, 1024]", "[2, 2, 1024]"});
}

TEST(WeightOnlyValidation, ParamShapes) {
  Args s;  // group 32 needs [N, 4]
  s.scales = TensorView(s.params.data(), DType::kFloat32, {N, 2});
  expect_rejected(s, ErrorKind::kValue, {"scales", "[N=20, K/group_size=4]", "[20, 2]"});
  Args t;
  t.scales = TensorView(t.params.data(), DType::kFloat32, {N * 4});
  expect_rejected(t, ErrorKind::kValue, {"scales", "expected a 2-D tensor", "[80]"});
  Args o;
  o.offsets = TensorView(o.params.data(), DType::kFloat32, {N + 1, 4});
  expect_rejected(o, ErrorKind::kValue, {"offsets", "[N=20, K/group_size=4]", "[21, 4]"});
  Args pc;  // per channel: [N] accepted, [N+1] not
  pc.group_size = K;
  pc.scales = TensorView(pc.params.data(), DType::kFloat32, {N + 1});
  pc.offsets = std::nullopt;
  expect_rejected(pc, ErrorKind::kValue, {"scales", "N=20", "[21]"});
  Args b;
  b.bias = TensorView(b.bias_data.data(), DType::kBFloat16, {N - 1});
  expect_rejected(b, ErrorKind::kValue, {"bias", "N=20", "[19]"});
}

// Group-major parameters: a [K/group, N] tensor viewed as [N, K/group]
// (strides (1, ld ≥ N)); the offsets laid out as the scales.
TEST(WeightOnlyValidation, GroupMajorParams) {
  Args ok;
  ok.scales = TensorView::strided(ok.params.data(), DType::kFloat32, {N, K / G}, {1, N});
  ok.offsets = TensorView::strided(ok.params.data(), DType::kFloat32, {N, K / G}, {1, N});
  ok.run();
  EXPECT_FALSE(ok.out_untouched());
  Args padded;  // padded groups: ld > N
  padded.scales = TensorView::strided(padded.params.data(), DType::kFloat32, {N, K / G}, {1, N + 4});
  padded.offsets = TensorView::strided(padded.params.data() + 1, DType::kFloat32, {N, K / G}, {1, N + 4});
  padded.run();
  EXPECT_FALSE(padded.out_untouched());
  Args other_ld;  // offsets group-major too, but with another group stride
  other_ld.scales = TensorView::strided(other_ld.params.data(), DType::kFloat32, {N, K / G}, {1, N});
  other_ld.offsets = TensorView::strided(other_ld.params.data(), DType::kFloat32, {N, K / G}, {1, N + 4});
  expect_rejected(other_ld, ErrorKind::kValue, {"offsets", "the scales' layout (group stride 20", "(1, 24)"});
  Args short_stride;  // groups would overlap
  short_stride.scales = TensorView::strided(short_stride.params.data(), DType::kFloat32, {N, K / G}, {1, N - 1});
  expect_rejected(short_stride, ErrorKind::kValue, {"scales", "stride(1) >= N=20", "(1, 19)"});
  Args mixed;  // group-major scales, row-major offsets
  mixed.scales = TensorView::strided(mixed.params.data(), DType::kFloat32, {N, K / G}, {1, N});
  expect_rejected(mixed, ErrorKind::kValue, {"offsets", "the scales' layout", "group-major", "(4, 1)"});
  Args mixed2;  // the other way round
  mixed2.offsets = TensorView::strided(mixed2.params.data(), DType::kFloat32, {N, K / G}, {1, N});
  expect_rejected(mixed2, ErrorKind::kValue, {"offsets", "the scales' layout", "row-major", "(1, 20)"});
  Args neither;  // no unit stride at all
  neither.scales = TensorView::strided(neither.params.data(), DType::kFloat32, {N, K / G}, {8, 2});
  expect_rejected(neither, ErrorKind::kValue, {"scales", "stride(1) == 1", "(8, 2)"});
}

TEST(WeightOnlyValidation, ActivationAndOutputShapes) {
  Args a;
  a.a = TensorView(a.a_data.data(), DType::kBFloat16, {M + 1, K});
  expect_rejected(a, ErrorKind::kValue, {"a:", "[M=3, K=128]", "[4, 128]"});
  Args o;
  o.out = TensorView::strided(o.out_data.data(), DType::kBFloat16, {M, N}, {1, M});
  expect_rejected(o, ErrorKind::kValue, {"out", "row-major"});
  Args r;
  r.a = TensorView(r.a_data.data(), DType::kBFloat16, {M * K});
  expect_rejected(r, ErrorKind::kValue, {"a:", "2-D", "[384]"});
}

TEST(WeightOnlyValidation, DevicesMustMatch) {
  Args d;
  d.scales = TensorView(d.params.data(), DType::kFloat32, {N, K / G}, Device::cuda(0));
  expect_rejected(d, ErrorKind::kValue, {"scales", "expected a tensor on cpu", "cuda:0"});
}

TEST(WeightOnlyValidation, Prepack) {
  std::vector<uint8_t> w(N * K, 1), out(4 * 1024, 0);
  const TensorView good_w(w.data(), DType::kUInt8, {N, K / 2});
  const TensorView good_out(out.data(), DType::kUInt8, {2, 1, 1024});
  weight_only_prepack(good_out, good_w);
  expect_error([&] { weight_only_prepack(TensorView(out.data(), DType::kUInt8, {2, 2, 1024}), good_w); },
               ErrorKind::kValue, {"out", "[2, 1, 1024]", "[2, 2, 1024]"});
  expect_error([&] { weight_only_prepack(TensorView(out.data(), DType::kInt8, {2, 1, 1024}), good_w); },
               ErrorKind::kType, {"out", "uint8 (the dtype of w)", "int8"});
  expect_error([&] { weight_only_prepack(good_out, TensorView(w.data(), DType::kUInt8, {N, 20})); },
               ErrorKind::kValue, {"w:", "K=40", "multiple of 32"});
  expect_error([&] { weight_only_prepack(good_out, TensorView(w.data(), DType::kFloat16, {N, 64})); },
               ErrorKind::kType, {"w:", "int8 or uint8"});
  expect_error([&] { weight_only_prepack(good_out, TensorView(w.data(), DType::kUInt8, {N * 64})); },
               ErrorKind::kValue, {"w:", "2-D"});
}

}  // namespace
}  // namespace qgemm
