// Python bindings of qgemm/weight_only.h: weight_only_mm and the prepacked
// layout (out-parameter forms; the qgemm package allocates outputs).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/tuple.h>

#include <tuple>

#include "qgemm/weight_only.h"
#include "tensor_arg.h"

namespace qgemm::python {

void bind_weight_only(nb::module_& m) {
  m.def(
      "weight_only_mm",
      [](nb::handle out, nb::handle a, nb::handle w, nb::handle scales, nb::handle offsets, int group_size,
         nb::handle bias, nb::handle workspace, nb::handle stream) {
        CallArrays arrays;
        const TensorView out_v = arrays.view(out, "out"), a_v = arrays.view(a, "a"), w_v = arrays.view(w, "w");
        const TensorView scales_v = arrays.view(scales, "scales");
        const auto offsets_v = arrays.optional_view(offsets, "offsets");
        const auto bias_v = arrays.optional_view(bias, "bias");
        const auto workspace_v = arrays.optional_view(workspace, "workspace");
        const Stream s = to_stream(stream);
        nb::gil_scoped_release unlocked;
        if (workspace_v) {
          weight_only_mm(out_v, a_v, w_v, scales_v, offsets_v, group_size, bias_v, *workspace_v, s);
        } else {
          weight_only_mm(out_v, a_v, w_v, scales_v, offsets_v, group_size, bias_v, s);
        }
      },
      nb::arg("out").none(), nb::arg("a").none(), nb::arg("w").none(), nb::arg("scales").none(),
      nb::arg("offsets").none(), nb::arg("group_size"), nb::arg("bias").none() = nb::none(),
      nb::arg("workspace").none() = nb::none(), nb::arg("stream").none() = nb::none(),
      "out = a · ŵᵀ + bias, ŵ = round(q·scales + offsets); an optional uint8 workspace lets the CUDA "
      "tensor-core kernel balance its tiles (stream-K)");
  m.def(
      "weight_only_workspace_bytes",
      [](int device) { return weight_only_workspace_bytes(device < 0 ? Device::cpu() : Device::cuda(device)); },
      nb::arg("device"), "bytes of weight_only_mm's workspace on CUDA device `device` (-1: the CPU, 0)");
  m.def(
      "weight_only_dense_workspace_bytes",
      [](int device, int64_t n, int64_t k) {
        return weight_only_dense_workspace_bytes(device < 0 ? Device::cpu() : Device::cuda(device), n, k);
      },
      nb::arg("device"), nb::arg("n"), nb::arg("k"),
      "bytes of a workspace that also opens weight_only_mm's dense prefill path for an [N,K] weight");
  m.def(
      "weight_only_prepack",
      [](nb::handle out, nb::handle w, nb::handle stream) {
        CallArrays arrays;
        const TensorView out_v = arrays.view(out, "out"), w_v = arrays.view(w, "w");
        const Stream s = to_stream(stream);
        nb::gil_scoped_release unlocked;
        weight_only_prepack(out_v, w_v, s);
      },
      nb::arg("out").none(), nb::arg("w").none(), nb::arg("stream").none() = nb::none(),
      "reorders a plain int8 / packed int4 weight into the prepacked layout");
  m.def(
      "weight_only_prepacked_shape",
      [](int64_t n, int64_t k, bool int4) {
        const PrepackedShape shape = weight_only_prepacked_shape(n, k, int4);
        return std::make_tuple(shape.row_blocks, shape.k_tiles, shape.tile_bytes);
      },
      nb::arg("n"), nb::arg("k"), nb::arg("int4"), "shape of weight_only_prepack's output for an [N,K] weight");
}

}  // namespace qgemm::python
