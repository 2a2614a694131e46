// Host entry of quantize / dequantize: validates every argument, builds a
// QuantArgs and dispatches to the CPU or CUDA backend.
#include <string>

#include "core/check.h"
#include "qgemm/quant.h"
#include "quant/cpu/quant_cpu.h"
#include "quant/quant_args.h"
#if QGEMM_WITH_CUDA
#include "quant/cuda/quant_cuda.h"
#endif

namespace qgemm {
namespace {

using detail::fail;

void check_common(const TensorView& t, const char* name, Device device, const char* owner) {
  detail::check_device(t, name, device, owner);
  detail::check_not_null(t, name);
  detail::check_element_aligned(t, name);
}

// Validates scale (and azp) for the mode and fills the scale fields of args.
void validate_scales(detail::QuantArgs& args, const TensorView& scale,
                     const std::optional<TensorView>& azp, const QuantOptions& options,
                     Device device, const char* owner) {
  detail::check_dtype(scale, "scale", {DType::kFloat32});
  if (azp) detail::check_dtype(*azp, "azp", {DType::kInt32});
  const int64_t t = args.tokens, h = args.hidden;
  switch (options.mode) {
    case QuantMode::kStaticPerTensor:
      if (scale.numel() != 1 || scale.rank() > 2) {
        fail(ErrorKind::kValue, "scale: expected 1 element for a static per-tensor scale, got shape " +
                                    detail::shape_string(scale));
      }
      if (azp && (azp->numel() != 1 || azp->rank() > 2)) {
        fail(ErrorKind::kValue, "azp: expected 1 element for a static per-tensor zero point, got shape " +
                                    detail::shape_string(*azp));
      }
      args.group_size = h;
      break;
    case QuantMode::kDynamicPerToken:
      detail::check_vector(scale, "scale", "T", t, detail::VectorOrientation::kColumn);
      if (azp) detail::check_vector(*azp, "azp", "T", t, detail::VectorOrientation::kColumn);
      args.group_size = h;
      args.scale_row_stride = 1;
      break;
    case QuantMode::kDynamicPerGroup: {
      const int64_t groups = h / options.group_size;
      detail::check_rank(scale, "scale", 2);
      if (scale.size(0) != t || scale.size(1) != groups) {
        fail(ErrorKind::kValue, "scale: expected shape [T=" + std::to_string(t) + ", H/group_size=" +
                                    std::to_string(groups) + "], got " + detail::shape_string(scale));
      }
      const bool row_major = groups == 1 || (scale.stride(1) == 1 && (t == 1 || scale.stride(0) >= groups));
      const bool col_major = t == 1 || (scale.stride(0) == 1 && (groups == 1 || scale.stride(1) >= t));
      if (!row_major && !col_major) {
        fail(ErrorKind::kValue, "scale: expected a row-major (strides (>=G, 1)) or column-major "
                                "(strides (1, >=T)) [T, G] matrix, got strides (" +
                                    std::to_string(scale.stride(0)) + ", " + std::to_string(scale.stride(1)) + ")");
      }
      if (azp) {
        detail::check_rank(*azp, "azp", 2);
        if (azp->size(0) != t || azp->size(1) != groups || azp->stride(0) != scale.stride(0) ||
            azp->stride(1) != scale.stride(1)) {
          fail(ErrorKind::kValue, "azp: expected the shape and strides of scale [T=" + std::to_string(t) +
                                      ", G=" + std::to_string(groups) + "], got shape " +
                                      detail::shape_string(*azp));
        }
      }
      args.group_size = options.group_size;
      args.groups = groups;
      args.scale_row_stride = t > 1 ? scale.stride(0) : 0;
      args.scale_group_stride = groups > 1 ? scale.stride(1) : 0;
      break;
    }
  }
  check_common(scale, "scale", device, owner);
  if (azp) check_common(*azp, "azp", device, owner);
  args.scale = scale.data_as<float>();
  args.azp = azp ? azp->data_as<int32_t>() : nullptr;
}

// in_name: what the caller calls `in` ("in", or "w" for quantize_weight).
detail::QuantArgs validate(const char* op, const TensorView& out, const TensorView& in,
                           const TensorView& scale, const std::optional<TensorView>& azp,
                           const QuantOptions& options, bool quantizing, Stream stream,
                           const char* in_name = "in") {
  const Device device = out.device();
  detail::check_backend_available(device, op);
  const TensorView& quantized = quantizing ? out : in;
  const TensorView& real = quantizing ? in : out;
  const char* quantized_name = quantizing ? "out" : in_name;
  const char* real_name = quantizing ? in_name : "out";
  detail::check_dtype(quantized, quantized_name, {DType::kInt8, DType::kFloat8E4M3});
  detail::check_dtype(real, real_name, {DType::kFloat32, DType::kFloat16, DType::kBFloat16});
  detail::check_rank(in, in_name, 2);
  const int64_t t = in.size(0), h = in.size(1);
  detail::check_row_major(in, in_name, "T", t, "H", h);
  detail::check_row_major(out, "out", "T", t, "H", h);
  check_common(out, "out", device, "out");
  check_common(in, in_name, device, "out");

  const bool fp8 = quantized.dtype() == DType::kFloat8E4M3;
  const bool dynamic = options.mode != QuantMode::kStaticPerTensor;
  const bool asymmetric = quantizing && dynamic ? !options.symmetric : azp.has_value();
  if (fp8 && asymmetric) {
    fail(ErrorKind::kValue, std::string(quantized_name) +
                                ": fp8e4m3 quantization is symmetric only; drop azp / set symmetric");
  }
  if (quantizing && dynamic && asymmetric != azp.has_value()) {
    fail(ErrorKind::kValue, options.symmetric
                                ? "azp: given, but options.symmetric is true (no zero point is written)"
                                : "azp: required when options.symmetric is false (the zero points are written there)");
  }
  if (options.mode == QuantMode::kDynamicPerGroup) {
    if (options.group_size < 1 || h % options.group_size != 0) {
      fail(ErrorKind::kValue, "options.group_size: expected a positive divisor of H=" + std::to_string(h) +
                                  " (32, 64 or 128 usually), got " + std::to_string(options.group_size));
    }
  }

  detail::QuantArgs args;
  args.tokens = t;
  args.hidden = h;
  args.mode = options.mode;
  args.asymmetric = asymmetric;
  args.narrow_range = options.narrow_range;
  args.float_dtype = real.dtype();
  args.quant_dtype = quantized.dtype();
  args.in = in.data();
  args.in_stride = t > 1 ? in.stride(0) : h;
  args.out = out.data();
  args.out_stride = t > 1 ? out.stride(0) : h;
  args.device = device;
  args.stream = stream;
  validate_scales(args, scale, azp, options, device, "out");
  return args;
}

void run_quantize(const detail::QuantArgs& args) {
  if (args.tokens == 0 || args.hidden == 0) return;
  if (args.device.is_cpu()) return detail::quantize_cpu(args);
#if QGEMM_WITH_CUDA
  detail::quantize_cuda(args);
#endif
}

}  // namespace

void quantize(const TensorView& out, const TensorView& scale, const std::optional<TensorView>& azp,
              const TensorView& in, const QuantOptions& options, Stream stream) {
  run_quantize(validate("quantize", out, in, scale, azp, options, true, stream));
}

void quantize_weight(const TensorView& out, const TensorView& scale, const TensorView& w, int group_size,
                     bool narrow_range, Stream stream) {
  QuantOptions options;
  options.mode = group_size == 0 ? QuantMode::kDynamicPerToken : QuantMode::kDynamicPerGroup;
  options.symmetric = true;
  options.narrow_range = narrow_range;
  options.group_size = group_size;
  run_quantize(validate("quantize_weight", out, w, scale, std::nullopt, options, true, stream, "w"));
}

void dequantize(const TensorView& out, const TensorView& in, const TensorView& scale,
                const std::optional<TensorView>& azp, const QuantOptions& options, Stream stream) {
  const detail::QuantArgs args = validate("dequantize", out, in, scale, azp, options, false, stream);
  if (args.tokens == 0 || args.hidden == 0) return;
  if (args.device.is_cpu()) return detail::dequantize_cpu(args);
#if QGEMM_WITH_CUDA
  detail::dequantize_cuda(args);
#endif
}

}  // namespace qgemm
