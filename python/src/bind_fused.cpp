// Python bindings of qgemm/fused.h: the out-parameter forms. QuantOutput is
// flattened into (out, scale, azp, mode, narrow_range) and Int32GemmOutput
// into (acc, scale_a, scale_w); mode is "static" or "per_token"; the GELU
// approximation is "erf" (torch's "none") or "tanh".
#include <nanobind/stl/string.h>

#include <string>

#include "qgemm/error.h"
#include "qgemm/fused.h"
#include "tensor_arg.h"

namespace qgemm::python {
namespace {

FusedScale fused_scale(const std::string& mode) {
  if (mode == "static") return FusedScale::kStatic;
  if (mode == "per_token") return FusedScale::kDynamicPerToken;
  throw Error(ErrorKind::kValue, "mode: expected 'static' or 'per_token', got '" + mode + "'");
}

GeluApproximation gelu_approximation(const std::string& approximation) {
  if (approximation == "erf" || approximation == "none") return GeluApproximation::kErf;
  if (approximation == "tanh") return GeluApproximation::kTanh;
  throw Error(ErrorKind::kValue, "approximation: expected 'erf' (or 'none') or 'tanh', got '" + approximation + "'");
}

QuantOutput quant_output(CallArrays& arrays, nb::handle out, nb::handle scale, nb::handle azp,
                         const std::string& mode, bool narrow_range) {
  QuantOutput o;
  o.mode = fused_scale(mode);
  o.q = arrays.view(out, "out.q");
  o.scale = arrays.view(scale, "out.scale");
  o.azp = arrays.optional_view(azp, "out.azp");
  o.narrow_range = narrow_range;
  return o;
}

Int32GemmOutput int32_input(CallArrays& arrays, nb::handle acc, nb::handle scale_a, nb::handle scale_w) {
  return Int32GemmOutput{arrays.view(acc, "x.acc"), arrays.view(scale_a, "x.scale_a"),
                         arrays.view(scale_w, "x.scale_w")};
}

// The arguments every fused op starts with (its quantized output) and ends with.
#define QGEMM_QUANT_OUTPUT_ARGS nb::arg("out").none(), nb::arg("scale").none(), nb::arg("azp").none()
#define QGEMM_TAIL_ARGS \
  nb::arg("mode") = "per_token", nb::arg("narrow_range") = false, nb::arg("stream").none() = nb::none()

}  // namespace

void bind_fused(nb::module_& m) {
  m.def(
      "rms_norm_quant",
      [](nb::handle out, nb::handle scale, nb::handle azp, nb::handle x, nb::handle weight, float eps,
         const std::string& mode, bool narrow_range, nb::handle stream) {
        CallArrays arrays;
        const QuantOutput o = quant_output(arrays, out, scale, azp, mode, narrow_range);
        const TensorView x_v = arrays.view(x, "x"), weight_v = arrays.view(weight, "weight");
        const Stream s = to_stream(stream);
        nb::gil_scoped_release unlocked;
        rms_norm_quant(o, x_v, weight_v, eps, s);
      },
      QGEMM_QUANT_OUTPUT_ARGS, nb::arg("x").none(), nb::arg("weight").none(), nb::arg("eps"), QGEMM_TAIL_ARGS);
  m.def(
      "add_rms_norm_quant",
      [](nb::handle out, nb::handle scale, nb::handle azp, nb::handle x, nb::handle residual, nb::handle weight,
         float eps, const std::string& mode, bool narrow_range, nb::handle stream) {
        CallArrays arrays;
        const QuantOutput o = quant_output(arrays, out, scale, azp, mode, narrow_range);
        const TensorView x_v = arrays.view(x, "x"), residual_v = arrays.view(residual, "residual");
        const TensorView weight_v = arrays.view(weight, "weight");
        const Stream s = to_stream(stream);
        nb::gil_scoped_release unlocked;
        add_rms_norm_quant(o, x_v, residual_v, weight_v, eps, s);
      },
      QGEMM_QUANT_OUTPUT_ARGS, nb::arg("x").none(), nb::arg("residual").none(), nb::arg("weight").none(),
      nb::arg("eps"), QGEMM_TAIL_ARGS);
  m.def(
      "layer_norm_quant",
      [](nb::handle out, nb::handle scale, nb::handle azp, nb::handle x, nb::handle gamma, nb::handle beta,
         float eps, nb::handle residual, nb::handle bias, const std::string& mode, bool narrow_range,
         nb::handle stream) {
        CallArrays arrays;
        const QuantOutput o = quant_output(arrays, out, scale, azp, mode, narrow_range);
        const TensorView x_v = arrays.view(x, "x"), gamma_v = arrays.view(gamma, "gamma");
        const TensorView beta_v = arrays.view(beta, "beta");
        const auto residual_v = arrays.optional_view(residual, "residual");
        const auto bias_v = arrays.optional_view(bias, "bias");
        const Stream s = to_stream(stream);
        nb::gil_scoped_release unlocked;
        layer_norm_quant(o, x_v, gamma_v, beta_v, eps, residual_v, bias_v, s);
      },
      QGEMM_QUANT_OUTPUT_ARGS, nb::arg("x").none(), nb::arg("gamma").none(), nb::arg("beta").none(),
      nb::arg("eps"), nb::arg("residual").none() = nb::none(), nb::arg("bias").none() = nb::none(),
      QGEMM_TAIL_ARGS);
  m.def(
      "layer_norm_quant_int32",
      [](nb::handle out, nb::handle scale, nb::handle azp, nb::handle acc, nb::handle scale_a,
         nb::handle scale_w, nb::handle residual, nb::handle residual_scale, nb::handle gamma, nb::handle beta,
         float eps, nb::handle bias, const std::string& mode, bool narrow_range, nb::handle stream) {
        CallArrays arrays;
        const QuantOutput o = quant_output(arrays, out, scale, azp, mode, narrow_range);
        const Int32GemmOutput x = int32_input(arrays, acc, scale_a, scale_w);
        const TensorView residual_v = arrays.view(residual, "residual");
        const TensorView residual_scale_v = arrays.view(residual_scale, "residual_scale");
        const TensorView gamma_v = arrays.view(gamma, "gamma"), beta_v = arrays.view(beta, "beta");
        const auto bias_v = arrays.optional_view(bias, "bias");
        const Stream s = to_stream(stream);
        nb::gil_scoped_release unlocked;
        layer_norm_quant_int32(o, x, residual_v, residual_scale_v, gamma_v, beta_v, eps, bias_v, s);
      },
      QGEMM_QUANT_OUTPUT_ARGS, nb::arg("acc").none(), nb::arg("scale_a").none(), nb::arg("scale_w").none(),
      nb::arg("residual").none(), nb::arg("residual_scale").none(), nb::arg("gamma").none(),
      nb::arg("beta").none(), nb::arg("eps"), nb::arg("bias").none() = nb::none(), QGEMM_TAIL_ARGS);
  m.def(
      "silu_and_mul_quant",
      [](nb::handle out, nb::handle scale, nb::handle azp, nb::handle x, const std::string& mode,
         bool narrow_range, nb::handle stream) {
        CallArrays arrays;
        const QuantOutput o = quant_output(arrays, out, scale, azp, mode, narrow_range);
        const TensorView x_v = arrays.view(x, "x");
        const Stream s = to_stream(stream);
        nb::gil_scoped_release unlocked;
        silu_and_mul_quant(o, x_v, s);
      },
      QGEMM_QUANT_OUTPUT_ARGS, nb::arg("x").none(), QGEMM_TAIL_ARGS);
  m.def(
      "bias_gelu_quant",
      [](nb::handle out, nb::handle scale, nb::handle azp, nb::handle x, nb::handle bias,
         const std::string& approximation, const std::string& mode, bool narrow_range, nb::handle stream) {
        const GeluApproximation a = gelu_approximation(approximation);
        CallArrays arrays;
        const QuantOutput o = quant_output(arrays, out, scale, azp, mode, narrow_range);
        const TensorView x_v = arrays.view(x, "x");
        const auto bias_v = arrays.optional_view(bias, "bias");
        const Stream s = to_stream(stream);
        nb::gil_scoped_release unlocked;
        bias_gelu_quant(o, x_v, bias_v, a, s);
      },
      QGEMM_QUANT_OUTPUT_ARGS, nb::arg("x").none(), nb::arg("bias").none() = nb::none(),
      nb::arg("approximation") = "erf", QGEMM_TAIL_ARGS);
  m.def(
      "bias_gelu_quant_int32",
      [](nb::handle out, nb::handle scale, nb::handle azp, nb::handle acc, nb::handle scale_a,
         nb::handle scale_w, nb::handle bias, const std::string& approximation, const std::string& mode,
         bool narrow_range, nb::handle stream) {
        const GeluApproximation a = gelu_approximation(approximation);
        CallArrays arrays;
        const QuantOutput o = quant_output(arrays, out, scale, azp, mode, narrow_range);
        const Int32GemmOutput x = int32_input(arrays, acc, scale_a, scale_w);
        const auto bias_v = arrays.optional_view(bias, "bias");
        const Stream s = to_stream(stream);
        nb::gil_scoped_release unlocked;
        bias_gelu_quant_int32(o, x, bias_v, a, s);
      },
      QGEMM_QUANT_OUTPUT_ARGS, nb::arg("acc").none(), nb::arg("scale_a").none(), nb::arg("scale_w").none(),
      nb::arg("bias").none() = nb::none(), nb::arg("approximation") = "erf", QGEMM_TAIL_ARGS);
}

}  // namespace qgemm::python
