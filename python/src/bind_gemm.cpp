// Python bindings of qgemm/gemm.h: the out-parameter forms, argument names as
// in the C++ API. The qgemm package (qgemm/gemm.py) allocates outputs and
// picks the stream; this layer only converts arguments and calls the op with
// the GIL released.
#include <nanobind/stl/optional.h>

#include "qgemm/gemm.h"
#include "tensor_arg.h"

namespace qgemm::python {

void bind_gemm(nb::module_& m) {
  m.def(
      "scaled_mm",
      [](nb::handle out, nb::handle a, nb::handle b, nb::handle scale_a, nb::handle scale_b, nb::handle bias,
         nb::handle workspace, nb::handle stream, bool fast_accum) {
        CallArrays arrays;
        const TensorView out_v = arrays.view(out, "out"), a_v = arrays.view(a, "a"), b_v = arrays.view(b, "b");
        const TensorView scale_a_v = arrays.view(scale_a, "scale_a"), scale_b_v = arrays.view(scale_b, "scale_b");
        const auto bias_v = arrays.optional_view(bias, "bias");
        const auto workspace_v = arrays.optional_view(workspace, "workspace");
        const Stream s = to_stream(stream);
        const Fp8Accumulation accumulation = fast_accum ? Fp8Accumulation::kFast : Fp8Accumulation::kPrecise;
        nb::gil_scoped_release unlocked;
        if (workspace_v) {
          scaled_mm(out_v, a_v, b_v, scale_a_v, scale_b_v, bias_v, *workspace_v, s, accumulation);
        } else {
          scaled_mm(out_v, a_v, b_v, scale_a_v, scale_b_v, bias_v, s, accumulation);
        }
      },
      nb::arg("out").none(), nb::arg("a").none(), nb::arg("b").none(), nb::arg("scale_a").none(), nb::arg("scale_b").none(),
      nb::arg("bias").none() = nb::none(), nb::arg("workspace").none() = nb::none(),
      nb::arg("stream").none() = nb::none(), nb::arg("fast_accum") = false,
      "out = scale_a · scale_b · (a·b) + bias; an optional uint8 workspace (scaled_mm_workspace_bytes) "
      "lets the Hopper kernels run stream-K; fast_accum: Fp8Accumulation::kFast (fp8 on sm_90a; "
      "ignored for int8 and on the CPU)");
  m.def(
      "scaled_mm_workspace_bytes",
      [](int device) { return scaled_mm_workspace_bytes(device < 0 ? Device::cpu() : Device::cuda(device)); },
      nb::arg("device"), "bytes of scaled_mm's workspace on CUDA device `device` (-1: the CPU, 0)");
  m.def(
      "scaled_mm_azp",
      [](nb::handle out, nb::handle a, nb::handle b, nb::handle scale_a, nb::handle scale_b, nb::handle azp_adj,
         nb::handle azp, nb::handle bias, nb::handle workspace, nb::handle stream) {
        CallArrays arrays;
        const TensorView out_v = arrays.view(out, "out"), a_v = arrays.view(a, "a"), b_v = arrays.view(b, "b");
        const TensorView scale_a_v = arrays.view(scale_a, "scale_a"), scale_b_v = arrays.view(scale_b, "scale_b");
        const TensorView azp_adj_v = arrays.view(azp_adj, "azp_adj");
        const auto azp_v = arrays.optional_view(azp, "azp");
        const auto bias_v = arrays.optional_view(bias, "bias");
        const auto workspace_v = arrays.optional_view(workspace, "workspace");
        const Stream s = to_stream(stream);
        nb::gil_scoped_release unlocked;
        if (workspace_v) {
          scaled_mm_azp(out_v, a_v, b_v, scale_a_v, scale_b_v, azp_adj_v, azp_v, bias_v, *workspace_v, s);
        } else {
          scaled_mm_azp(out_v, a_v, b_v, scale_a_v, scale_b_v, azp_adj_v, azp_v, bias_v, s);
        }
      },
      nb::arg("out").none(), nb::arg("a").none(), nb::arg("b").none(), nb::arg("scale_a").none(), nb::arg("scale_b").none(), nb::arg("azp_adj").none(),
      nb::arg("azp").none() = nb::none(), nb::arg("bias").none() = nb::none(),
      nb::arg("workspace").none() = nb::none(), nb::arg("stream").none() = nb::none(),
      "out = scale_a · scale_b · (a·b − azp·azp_adj) + bias");
  m.def(
      "azp_adj",
      [](nb::handle out, nb::handle b, std::optional<int32_t> azp, nb::handle stream) {
        CallArrays arrays;
        const TensorView out_v = arrays.view(out, "out"), b_v = arrays.view(b, "b");
        const Stream s = to_stream(stream);
        nb::gil_scoped_release unlocked;
        azp_adj(out_v, b_v, azp, s);
      },
      nb::arg("out").none(), nb::arg("b").none(), nb::arg("azp").none() = nb::none(), nb::arg("stream").none() = nb::none(),
      "out[n] = azp · Σ_k b[k, n]");
}

}  // namespace qgemm::python
