// Host entries of the fused ops (qgemm/fused.h): validate every argument with
// the core/check.h vocabulary, build a FusedArgs, dispatch to the CPU or CUDA
// backend. Nothing else happens here.
#include <cmath>
#include <string>
#include <vector>

#include "core/check.h"
#include "fused/cpu/fused_cpu.h"
#include "fused/fused_args.h"
#include "qgemm/fused.h"
#if QGEMM_WITH_CUDA
#include "fused/cuda/fused_cuda.h"
#endif

namespace qgemm {
namespace {

using detail::check_broadcast_vector;
using detail::check_dtype;
using detail::check_row_major;
using detail::check_same_dtype;
using detail::check_vector;
using detail::fail;
using detail::FusedArgs;
using detail::FusedOp;
using detail::VectorOrientation;

constexpr std::initializer_list<DType> kFloatDtypes = {DType::kFloat32, DType::kFloat16,
                                                       DType::kBFloat16};

// The tensors of one call, for the device and overlap checks: every output
// (written) tensor must not share memory with any other tensor of the call.
class CallTensors {
 public:
  explicit CallTensors(Device device) : device_(device) {}
  void add(const TensorView& t, const char* name, bool written) {
    detail::check_device(t, name, device_, "out.q");
    detail::check_not_null(t, name);
    detail::check_element_aligned(t, name);
    entries_.push_back({t, name, written});
  }
  void check_no_overlaps() const {
    for (size_t i = 0; i < entries_.size(); ++i) {
      for (size_t j = 0; j < entries_.size(); ++j) {
        if (i != j && entries_[i].written && (j > i || !entries_[j].written)) {
          detail::check_no_overlap(entries_[i].view, entries_[i].name, entries_[j].view,
                                   entries_[j].name);
        }
      }
    }
  }

