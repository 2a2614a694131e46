// fused_problem.h — one random fused-op problem for the tests: the case
// description (op, shape, dtypes, scale mode, options), host buffers of every
// input and output (random, never zero; rows optionally padded), and the call
// of the qgemm entry on host or device copies of those buffers.
#pragma once

#include <cstdint>
#include <cctype>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "gemm/cpu/output_store.h"
#include "qgemm/fused.h"

namespace qgemm::test {

enum class FusedKind { kRmsNorm, kAddRmsNorm, kLayerNorm, kLayerNormInt32, kSiluMul, kGelu, kGeluInt32 };

inline const char* kind_name(FusedKind k) {
  switch (k) {
    case FusedKind::kRmsNorm: return "rms";
    case FusedKind::kAddRmsNorm: return "addrms";
    case FusedKind::kLayerNorm: return "ln";
    case FusedKind::kLayerNormInt32: return "lnint32";
    case FusedKind::kSiluMul: return "silumul";
    case FusedKind::kGelu: return "gelu";
    default: return "geluint32";
  }
}

struct FusedCase {
  FusedKind kind = FusedKind::kRmsNorm;
  int64_t tokens = 4, hidden = 64;
  DType dtype = DType::kBFloat16;  // x (float inputs) or the parameters (int32 inputs)
  DType q = DType::kInt8;
  FusedScale mode = FusedScale::kDynamicPerToken;
  bool asymmetric = false, narrow_range = false;
  bool bias = true, residual = true;  // LayerNorm (float): both optional; GELU: bias
  bool gelu_tanh = false;
  bool per_token_a = true, per_channel_w = true, residual_per_token = false;
  int64_t pad = 0;  // extra elements after every row of every [T, ·] matrix
  float eps = 1e-5f;

