// Host entry of the scaled GEMMs: validates every argument (core/check.h),
// builds a ScaledMmArgs and dispatches to the CPU or CUDA backend.
#include <string>

#include "core/check.h"
#include "gemm/cpu/scaled_mm_cpu.h"
#include "gemm/scaled_mm_args.h"
#include "qgemm/gemm.h"
#if QGEMM_WITH_CUDA
#include "gemm/cuda/scaled_mm_cuda.h"
#endif

namespace qgemm {
namespace {

using detail::check_broadcast_vector;
using detail::check_device;
using detail::check_dtype;
using detail::check_element_aligned;
using detail::check_not_null;
using detail::check_vector;
using detail::fail;
using detail::VectorOrientation;

// int8 products are at most 2^14 in magnitude, so an int32 sum of up to 2^17
// of them cannot overflow.
constexpr int64_t kMaxInt8K = 131072;

// Checks shared by every tensor argument: present, aligned, on the device of out.
void check_common(const TensorView& t, const char* name, Device device) {
  check_device(t, name, device, "out");
  check_not_null(t, name);
  check_element_aligned(t, name);
}

detail::ScaledMmArgs validate_scaled_mm(const char* op, const TensorView& out, const TensorView& a,
                                        const TensorView& b, const TensorView& scale_a,
                                        const TensorView& scale_b,
                                        const std::optional<TensorView>& bias, Stream stream) {
  const Device device = out.device();
  detail::check_backend_available(device, op);

  if (device.is_cpu()) {
    check_dtype(out, "out", {DType::kBFloat16, DType::kFloat16, DType::kFloat32});
  } else {
    check_dtype(out, "out", {DType::kBFloat16, DType::kFloat16});
  }
  detail::check_rank(out, "out", 2);
  detail::check_rank(a, "a", 2);
  const int64_t m = out.size(0), n = out.size(1), k = a.size(1);
  if (k < 1) fail(ErrorKind::kValue, "a: expected K >= 1 columns, got shape " + detail::shape_string(a));

  check_dtype(a, "a", {DType::kInt8, DType::kFloat8E4M3});
  detail::check_same_dtype(b, "b", a, "a");
  if (a.dtype() == DType::kInt8 && k > kMaxInt8K) {
    fail(ErrorKind::kValue, "a: K=" + std::to_string(k) + " exceeds " + std::to_string(kMaxInt8K) +
                                ", beyond which the int32 accumulator could overflow");
  }
  detail::check_row_major(out, "out", "M", m, "N", n);
  detail::check_row_major(a, "a", "M", m, "K", k);
  detail::check_col_major(b, "b", "K", k, "N", n);

  check_dtype(scale_a, "scale_a", {DType::kFloat32});
  check_dtype(scale_b, "scale_b", {DType::kFloat32});
  const bool per_token = check_broadcast_vector(scale_a, "scale_a", "M", m, VectorOrientation::kColumn);
  const bool per_channel = check_broadcast_vector(scale_b, "scale_b", "N", n, VectorOrientation::kRow);

  check_common(out, "out", device);
  check_common(a, "a", device);
  check_common(b, "b", device);
  check_common(scale_a, "scale_a", device);
  check_common(scale_b, "scale_b", device);
  if (bias) {
    detail::check_same_dtype(*bias, "bias", out, "out");
    check_vector(*bias, "bias", "N", n, VectorOrientation::kRow);
    check_common(*bias, "bias", device);
  }

  detail::ScaledMmArgs args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.input_dtype = a.dtype();
  args.out_dtype = out.dtype();
  args.a = a.data();
  args.lda = m > 1 ? a.stride(0) : k;
  args.b = b.data();
  args.ldb = n > 1 ? b.stride(1) : k;
  args.out = out.data();
  args.ldo = m > 1 ? out.stride(0) : n;
  args.scale_a = scale_a.data_as<const float>();
  args.scale_a_per_token = per_token;
  args.scale_b = scale_b.data_as<const float>();
  args.scale_b_per_channel = per_channel;
  args.bias = bias ? bias->data() : nullptr;
  args.device = device;
  args.stream = stream;
  return args;
}

void run(const detail::ScaledMmArgs& args) {
  if (args.device.is_cpu()) {
    detail::scaled_mm_cpu(args);
    return;
  }
#if QGEMM_WITH_CUDA
  detail::scaled_mm_cuda(args);
#endif
}

// The workspace of scaled_mm / scaled_mm_azp (qgemm/gemm.h) into `args`.
void attach_workspace(detail::ScaledMmArgs& args, const TensorView& workspace, const TensorView& out,
                      const TensorView& a, const TensorView& b, const TensorView& scale_a,
                      const TensorView& scale_b, const std::optional<TensorView>& bias,
                      const TensorView* azp_adj = nullptr, const std::optional<TensorView>& azp = std::nullopt) {
  detail::check_workspace(workspace, args.device, scaled_mm_workspace_bytes(args.device),
                          "scaled_mm_workspace_bytes(device)",
                          {{&out, "out"}, {&a, "a"}, {&b, "b"}, {&scale_a, "scale_a"}, {&scale_b, "scale_b"},
                           {bias ? &*bias : nullptr, "bias"}, {azp_adj, "azp_adj"}, {azp ? &*azp : nullptr, "azp"}});
  args.workspace = workspace.size(0) > 0 ? workspace.data() : nullptr;
  args.workspace_bytes = workspace.size(0);
}

detail::ScaledMmArgs validate_scaled_mm_call(const TensorView& out, const TensorView& a, const TensorView& b,
                                             const TensorView& scale_a, const TensorView& scale_b,
                                             const std::optional<TensorView>& bias, Stream stream,
                                             Fp8Accumulation fp8_accumulation) {
  if (fp8_accumulation != Fp8Accumulation::kPrecise && fp8_accumulation != Fp8Accumulation::kFast) {
    fail(ErrorKind::kValue, "fp8_accumulation: expected Fp8Accumulation::kPrecise or kFast, got " +
                                std::to_string(static_cast<int>(fp8_accumulation)));
  }
  detail::ScaledMmArgs args =
      validate_scaled_mm("scaled_mm", out, a, b, scale_a, scale_b, bias, stream);
  // int8 accumulates exactly in int32, which meets either request: the flag
  // is dropped here so that no backend ever sees it for int8.
  args.fp8_fast_accum =
      fp8_accumulation == Fp8Accumulation::kFast && args.input_dtype == DType::kFloat8E4M3;
  return args;
}

detail::ScaledMmArgs validate_scaled_mm_azp(const TensorView& out, const TensorView& a, const TensorView& b,
                                            const TensorView& scale_a, const TensorView& scale_b,
                                            const TensorView& azp_adj, const std::optional<TensorView>& azp,
                                            const std::optional<TensorView>& bias, Stream stream) {
  detail::ScaledMmArgs args =
      validate_scaled_mm("scaled_mm_azp", out, a, b, scale_a, scale_b, bias, stream);
  if (args.input_dtype != DType::kInt8) {
    fail(ErrorKind::kType, std::string("a: zero-point GEMMs need int8 inputs, got ") +
                               dtype_name(args.input_dtype));
  }
  check_dtype(azp_adj, "azp_adj", {DType::kInt32});
  check_vector(azp_adj, "azp_adj", "N", args.n, VectorOrientation::kRow);
  check_common(azp_adj, "azp_adj", args.device);
  args.azp_adj = azp_adj.data_as<const int32_t>();
  if (azp) {
    check_dtype(*azp, "azp", {DType::kInt32});
    check_vector(*azp, "azp", "M", args.m, VectorOrientation::kColumn);
    check_common(*azp, "azp", args.device);
    args.azp = azp->data_as<const int32_t>();
  }
  return args;
}

}  // namespace

void scaled_mm(const TensorView& out, const TensorView& a, const TensorView& b,
               const TensorView& scale_a, const TensorView& scale_b,
               const std::optional<TensorView>& bias, Stream stream,
               Fp8Accumulation fp8_accumulation) {
  run(validate_scaled_mm_call(out, a, b, scale_a, scale_b, bias, stream, fp8_accumulation));
}

void scaled_mm(const TensorView& out, const TensorView& a, const TensorView& b,
               const TensorView& scale_a, const TensorView& scale_b,
               const std::optional<TensorView>& bias, const TensorView& workspace, Stream stream,
               Fp8Accumulation fp8_accumulation) {
  detail::ScaledMmArgs args = validate_scaled_mm_call(out, a, b, scale_a, scale_b, bias, stream, fp8_accumulation);
  attach_workspace(args, workspace, out, a, b, scale_a, scale_b, bias);
  run(args);
}

int64_t scaled_mm_workspace_bytes(Device device) {
  detail::check_backend_available(device, "scaled_mm_workspace_bytes");
#if QGEMM_WITH_CUDA
  if (device.is_cuda()) return detail::scaled_mm_workspace_bytes_cuda(device.index);
#endif
  return 0;
}

void scaled_mm_azp(const TensorView& out, const TensorView& a, const TensorView& b,
                   const TensorView& scale_a, const TensorView& scale_b, const TensorView& azp_adj,
                   const std::optional<TensorView>& azp, const std::optional<TensorView>& bias,
                   Stream stream) {
  run(validate_scaled_mm_azp(out, a, b, scale_a, scale_b, azp_adj, azp, bias, stream));
}

void scaled_mm_azp(const TensorView& out, const TensorView& a, const TensorView& b,
                   const TensorView& scale_a, const TensorView& scale_b, const TensorView& azp_adj,
                   const std::optional<TensorView>& azp, const std::optional<TensorView>& bias,
                   const TensorView& workspace, Stream stream) {
  detail::ScaledMmArgs args = validate_scaled_mm_azp(out, a, b, scale_a, scale_b, azp_adj, azp, bias, stream);
  attach_workspace(args, workspace, out, a, b, scale_a, scale_b, bias, &azp_adj, azp);
  run(args);
}

void azp_adj(const TensorView& out, const TensorView& b, std::optional<int32_t> azp, Stream stream) {
  const Device device = out.device();
  detail::check_backend_available(device, "azp_adj");
  check_dtype(out, "out", {DType::kInt32});
  check_dtype(b, "b", {DType::kInt8});
  detail::check_rank(b, "b", 2);
  const int64_t k = b.size(0), n = b.size(1);
  detail::check_col_major(b, "b", "K", k, "N", n);
  check_vector(out, "out", "N", n, VectorOrientation::kRow);
  check_common(out, "out", device);
  check_common(b, "b", device);
  if (k > kMaxInt8K) {
    fail(ErrorKind::kValue, "b: K=" + std::to_string(k) + " exceeds " + std::to_string(kMaxInt8K));
  }
  const int64_t ldb = n > 1 ? b.stride(1) : k;
  const int32_t zero_point = azp.value_or(1);
  if (device.is_cpu()) {
    detail::azp_adj_cpu(out.data_as<int32_t>(), b.data_as<const int8_t>(), k, n, ldb, zero_point);
    return;
  }
#if QGEMM_WITH_CUDA
  detail::azp_adj_cuda(out.data_as<int32_t>(), b.data_as<const int8_t>(), k, n, ldb, zero_point,
                       device, stream);
#else
  (void)stream;
#endif
}

}  // namespace qgemm