 private:
  struct Entry {
    TensorView view;
    const char* name;
    bool written;
  };
  Device device_;
  std::vector<Entry> entries_;
};

void check_eps(float eps) {
  if (!std::isfinite(eps) || eps < 0.0f) {
    fail(ErrorKind::kValue, "eps: expected a finite value >= 0, got " + std::to_string(eps));
  }
}

// out.q [T, N] and its scales; fills the output part of args.
void validate_output(const char* op, const QuantOutput& out, FusedArgs& args, CallTensors& tensors) {
  detail::check_backend_available(out.q.device(), op);
  check_dtype(out.q, "out.q", {DType::kInt8, DType::kFloat8E4M3});
  detail::check_rank(out.q, "out.q", 2);
  const int64_t t = out.q.size(0), n = out.q.size(1);
  if (n < 1) fail(ErrorKind::kValue, "out.q: expected N >= 1 columns, got shape " + detail::shape_string(out.q));
  check_row_major(out.q, "out.q", "T", t, "N", n);
  const bool fp8 = out.q.dtype() == DType::kFloat8E4M3;
  const bool dynamic = out.mode == FusedScale::kDynamicPerToken;

  check_dtype(out.scale, "out.scale", {DType::kFloat32});
  if (dynamic) {
    check_vector(out.scale, "out.scale", "T", t, VectorOrientation::kColumn);
  } else if (out.scale.numel() != 1) {
    fail(ErrorKind::kValue, "out.scale: expected 1 element for a static scale, got shape " +
                                detail::shape_string(out.scale));
  }
  if (out.azp) {
    if (fp8) {
      fail(ErrorKind::kType, "out.azp: zero points (asymmetric quantization) need an int8 out.q, got fp8e4m3");
    }
    check_dtype(*out.azp, "out.azp", {DType::kInt32});
    if (dynamic) {
      check_vector(*out.azp, "out.azp", "T", t, VectorOrientation::kColumn);
    } else if (out.azp->numel() != 1) {
      fail(ErrorKind::kValue, "out.azp: expected 1 element for a static zero point, got shape " +
                                  detail::shape_string(*out.azp));
    }
  }
  if (out.narrow_range && (fp8 || out.azp)) {
    fail(ErrorKind::kValue, "out.narrow_range: the range [-127, 127] applies to symmetric int8 only");
  }
  tensors.add(out.q, "out.q", true);
  tensors.add(out.scale, "out.scale", dynamic);
  if (out.azp) tensors.add(*out.azp, "out.azp", dynamic);

  args.tokens = t;
  args.hidden = n;
  args.q_fp8 = fp8;
  args.q = out.q.data();
  args.ldq = t > 1 ? out.q.stride(0) : n;
  args.scale = out.scale.data_as<float>();
  args.azp = out.azp ? out.azp->data_as<int32_t>() : nullptr;
  args.dynamic = dynamic;
  args.narrow_range = out.narrow_range;
  args.device = out.q.device();
}

// x [T, width] in a float dtype.
void validate_float_input(const TensorView& x, int64_t width, const char* width_symbol,
                          FusedArgs& args, CallTensors& tensors) {
  check_dtype(x, "x", kFloatDtypes);
  check_row_major(x, "x", "T", args.tokens, width_symbol, width);
  tensors.add(x, "x", false);
  args.x_dtype = x.dtype();
  args.x = x.data();
  args.ldx = args.tokens > 1 ? x.stride(0) : width;
  args.param_dtype = x.dtype();
}

// A per-hidden parameter of N elements in `dtype_owner`'s dtype.
const void* validate_param(const TensorView& p, const char* name, const TensorView& dtype_owner,
                           const char* owner_name, const FusedArgs& args, CallTensors& tensors) {
  check_same_dtype(p, name, dtype_owner, owner_name);
  check_vector(p, name, "N", args.hidden, VectorOrientation::kRow);
  tensors.add(p, name, false);
  return p.data();
}

// The int32 GEMM output and its dequantization scales.
void validate_int32_input(const Int32GemmOutput& x, FusedArgs& args, CallTensors& tensors) {
  check_dtype(x.acc, "x.acc", {DType::kInt32});
  check_row_major(x.acc, "x.acc", "T", args.tokens, "N", args.hidden);
  check_dtype(x.scale_a, "x.scale_a", {DType::kFloat32});
  check_dtype(x.scale_w, "x.scale_w", {DType::kFloat32});
  args.scale_a_per_token =
      check_broadcast_vector(x.scale_a, "x.scale_a", "T", args.tokens, VectorOrientation::kColumn);
  args.scale_w_per_channel =
      check_broadcast_vector(x.scale_w, "x.scale_w", "N", args.hidden, VectorOrientation::kRow);
  tensors.add(x.acc, "x.acc", false);
  tensors.add(x.scale_a, "x.scale_a", false);
  tensors.add(x.scale_w, "x.scale_w", false);
  args.x_dtype = DType::kInt32;
  args.x = x.acc.data();
  args.ldx = args.tokens > 1 ? x.acc.stride(0) : args.hidden;
  args.scale_a = x.scale_a.data_as<const float>();
  args.scale_w = x.scale_w.data_as<const float>();
}

void run(FusedArgs& args, CallTensors& tensors, Stream stream) {
  tensors.check_no_overlaps();
  args.stream = stream;
  if (args.tokens == 0) return;
  if (args.device.is_cpu()) {
    detail::fused_cpu(args);
    return;
  }
#if QGEMM_WITH_CUDA
  detail::fused_cuda(args);
#endif
}

}  // namespace

void rms_norm_quant(const QuantOutput& out, const TensorView& x, const TensorView& weight,
                    float eps, Stream stream) {
  FusedArgs args;
  CallTensors tensors(out.q.device());
  validate_output("rms_norm_quant", out, args, tensors);
  args.op = FusedOp::kRmsNorm;
  validate_float_input(x, args.hidden, "N", args, tensors);
  args.weight = validate_param(weight, "weight", x, "x", args, tensors);
  check_eps(eps);
  args.eps = eps;
  run(args, tensors, stream);
}

void add_rms_norm_quant(const QuantOutput& out, const TensorView& x, const TensorView& residual,
                        const TensorView& weight, float eps, Stream stream) {
  FusedArgs args;
  CallTensors tensors(out.q.device());
  validate_output("add_rms_norm_quant", out, args, tensors);
  args.op = FusedOp::kRmsNorm;
  validate_float_input(x, args.hidden, "N", args, tensors);
  check_same_dtype(residual, "residual", x, "x");
  check_row_major(residual, "residual", "T", args.tokens, "N", args.hidden);
  tensors.add(residual, "residual", true);
  args.residual = residual.data();
  args.ld_residual = args.tokens > 1 ? residual.stride(0) : args.hidden;
  args.weight = validate_param(weight, "weight", x, "x", args, tensors);
  check_eps(eps);
  args.eps = eps;
  run(args, tensors, stream);
}

void layer_norm_quant(const QuantOutput& out, const TensorView& x, const TensorView& gamma,
                      const TensorView& beta, float eps, const std::optional<TensorView>& residual,
                      const std::optional<TensorView>& bias, Stream stream) {
  FusedArgs args;
  CallTensors tensors(out.q.device());
  validate_output("layer_norm_quant", out, args, tensors);
  args.op = FusedOp::kLayerNorm;
  validate_float_input(x, args.hidden, "N", args, tensors);
  args.weight = validate_param(gamma, "gamma", x, "x", args, tensors);
  args.beta = validate_param(beta, "beta", x, "x", args, tensors);
  if (bias) args.bias = validate_param(*bias, "bias", x, "x", args, tensors);
  if (residual) {
    check_same_dtype(*residual, "residual", x, "x");
    check_row_major(*residual, "residual", "T", args.tokens, "N", args.hidden);
    tensors.add(*residual, "residual", false);
    args.residual = residual->data();
    args.ld_residual = args.tokens > 1 ? residual->stride(0) : args.hidden;
  }
  check_eps(eps);
  args.eps = eps;
  run(args, tensors, stream);
}

void layer_norm_quant_int32(const QuantOutput& out, const Int32GemmOutput& x,
                            const TensorView& residual, const TensorView& residual_scale,
                            const TensorView& gamma, const TensorView& beta, float eps,
                            const std::optional<TensorView>& bias, Stream stream) {
  FusedArgs args;
  CallTensors tensors(out.q.device());
  validate_output("layer_norm_quant_int32", out, args, tensors);
  args.op = FusedOp::kLayerNorm;
  validate_int32_input(x, args, tensors);
  check_dtype(gamma, "gamma", kFloatDtypes);
  args.param_dtype = gamma.dtype();
  args.weight = validate_param(gamma, "gamma", gamma, "gamma", args, tensors);
  args.beta = validate_param(beta, "beta", gamma, "gamma", args, tensors);
  if (bias) args.bias = validate_param(*bias, "bias", gamma, "gamma", args, tensors);
  check_dtype(residual, "residual", {DType::kInt8});
  check_row_major(residual, "residual", "T", args.tokens, "N", args.hidden);
  check_dtype(residual_scale, "residual_scale", {DType::kFloat32});
  args.residual_scale_per_token = check_broadcast_vector(residual_scale, "residual_scale", "T",
                                                         args.tokens, VectorOrientation::kColumn);
  tensors.add(residual, "residual", false);
  tensors.add(residual_scale, "residual_scale", false);
  args.residual = residual.data();
  args.ld_residual = args.tokens > 1 ? residual.stride(0) : args.hidden;
  args.residual_scale = residual_scale.data_as<const float>();
  check_eps(eps);
  args.eps = eps;
  run(args, tensors, stream);
}

void silu_and_mul_quant(const QuantOutput& out, const TensorView& x, Stream stream) {
  FusedArgs args;
  CallTensors tensors(out.q.device());
  validate_output("silu_and_mul_quant", out, args, tensors);
  args.op = FusedOp::kSiluMul;
  validate_float_input(x, 2 * args.hidden, "2N", args, tensors);
  run(args, tensors, stream);
}

void bias_gelu_quant(const QuantOutput& out, const TensorView& x,
                     const std::optional<TensorView>& bias, GeluApproximation approximation,
                     Stream stream) {
  FusedArgs args;
  CallTensors tensors(out.q.device());
  validate_output("bias_gelu_quant", out, args, tensors);
  args.op = FusedOp::kGelu;
  validate_float_input(x, args.hidden, "N", args, tensors);
  if (bias) args.bias = validate_param(*bias, "bias", x, "x", args, tensors);
  args.gelu_tanh = approximation == GeluApproximation::kTanh;
  run(args, tensors, stream);
}

void bias_gelu_quant_int32(const QuantOutput& out, const Int32GemmOutput& x,
                           const std::optional<TensorView>& bias, GeluApproximation approximation,
                           Stream stream) {
  FusedArgs args;
  CallTensors tensors(out.q.device());
  validate_output("bias_gelu_quant_int32", out, args, tensors);
  args.op = FusedOp::kGelu;
  validate_int32_input(x, args, tensors);
  if (bias) {
    check_dtype(*bias, "bias", kFloatDtypes);
    args.param_dtype = bias->dtype();
    args.bias = validate_param(*bias, "bias", *bias, "bias", args, tensors);
  }
  args.gelu_tanh = approximation == GeluApproximation::kTanh;
  run(args, tensors, stream);
}

}  // namespace qgemm
