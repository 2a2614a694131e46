// Python bindings of qgemm/quant.h: the out-parameter forms. QuantOptions is
// flattened into keyword arguments (mode, symmetric, narrow_range,
// group_size); the C++ argument `in` is `input` (a Python keyword).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <string>

#include "qgemm/error.h"
#include "qgemm/quant.h"
#include "tensor_arg.h"

namespace qgemm::python {
namespace {

QuantOptions make_options(const std::string& mode, bool symmetric, bool narrow_range, int group_size) {
  QuantOptions options;
  if (mode == "static") {
    options.mode = QuantMode::kStaticPerTensor;
  } else if (mode == "per_token") {
    options.mode = QuantMode::kDynamicPerToken;
  } else if (mode == "per_group") {
    options.mode = QuantMode::kDynamicPerGroup;
  } else {
    throw Error(ErrorKind::kValue, "mode: expected 'static', 'per_token' or 'per_group', got '" + mode + "'");
  }
  options.symmetric = symmetric;
  options.narrow_range = narrow_range;
  options.group_size = group_size;
  return options;
}

}  // namespace

void bind_quant(nb::module_& m) {
  m.def(
      "quantize",
      [](nb::handle out, nb::handle scale, nb::handle azp, nb::handle input, const std::string& mode,
         bool symmetric, bool narrow_range, int group_size, nb::handle stream) {
        const QuantOptions options = make_options(mode, symmetric, narrow_range, group_size);
        CallArrays arrays;
        const TensorView out_v = arrays.view(out, "out"), scale_v = arrays.view(scale, "scale");
        const auto azp_v = arrays.optional_view(azp, "azp");
        const TensorView in_v = arrays.view(input, "in");
        const Stream s = to_stream(stream);
        nb::gil_scoped_release unlocked;
        quantize(out_v, scale_v, azp_v, in_v, options, s);
      },
      nb::arg("out").none(), nb::arg("scale").none(), nb::arg("azp").none(), nb::arg("input").none(), nb::arg("mode"),
      nb::arg("symmetric") = true, nb::arg("narrow_range") = false, nb::arg("group_size") = 128,
      nb::arg("stream").none() = nb::none(), "out = quantize(input); scale/azp are outputs in dynamic modes");
  m.def(
      "dequantize",
      [](nb::handle out, nb::handle input, nb::handle scale, nb::handle azp, const std::string& mode,
         int group_size, nb::handle stream) {
        const QuantOptions options = make_options(mode, true, false, group_size);
        CallArrays arrays;
        const TensorView out_v = arrays.view(out, "out"), in_v = arrays.view(input, "in");
        const TensorView scale_v = arrays.view(scale, "scale");
        const auto azp_v = arrays.optional_view(azp, "azp");
        const Stream s = to_stream(stream);
        nb::gil_scoped_release unlocked;
        dequantize(out_v, in_v, scale_v, azp_v, options, s);
      },
      nb::arg("out").none(), nb::arg("input").none(), nb::arg("scale").none(), nb::arg("azp").none() = nb::none(),
      nb::arg("mode") = "per_token", nb::arg("group_size") = 128, nb::arg("stream").none() = nb::none(),
      "out = scale · (input − azp)");
  m.def(
      "quantize_weight_int4",
      [](nb::handle out_packed, nb::handle scale, nb::handle offset, nb::handle w, int group_size) {
        CallArrays arrays;
        const TensorView out_v = arrays.view(out_packed, "out_packed"), scale_v = arrays.view(scale, "scale");
        const TensorView offset_v = arrays.view(offset, "offset"), w_v = arrays.view(w, "w");
        nb::gil_scoped_release unlocked;
        quantize_weight_int4(out_v, scale_v, offset_v, w_v, group_size);
      },
      nb::arg("out_packed").none(), nb::arg("scale").none(), nb::arg("offset").none(), nb::arg("w").none(), nb::arg("group_size"),
      "4-bit asymmetric weight quantization, packed two per byte (CPU)");
  m.def(
      "pack_int4",
      [](nb::handle out_packed, nb::handle values) {
        CallArrays arrays;
        const TensorView out_v = arrays.view(out_packed, "out_packed"), values_v = arrays.view(values, "values");
        pack_int4(out_v, values_v);
      },
      nb::arg("out_packed").none(), nb::arg("values").none(), "packs 4-bit values two per byte, low nibble first (CPU)");
  m.def(
      "unpack_int4",
      [](nb::handle out_values, nb::handle packed) {
        CallArrays arrays;
        const TensorView out_v = arrays.view(out_values, "out_values"), packed_v = arrays.view(packed, "packed");
        unpack_int4(out_v, packed_v);
      },
      nb::arg("out_values").none(), nb::arg("packed").none(), "unpacks two 4-bit values per byte (CPU)");
  m.def(
      "int4_from_gptq",
      [](nb::handle out_w, nb::handle out_offsets, nb::handle qweight, nb::handle qzeros, nb::handle scales,
         nb::handle g_idx, int zero_offset) {
        CallArrays arrays;
        const TensorView out_w_v = arrays.view(out_w, "out_w"), out_offsets_v = arrays.view(out_offsets, "out_offsets");
        const TensorView qweight_v = arrays.view(qweight, "qweight"), qzeros_v = arrays.view(qzeros, "qzeros");
        const TensorView scales_v = arrays.view(scales, "scales");
        const auto g_idx_v = arrays.optional_view(g_idx, "g_idx");
        nb::gil_scoped_release unlocked;
        int4_from_gptq(out_w_v, out_offsets_v, qweight_v, qzeros_v, scales_v, g_idx_v, zero_offset);
      },
      nb::arg("out_w").none(), nb::arg("out_offsets").none(), nb::arg("qweight").none(), nb::arg("qzeros").none(),
      nb::arg("scales").none(), nb::arg("g_idx").none() = nb::none(), nb::arg("zero_offset") = 1,
      "a GPTQ int4 layer → the plain int4 weight and the offsets −z·s (CPU)");
  m.def(
      "int4_from_awq",
      [](nb::handle out_w, nb::handle out_offsets, nb::handle qweight, nb::handle qzeros, nb::handle scales) {
        CallArrays arrays;
        const TensorView out_w_v = arrays.view(out_w, "out_w"), out_offsets_v = arrays.view(out_offsets, "out_offsets");
        const TensorView qweight_v = arrays.view(qweight, "qweight"), qzeros_v = arrays.view(qzeros, "qzeros");
        const TensorView scales_v = arrays.view(scales, "scales");
        nb::gil_scoped_release unlocked;
        int4_from_awq(out_w_v, out_offsets_v, qweight_v, qzeros_v, scales_v);
      },
      nb::arg("out_w").none(), nb::arg("out_offsets").none(), nb::arg("qweight").none(), nb::arg("qzeros").none(),
      nb::arg("scales").none(), "an AWQ int4 layer → the plain int4 weight and the offsets −z·s (CPU)");
}

}  // namespace qgemm::python
