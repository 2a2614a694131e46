// The GPU activations (fused/cuda/fused_fast_math.cuh: silu and both GELUs
// with the SFU's exp2 and reciprocal) against libm in double and against the
// CPU twin (fused/fused_math.h), over 2·10⁵ random and 1000 evenly spaced
// points of [−12, 12] and the special values.
//
// Bounds: the SFU's ex2 is within 2 ulp and rcp within 1, and e^a inherits a
// relative error |a|·2⁻²⁴ from its fp32 argument (it only matters for the
// tiny results of negative inputs, far below any quantization step), so each
// function is within a few ulps of its magnitude plus that conditioning term
// — the form tests/fused/test_fused_math.cpp bounds the CPU twin with, a
// little wider. The worst errors seen are printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "common/cuda_buffer.h"
#include "common/test_util.h"
#include "fused/activation_reference.h"
#include "fused/cuda/fused_fast_math.cuh"
#include "fused/fused_math.h"
#include "fused/fused_quant.h"

namespace qgemm::test {
namespace {

using namespace detail::fused;
namespace quant = detail::quant;

__global__ void activations_kernel(const float* x, float* silu_out, float* tanh_out, float* erf_out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  silu_out[i] = silu_fast(x[i]);
  tanh_out[i] = gelu_tanh_fast(x[i]);
  erf_out[i] = gelu_erf_fast(x[i]);
}

struct Activations {
  std::vector<float> silu, tanh, erf;
};

Activations on_gpu(const std::vector<float>& x) {
  const size_t bytes = x.size() * sizeof(float);
  CudaBuffer x_d(x), silu_d(bytes), tanh_d(bytes), erf_d(bytes);
  silu_d.poison(), tanh_d.poison(), erf_d.poison();
  const int n = static_cast<int>(x.size());
  activations_kernel<<<(n + 255) / 256, 256>>>(static_cast<const float*>(x_d.get()), static_cast<float*>(silu_d.get()),
                                               static_cast<float*>(tanh_d.get()), static_cast<float*>(erf_d.get()), n);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  Activations out;
  silu_d.download(out.silu), tanh_d.download(out.tanh), erf_d.download(out.erf);
  return out;
}

// Largest error / allowed error seen, to print the margin.
struct Worst {
  const char* name;
  double ratio = 0, x = 0;
  void add(double error, double allowed, double at) {
    if (error / allowed > ratio) ratio = error / allowed, x = at;
  }
  ~Worst() { std::printf("  %-10s worst error %.2f of the bound (x = %.6g)\n", name, ratio, x); }
};

TEST(FusedFastMath, ActivationsCloseToLibmAndToTheCpuTwin) {
  QGEMM_SKIP_WITHOUT_GPU();
  auto rng = make_rng();
  std::uniform_real_distribution<float> dist(-12.0f, 12.0f);
  std::vector<float> x(201000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = i < 1000 ? -12.0f + static_cast<float>(i) * 0.024f : dist(rng);
  const Activations gpu = on_gpu(x);
  Worst silu_libm{"silu"}, tanh_libm{"gelu tanh"}, erf_libm{"gelu erf"}, twin{"vs CPU"};
  int64_t bad = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    const double silu_tol = silu_tolerance(v, 6), tanh_tol = gelu_tanh_tolerance(v, 12),
                 erf_tol = gelu_erf_tolerance(v, 12, kErfcFitError), erf_twin_tol = gelu_erf_rounding_tolerance(v, 12);
    const double silu_err = std::fabs(gpu.silu[i] - silu_reference(v)),
                 tanh_err = std::fabs(gpu.tanh[i] - gelu_tanh_reference(v)),
                 erf_err = std::fabs(gpu.erf[i] - gelu_erf_reference(v));
    silu_libm.add(silu_err, silu_tol, v), tanh_libm.add(tanh_err, tanh_tol, v), erf_libm.add(erf_err, erf_tol, v);
    bad += !(silu_err <= silu_tol) + !(tanh_err <= tanh_tol) + !(erf_err <= erf_tol);
    // GPU against the CPU twin: both within their rounding bounds of the same
    // formulas (for GELU erf, the same erfc polynomial), so within the sum.
    const double cpu_silu = silu(x[i]), cpu_tanh = gelu_tanh(x[i]), cpu_erf = gelu_erf(x[i]);
    const double twin_errors[] = {std::fabs(gpu.silu[i] - cpu_silu) / (2 * silu_tol),
                                  std::fabs(gpu.tanh[i] - cpu_tanh) / (2 * tanh_tol),
                                  std::fabs(gpu.erf[i] - cpu_erf) / (2 * erf_twin_tol)};
    for (double e : twin_errors) {
      twin.add(e, 1.0, v);
      bad += !(e <= 1.0);
    }
    if (bad > 0 && bad < 5) ADD_FAILURE() << "x = " << v;
  }
  EXPECT_EQ(bad, 0);
}

// Zero, the saturated tails (±100), ±inf and NaN give exactly what the CPU
// twin gives.
TEST(FusedFastMath, SpecialValuesMatchTheCpuTwin) {
  QGEMM_SKIP_WITHOUT_GPU();
  const std::vector<float> x = {0.0f, -0.0f, 100.0f, -100.0f, INFINITY, -INFINITY, NAN};
  const Activations gpu = on_gpu(x);
  for (size_t i = 0; i < x.size(); ++i) {
    const float expected[] = {silu(x[i]), gelu_tanh(x[i]), gelu_erf(x[i])};
    const float got[] = {gpu.silu[i], gpu.tanh[i], gpu.erf[i]};
    for (int f = 0; f < 3; ++f) {
      if (std::isnan(expected[f])) {
        EXPECT_TRUE(std::isnan(got[f])) << "function " << f << ", x = " << x[i];
      } else {
        EXPECT_EQ(got[f], expected[f]) << "function " << f << ", x = " << x[i];
      }
    }
  }
}

__global__ void full_range_codes_kernel(const float* y, const float* inv_scale, uint8_t* q, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const RowCode code{1.0f / inv_scale[i], {inv_scale[i], 0, -128, 127}};
  q[i] = quantize_as<QuantOut::kInt8FullRange>(y[i], code);
}

// The GPU's full-range int8 codes (one saturating cvt.rni.sat.s8.f32) equal
// the CPU's clamp(rne_i32(y · (1/s)), −128, 127): ties to even on both sides
// of every code, the saturation edges, ±inf, NaN (→ 0), random values and
// scales.
TEST(FusedFastMath, FullRangeInt8CodesMatchTheCpu) {
  QGEMM_SKIP_WITHOUT_GPU();
  std::vector<float> y, inv;
  for (int k = -140; k <= 140; ++k) {
    for (float d : {-0.5f, -0.49999997f, 0.0f, 0.49999997f, 0.5f}) y.push_back(static_cast<float>(k) + d), inv.push_back(1.0f);
  }
  for (float v : {INFINITY, -INFINITY, NAN, -0.0f, 1e-45f, 3e38f, -3e38f, 2147483648.0f, -2147483904.0f}) {
    y.push_back(v), inv.push_back(1.0f);
  }
  auto rng = make_rng();
  std::uniform_real_distribution<float> value(-50.0f, 50.0f), scale(0.01f, 10.0f);
  for (int i = 0; i < 100000; ++i) y.push_back(value(rng)), inv.push_back(scale(rng));
  const int n = static_cast<int>(y.size());
  CudaBuffer y_d(y), inv_d(inv), q_d(y.size());
  q_d.poison();
  full_range_codes_kernel<<<(n + 255) / 256, 256>>>(static_cast<const float*>(y_d.get()),
                                                      static_cast<const float*>(inv_d.get()),
                                                      static_cast<uint8_t*>(q_d.get()), n);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint8_t> q;
  q_d.download(q);
  int64_t bad = 0;
  for (int i = 0; i < n; ++i) {
    const quant::Int8Code code{inv[i], 0, -128, 127};
    const auto expected = static_cast<uint8_t>(quant::quantize_int8(y[i], code));
    if (q[i] != expected && ++bad < 5) ADD_FAILURE() << "y = " << y[i] << ", 1/s = " << inv[i] << ": " << int(int8_t(q[i]));
  }
  EXPECT_EQ(bad, 0);
}

}  // namespace
}  // namespace qgemm::test
