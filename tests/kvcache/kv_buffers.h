// kv_buffers.h — host storage for a scenario's cache and inputs, and the
// TensorViews the ops take over it (or over device copies: kv_device.h).
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "kvcache/kv_problem.h"
#include "qgemm/kv_cache.h"

namespace qgemm::test {

// The pool of a scenario on the host, poisoned (0xff bytes: NaN scales and
// 16-bit values, code −1 / fp8 NaN) until written.
struct HostCache {
  const KvProblem* p;
  std::vector<uint8_t> key, value;
  std::vector<float> key_scale, value_scale;

  explicit HostCache(const KvProblem& problem) : p(&problem) {
    const size_t bytes = problem.cache_elems() * dtype_size(problem.shape.cache_dtype);
    key.assign(bytes, 0xff);
    value.assign(bytes, 0xff);
    if (problem.quantized()) {
      key_scale.resize(problem.scale_elems());
      value_scale.resize(problem.scale_elems());
      std::memset(key_scale.data(), 0xff, key_scale.size() * sizeof(float));
      std::memset(value_scale.data(), 0xff, value_scale.size() * sizeof(float));
    }
  }
  PagedKvCache view() { return cache_view(*p, key.data(), value.data(), key_scale.data(), value_scale.data(), Device::cpu()); }
  CacheContents contents() const { return {p, key.data(), value.data(), key_scale.data(), value_scale.data()}; }

  static PagedKvCache cache_view(const KvProblem& p, void* key, void* value, float* key_scale, float* value_scale,
                                 Device device) {
    const auto& s = p.shape;
    PagedKvCache c;
    c.key = TensorView(key, s.cache_dtype, {p.num_blocks, s.block_size, s.kv_heads, s.head_dim}, device);
    c.value = TensorView(value, s.cache_dtype, {p.num_blocks, s.block_size, s.kv_heads, s.head_dim}, device);
    if (p.quantized()) {
      c.key_scale = TensorView(key_scale, DType::kFloat32, {p.num_blocks, s.block_size, s.kv_heads}, device);
      c.value_scale = TensorView(value_scale, DType::kFloat32, {p.num_blocks, s.block_size, s.kv_heads}, device);
    }
    return c;
  }
};

// The scenario's new tokens as kv_cache_write takes them (contiguous).
inline TensorView keys_view(const KvProblem& p, const void* data, Device device = Device::cpu()) {
  return TensorView(data, p.shape.dtype, {p.tokens, p.shape.kv_heads, p.shape.head_dim}, device);
}

}  // namespace qgemm::test
