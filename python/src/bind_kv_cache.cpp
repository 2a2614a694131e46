// Python bindings of qgemm/kv_cache.h: the out-parameter forms. PagedKvCache
// is flattened into (key_cache, value_cache, key_scale, value_scale), the
// scales None for a 16-bit cache; the arrays are named as in the C++
// messages (cache.key, cache.value, cache.key_scale, cache.value_scale).
#include "qgemm/kv_cache.h"
#include "tensor_arg.h"

namespace qgemm::python {
namespace {

PagedKvCache paged_kv_cache(CallArrays& arrays, nb::handle key_cache, nb::handle value_cache,
                            nb::handle key_scale, nb::handle value_scale) {
  PagedKvCache cache;
  cache.key = arrays.view(key_cache, "cache.key");
  cache.value = arrays.view(value_cache, "cache.value");
  cache.key_scale = arrays.optional_view(key_scale, "cache.key_scale");
  cache.value_scale = arrays.optional_view(value_scale, "cache.value_scale");
  return cache;
}

// The cache arguments every op of the family takes, in this order.
#define QGEMM_CACHE_ARGS                                                                  \
  nb::arg("key_cache").none(), nb::arg("value_cache").none(), nb::arg("key_scale").none(), \
      nb::arg("value_scale").none()

}  // namespace

void bind_kv_cache(nb::module_& m) {
  m.def(
      "kv_cache_write",
      [](nb::handle key_cache, nb::handle value_cache, nb::handle key_scale, nb::handle value_scale, nb::handle key,
         nb::handle value, nb::handle slot_mapping, nb::handle stream) {
        CallArrays arrays;
        const PagedKvCache cache = paged_kv_cache(arrays, key_cache, value_cache, key_scale, value_scale);
        const TensorView key_v = arrays.view(key, "key"), value_v = arrays.view(value, "value");
        const TensorView slot_mapping_v = arrays.view(slot_mapping, "slot_mapping");
        const Stream s = to_stream(stream);
        nb::gil_scoped_release unlocked;
        kv_cache_write(cache, key_v, value_v, slot_mapping_v, s);
      },
      QGEMM_CACHE_ARGS, nb::arg("key").none(), nb::arg("value").none(), nb::arg("slot_mapping").none(),
      nb::arg("stream").none() = nb::none(),
      "writes key / value [T, kv_heads, head_dim] into the cache slots slot_mapping [T] names (negative: "
      "skipped), quantized per token and head for an int8 / fp8 cache");
  m.def(
      "paged_attention_decode",
      [](nb::handle out, nb::handle query, nb::handle key_cache, nb::handle value_cache, nb::handle key_scale,
         nb::handle value_scale, nb::handle block_tables, nb::handle seq_lens, float softmax_scale,
         int64_t max_seq_len, nb::handle workspace, nb::handle stream) {
        CallArrays arrays;
        const TensorView out_v = arrays.view(out, "out"), query_v = arrays.view(query, "query");
        const PagedKvCache cache = paged_kv_cache(arrays, key_cache, value_cache, key_scale, value_scale);
        const TensorView block_tables_v = arrays.view(block_tables, "block_tables");
        const TensorView seq_lens_v = arrays.view(seq_lens, "seq_lens");
        const auto workspace_v = arrays.optional_view(workspace, "workspace");
        const Stream s = to_stream(stream);
        nb::gil_scoped_release unlocked;
        paged_attention_decode(out_v, query_v, cache, block_tables_v, seq_lens_v, softmax_scale, max_seq_len,
                               workspace_v, s);
      },
      nb::arg("out").none(), nb::arg("query").none(), QGEMM_CACHE_ARGS, nb::arg("block_tables").none(),
      nb::arg("seq_lens").none(), nb::arg("softmax_scale"), nb::arg("max_seq_len") = 0,
      nb::arg("workspace").none() = nb::none(), nb::arg("stream").none() = nb::none(),
      "out = softmax(softmax_scale · q·k̂ᵀ) · v̂ over each sequence's cached tokens (one decode step); an "
      "optional uint8 workspace (paged_attention_workspace_bytes) splits long sequences over several CTAs");
  m.def("paged_attention_workspace_bytes", &paged_attention_workspace_bytes, nb::arg("num_seqs"),
        nb::arg("q_heads"), nb::arg("head_dim"), nb::arg("max_seq_len"),
        "bytes of paged_attention_decode's workspace for num_seqs sequences of at most max_seq_len tokens "
        "(0: no sequence is split)");
}

}  // namespace qgemm::python