  bool int32_input() const { return kind == FusedKind::kLayerNormInt32 || kind == FusedKind::kGeluInt32; }
  bool is_norm() const { return kind <= FusedKind::kLayerNormInt32; }
  int64_t x_width() const { return kind == FusedKind::kSiluMul ? 2 * hidden : hidden; }
  std::string name(size_t index) const {
    std::string n = std::string(kind_name(kind)) + "_T" + std::to_string(tokens) + "_N" +
                    std::to_string(hidden) + "_" + dtype_name(dtype) + "_" + dtype_name(q) +
                    (mode == FusedScale::kStatic ? "_static" : "_dynamic");
    if (asymmetric) n += "_asym";
    if (narrow_range) n += "_narrow";
    if (pad) n += "_pad" + std::to_string(pad);
    if (gelu_tanh) n += "_tanh";
    for (char& ch : n) ch = (ch == '_' || std::isalnum(static_cast<unsigned char>(ch))) ? ch : 'x';
    return n + "_" + std::to_string(index);
  }
};

// GoogleTest prints a case by its name.
inline void PrintTo(const FusedCase& c, std::ostream* os) { *os << c.name(0); }

// Fast seeded uniform floats (splitmix64), for the large test shapes.
inline uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
inline float uniform_at(uint64_t seed, uint64_t i, float lo, float hi) {
  const double unit = static_cast<double>(splitmix(seed ^ (i * 0x2545f4914f6cdd1dull)) >> 11) * 0x1p-53;
  const float v = static_cast<float>(lo + unit * (hi - lo));
  return v != 0.0f ? v : hi;  // never zero
}

// Every tensor of a problem as bytes (host), uploaded as-is for the GPU.
struct FusedBuffers {
  std::vector<uint8_t> x, residual, weight, beta, bias, scale_a, scale_w, residual_scale, q, scale, azp;
};

// Base pointers of the buffers on one device (host or device copies).
struct FusedPointers {
  void *x = nullptr, *residual = nullptr, *weight = nullptr, *beta = nullptr, *bias = nullptr,
       *scale_a = nullptr, *scale_w = nullptr, *residual_scale = nullptr, *q = nullptr,
       *scale = nullptr, *azp = nullptr;
  Device device{};
};

inline FusedPointers host_pointers(FusedBuffers& b) {
  auto p = [](std::vector<uint8_t>& v) -> void* { return v.empty() ? nullptr : v.data(); };
  return {p(b.x), p(b.residual), p(b.weight), p(b.beta), p(b.bias), p(b.scale_a), p(b.scale_w),
          p(b.residual_scale), p(b.q), p(b.scale), p(b.azp), Device::cpu()};
}

// n values of `dtype` (a float dtype, int8 or int32) drawn from [lo, hi].
inline std::vector<uint8_t> random_bytes(DType dtype, int64_t n, uint64_t seed, float lo, float hi) {
  std::vector<uint8_t> out(static_cast<size_t>(n) * dtype_size(dtype));
  for (int64_t i = 0; i < n; ++i) {
    const float v = uniform_at(seed, static_cast<uint64_t>(i), lo, hi);
    if (dtype == DType::kInt8) {
      out[i] = static_cast<uint8_t>(static_cast<int8_t>(std::lrint(v)));
    } else if (dtype == DType::kInt32) {
      const int32_t a = static_cast<int32_t>(std::lrint(v));
      std::memcpy(&out[i * 4], &a, 4);
    } else {
      detail::store_float(out.data(), i, dtype, v);
    }
  }
  return out;
}

inline FusedBuffers make_buffers(const FusedCase& c, uint64_t seed) {
  FusedBuffers b;
  const int64_t t = c.tokens, n = c.hidden;
  const DType x_dtype = c.int32_input() ? DType::kInt32 : c.dtype;
  const int64_t ldx = c.x_width() + c.pad, ld = n + c.pad;
  if (c.int32_input()) {
    b.x = random_bytes(DType::kInt32, t * ldx, seed + 1, -3.0e6f, 3.0e6f);
    b.scale_a = random_bytes(DType::kFloat32, c.per_token_a ? t : 1, seed + 2, 0.5e-3f, 1.5e-3f);
    b.scale_w = random_bytes(DType::kFloat32, c.per_channel_w ? n : 1, seed + 3, 0.5e-3f, 1.5e-3f);
  } else {
    b.x = random_bytes(x_dtype, t * ldx, seed + 1, -2.0f, 2.0f);
  }
  switch (c.kind) {
    case FusedKind::kAddRmsNorm:
      b.residual = random_bytes(c.dtype, t * ld, seed + 4, -2.0f, 2.0f);
      [[fallthrough]];
    case FusedKind::kRmsNorm:
      b.weight = random_bytes(c.dtype, n, seed + 5, 0.5f, 1.5f);
      break;
    case FusedKind::kLayerNorm:
    case FusedKind::kLayerNormInt32:
      b.weight = random_bytes(c.dtype, n, seed + 5, 0.5f, 1.5f);
      b.beta = random_bytes(c.dtype, n, seed + 6, -0.5f, 0.5f);
      if (c.bias) b.bias = random_bytes(c.dtype, n, seed + 7, -0.5f, 0.5f);
      if (c.kind == FusedKind::kLayerNormInt32) {
        b.residual = random_bytes(DType::kInt8, t * ld, seed + 4, -127.0f, 127.0f);
        b.residual_scale = random_bytes(DType::kFloat32, c.residual_per_token ? t : 1, seed + 8, 0.01f, 0.02f);
      } else if (c.residual) {
        b.residual = random_bytes(c.dtype, t * ld, seed + 4, -2.0f, 2.0f);
      }
      break;
    case FusedKind::kGelu:
    case FusedKind::kGeluInt32:
      if (c.bias) b.bias = random_bytes(c.dtype, n, seed + 7, -0.5f, 0.5f);
      break;
    default:
      break;
  }
  b.q.assign(static_cast<size_t>(t * ld), 0xff);
  const float qmax = c.q == DType::kInt8 ? 127.0f : 448.0f;
  if (c.mode == FusedScale::kStatic) {
    const float s = 3.0f / qmax;  // values beyond ±3 saturate
    b.scale.resize(4);
    std::memcpy(b.scale.data(), &s, 4);
    if (c.asymmetric) b.azp = {5, 0, 0, 0};
  } else {
    b.scale.assign(static_cast<size_t>(t) * 4, 0xff);
    if (c.asymmetric) b.azp.assign(static_cast<size_t>(t) * 4, 0xff);
  }
  return b;
}

// Calls the qgemm entry of the case on the buffers at `p`.
inline void run_fused(const FusedCase& c, const FusedPointers& p, Stream stream = nullptr) {
  const int64_t t = c.tokens, n = c.hidden, ld = n + c.pad, ldx = c.x_width() + c.pad;
  const Device d = p.device;
  auto matrix = [&](void* data, DType dtype, int64_t width, int64_t stride) {
    return TensorView::strided(data, dtype, {t, width}, {stride, 1}, d);
  };
  auto vec = [&](void* data, DType dtype, int64_t len) { return TensorView(data, dtype, {len}, d); };
  QuantOutput out;
  out.q = matrix(p.q, c.q, n, ld);
  out.mode = c.mode;
  out.narrow_range = c.narrow_range;
  const int64_t scales = c.mode == FusedScale::kStatic ? 1 : t;
  out.scale = vec(p.scale, DType::kFloat32, scales);
  if (c.asymmetric) out.azp = vec(p.azp, DType::kInt32, scales);
  auto optional_vec = [&](void* data) -> std::optional<TensorView> {
    if (data == nullptr) return std::nullopt;
    return vec(data, c.dtype, n);
  };
  Int32GemmOutput acc;
  if (c.int32_input()) {
    acc.acc = matrix(p.x, DType::kInt32, n, ldx);
    acc.scale_a = vec(p.scale_a, DType::kFloat32, c.per_token_a ? t : 1);
    acc.scale_w = vec(p.scale_w, DType::kFloat32, c.per_channel_w ? n : 1);
  }
  const TensorView x = matrix(p.x, c.dtype, c.x_width(), ldx);
  switch (c.kind) {
    case FusedKind::kRmsNorm:
      return rms_norm_quant(out, x, vec(p.weight, c.dtype, n), c.eps, stream);
    case FusedKind::kAddRmsNorm:
      return add_rms_norm_quant(out, x, matrix(p.residual, c.dtype, n, ld), vec(p.weight, c.dtype, n), c.eps,
                                stream);
    case FusedKind::kLayerNorm: {
      std::optional<TensorView> residual;
      if (p.residual != nullptr) residual = matrix(p.residual, c.dtype, n, ld);
      return layer_norm_quant(out, x, vec(p.weight, c.dtype, n), vec(p.beta, c.dtype, n), c.eps, residual,
                              optional_vec(p.bias), stream);
    }
    case FusedKind::kLayerNormInt32:
      return layer_norm_quant_int32(out, acc, matrix(p.residual, DType::kInt8, n, ld),
                                    vec(p.residual_scale, DType::kFloat32, c.residual_per_token ? t : 1),
                                    vec(p.weight, c.dtype, n), vec(p.beta, c.dtype, n), c.eps,
                                    optional_vec(p.bias), stream);
    case FusedKind::kSiluMul:
      return silu_and_mul_quant(out, x, stream);
    case FusedKind::kGelu:
      return bias_gelu_quant(out, x, optional_vec(p.bias),
                             c.gelu_tanh ? GeluApproximation::kTanh : GeluApproximation::kErf, stream);
    case FusedKind::kGeluInt32:
      return bias_gelu_quant_int32(out, acc, optional_vec(p.bias),
                                   c.gelu_tanh ? GeluApproximation::kTanh : GeluApproximation::kErf, stream);
  }
}

// Reads the results back from the buffers.
inline float scale_at(const FusedBuffers& b, int64_t t) {
  float s;
  std::memcpy(&s, &b.scale[t * 4], 4);
  return s;
}
inline int32_t azp_at(const FusedBuffers& b, int64_t t) {
  if (b.azp.empty()) return 0;
  int32_t z;
  std::memcpy(&z, &b.azp[t * 4], 4);
  return z;
}
// The quantized value relative to its zero point, as an ordinal: q − z for
// int8; for fp8 the code's magnitude with its sign (neighbouring codes differ by 1).
inline int q_ordinal(const FusedCase& c, const FusedBuffers& b, int64_t t, int64_t h, int32_t zero_point) {
  const uint8_t bits = b.q[t * (c.hidden + c.pad) + h];
  if (c.q == DType::kInt8) return static_cast<int8_t>(bits) - zero_point;
  return (bits & 0x80) ? -(bits & 0x7f) : (bits & 0x7f);
}

}  // namespace qgemm::test
