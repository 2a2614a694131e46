// Python bindings of qgemm/gemm.h: out-parameter forms over DLPack; the
// Python layer (qgemm/ops.py) allocates outputs and picks the stream.
#include <nanobind/stl/optional.h>

#include "qgemm/gemm.h"
#include "tensor_arg.h"

namespace qgemm::python {

void bind_gemm(nb::module_& m) {
  m.def(
      "scaled_mm",
      [](nb::handle out, nb::handle a, nb::handle b, nb::handle scale_a, nb::handle scale_b, nb::handle bias,
         nb::handle stream) {
        scaled_mm(to_view(out, "out"), to_view(a, "a"), to_view(b, "b"), to_view(scale_a, "scale_a"),
                  to_view(scale_b, "scale_b"), to_optional_view(bias, "bias"), to_stream(stream));
      },
      nb::arg("out"), nb::arg("a"), nb::arg("b"), nb::arg("scale_a"), nb::arg("scale_b"),
      nb::arg("bias").none() = nb::none(), nb::arg("stream").none() = nb::none(),
      "out = scale_a · scale_b · (a·b) + bias (see docs/gemm.md)");
  m.def(
      "scaled_mm_azp",
      [](nb::handle out, nb::handle a, nb::handle b, nb::handle scale_a, nb::handle scale_b, nb::handle azp_adj,
         nb::handle azp, nb::handle bias, nb::handle stream) {
        scaled_mm_azp(to_view(out, "out"), to_view(a, "a"), to_view(b, "b"), to_view(scale_a, "scale_a"),
                      to_view(scale_b, "scale_b"), to_view(azp_adj, "azp_adj"), to_optional_view(azp, "azp"),
                      to_optional_view(bias, "bias"), to_stream(stream));
      },
      nb::arg("out"), nb::arg("a"), nb::arg("b"), nb::arg("scale_a"), nb::arg("scale_b"), nb::arg("azp_adj"),
      nb::arg("azp").none() = nb::none(), nb::arg("bias").none() = nb::none(),
      nb::arg("stream").none() = nb::none(),
      "out = scale_a · scale_b · (a·b − azp·azp_adj) + bias (see docs/gemm.md)");
  m.def(
      "azp_adj",
      [](nb::handle out, nb::handle b, std::optional<int32_t> azp, nb::handle stream) {
        azp_adj(to_view(out, "out"), to_view(b, "b"), azp, to_stream(stream));
      },
      nb::arg("out"), nb::arg("b"), nb::arg("azp").none() = nb::none(), nb::arg("stream").none() = nb::none(),
      "out[n] = azp · Σ_k b[k, n]");
}

}  // namespace qgemm::python
