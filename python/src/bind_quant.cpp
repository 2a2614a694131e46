// Python bindings of qgemm/quant.h (out-parameter forms).
#include <nanobind/stl/string.h>

#include <string>

#include "qgemm/error.h"
#include "qgemm/quant.h"
#include "tensor_arg.h"

namespace qgemm::python {
namespace {

QuantOptions make_options(const std::string& mode, bool symmetric, bool narrow_range, int group_size) {
  QuantOptions o;
  if (mode == "static") o.mode = QuantMode::kStaticPerTensor;
  else if (mode == "per_token") o.mode = QuantMode::kDynamicPerToken;
  else if (mode == "per_group") o.mode = QuantMode::kDynamicPerGroup;
  else throw Error(ErrorKind::kValue, "mode: expected 'static', 'per_token' or 'per_group', got '" + mode + "'");
  o.symmetric = symmetric;
  o.narrow_range = narrow_range;
  o.group_size = group_size;
  return o;
}

}  // namespace

void bind_quant(nb::module_& m) {
  m.def(
      "quantize",
      [](nb::handle out, nb::handle scale, nb::handle azp, nb::handle in, const std::string& mode, bool symmetric,
         bool narrow_range, int group_size, nb::handle stream) {
        quantize(to_view(out, "out"), to_view(scale, "scale"), to_optional_view(azp, "azp"), to_view(in, "in"),
                 make_options(mode, symmetric, narrow_range, group_size), to_stream(stream));
      },
      nb::arg("out"), nb::arg("scale"), nb::arg("azp").none(), nb::arg("in"), nb::arg("mode"),
      nb::arg("symmetric"), nb::arg("narrow_range"), nb::arg("group_size"), nb::arg("stream").none() = nb::none());
  m.def(
      "dequantize",
      [](nb::handle out, nb::handle in, nb::handle scale, nb::handle azp, const std::string& mode, int group_size,
         nb::handle stream) {
        dequantize(to_view(out, "out"), to_view(in, "in"), to_view(scale, "scale"), to_optional_view(azp, "azp"),
                   make_options(mode, true, false, group_size), to_stream(stream));
      },
      nb::arg("out"), nb::arg("in"), nb::arg("scale"), nb::arg("azp").none(), nb::arg("mode"),
      nb::arg("group_size"), nb::arg("stream").none() = nb::none());
  m.def(
      "quantize_weight_int4",
      [](nb::handle out_packed, nb::handle scale, nb::handle offset, nb::handle w, int group_size) {
        quantize_weight_int4(to_view(out_packed, "out_packed"), to_view(scale, "scale"), to_view(offset, "offset"),
                             to_view(w, "w"), group_size);
      },
      nb::arg("out_packed"), nb::arg("scale"), nb::arg("offset"), nb::arg("w"), nb::arg("group_size"));
  m.def("pack_int4", [](nb::handle out, nb::handle values) { pack_int4(to_view(out, "out_packed"), to_view(values, "values")); },
        nb::arg("out_packed"), nb::arg("values"));
  m.def("unpack_int4", [](nb::handle out, nb::handle packed) { unpack_int4(to_view(out, "out_values"), to_view(packed, "packed")); },
        nb::arg("out_values"), nb::arg("packed"));
}

}  // namespace qgemm::python
