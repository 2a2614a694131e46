// `qgemm bench quant` (GPU): quantize / dequantize kernels at the issue's
// shapes, as a fraction of the device copy bandwidth measured in the same
// run, against an "unfused" peer: the separate kernels an eager framework
// launches (a row-amax reduction, then one elementwise quantize pass).
#include <cuda_bf16.h>

#include <string>
#include <vector>

#include "commands.h"
#include "cuda_bench.h"
#include "qgemm/quant.h"

namespace qgemm::tools {
namespace {

// Peer kernel 1: amax of each bf16 row into fp32 (what torch's amax(dim=-1) does).
__global__ void row_amax_kernel(const __nv_bfloat16* x, float* amax, int64_t hidden) {
  float m = 0.0f;
  for (int64_t i = threadIdx.x; i < hidden; i += blockDim.x) {
    m = fmaxf(m, fabsf(__bfloat162float(x[blockIdx.x * hidden + i])));
  }
  for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  __shared__ float part[32];
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (unsigned w = 1; w < blockDim.x / 32; ++w) m = fmaxf(m, part[w]);
    amax[blockIdx.x] = m / 127.0f;
  }
}

// Peer kernel 2: elementwise divide, round, clamp, cast.
__global__ void quantize_elementwise_kernel(const __nv_bfloat16* x, const float* scale, int8_t* q,
                                            int64_t hidden, int64_t total) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float s = scale[i / hidden];
    q[i] = static_cast<int8_t>(fminf(fmaxf(rintf(__bfloat162float(x[i]) / (s > 0 ? s : 1.0f)), -128.0f), 127.0f));
  }
}

struct Variant {
  const char* impl;
  QuantMode mode;
  DType quant;
  bool symmetric;
  bool dequantize;
};

}  // namespace

void bench_quant_cuda(const Options& options, BenchReport& report) {
  report.set_device_name(cuda::device_name(0));
  cudaStream_t stream = nullptr;
  const int warmup = options.get_int("warmup", 10), runs = options.get_int("runs", 100);
  const double copy_gbps = cuda::copy_bandwidth_gbps(size_t(1) << 30, stream);
  const Device gpu = Device::cuda(0);
  const auto shapes = options.get_shapes("shapes", {{1, 4096}, {16, 4096}, {256, 4096}, {4096, 4096}, {16384, 8192}});
  const Variant variants[] = {
      {"qgemm-token-int8", QuantMode::kDynamicPerToken, DType::kInt8, true, false},
      {"qgemm-token-int8-asym", QuantMode::kDynamicPerToken, DType::kInt8, false, false},
      {"qgemm-token-fp8", QuantMode::kDynamicPerToken, DType::kFloat8E4M3, true, false},
      {"qgemm-group128-int8", QuantMode::kDynamicPerGroup, DType::kInt8, true, false},
      {"qgemm-static-int8", QuantMode::kStaticPerTensor, DType::kInt8, true, false},
      {"qgemm-dequant-token-int8", QuantMode::kDynamicPerToken, DType::kInt8, true, true},
  };
  for (const auto& s : shapes) {
    const int64_t t = s[0], h = s[1];
    const size_t x_bytes = t * h * 2, q_bytes = t * h;
    const int sets = cuda::rotation_sets(x_bytes + q_bytes);
    cuda::DeviceBuffer x(x_bytes * sets), q(q_bytes * sets), scale(t * (h / 32) * 4 + 4), azp(t * 4 * (h / 32) + 4);
    cuda::fill_random(x.get(), DType::kBFloat16, t * h * sets, -3, 3, 11, stream);
    cuda::fill_random(q.get(), DType::kInt8, t * h * sets, -128, 127, 12, stream);
    cuda::fill_random(scale.get(), DType::kFloat32, scale.bytes() / 4, 0.01, 0.02, 13, stream);
    cuda::fill_random(azp.get(), DType::kInt32, azp.bytes() / 4, -5, 5, 14, stream);
    const std::string shape = std::to_string(t) + "x" + std::to_string(h);
    auto record = [&](const std::string& impl, const TimingStats& st, double bytes) {
      BenchRecord r;
      r.op = "quant";
      r.impl = impl;
      r.shape = shape;
      r.device = "cuda";
      r.median_us = st.median_us;
      r.min_us = st.min_us;
      r.runs = st.runs;
      r.bytes = bytes;
      r.extra["frac_of_copy_bw"] = bytes / (st.median_us * 1e3) / copy_gbps;
      report.add(r);
    };
    for (const auto& v : variants) {
      QuantOptions o;
      o.mode = v.mode;
      o.symmetric = v.symmetric;
      o.group_size = 128;
      const int64_t scales = v.mode == QuantMode::kDynamicPerGroup ? t * (h / 128) : v.mode == QuantMode::kStaticPerTensor ? 1 : t;
      const TensorView scale_v = v.mode == QuantMode::kDynamicPerGroup
                                     ? TensorView(scale.get(), DType::kFloat32, {t, h / 128}, gpu)
                                     : TensorView(scale.get(), DType::kFloat32, {scales}, gpu);
      std::optional<TensorView> azp_v;
      if (!v.symmetric) azp_v = TensorView(azp.get(), DType::kInt32, {t}, gpu);
      const auto st = cuda::time_cuda(
          [&](int i) {
            const int set = i % sets;
            const TensorView xv(static_cast<uint8_t*>(x.get()) + set * x_bytes, DType::kBFloat16, {t, h}, gpu);
            const TensorView qv(static_cast<uint8_t*>(q.get()) + set * q_bytes, v.quant, {t, h}, gpu);
            if (v.dequantize) dequantize(xv, qv, scale_v, azp_v, o, stream);
            else quantize(qv, scale_v, azp_v, xv, o, stream);
          },
          stream, warmup, runs);
      record(v.impl, st, static_cast<double>(x_bytes + q_bytes + scales * 4));
    }
    // The unfused peer: amax kernel + elementwise kernel (reads x twice).
    const auto st = cuda::time_cuda(
        [&](int i) {
          const int set = i % sets;
          const auto* xv = reinterpret_cast<const __nv_bfloat16*>(static_cast<uint8_t*>(x.get()) + set * x_bytes);
          auto* qv = static_cast<int8_t*>(q.get()) + set * q_bytes;
          row_amax_kernel<<<static_cast<unsigned>(t), 256, 0, stream>>>(xv, scale.as<float>(), h);
          quantize_elementwise_kernel<<<1024, 256, 0, stream>>>(xv, scale.as<float>(), qv, h, t * h);
        },
        stream, warmup, runs);
    record("unfused-amax+quantize-int8", st, static_cast<double>(x_bytes + q_bytes + t * 4));
  }
  BenchRecord bw;
  bw.op = "copy";
  bw.impl = "cudaMemcpy-d2d";
  bw.shape = "1GiB";
  bw.device = "cuda";
  bw.extra["copy_gbps"] = copy_gbps;
  report.add(bw);
}

int cmd_bench_quant(int argc, char** argv) {
  const Options options(argc, argv, 3);
  BenchReport report("", command_line_string(argc, argv));
  bench_quant_cuda(options, report);
  report.print_table();
  if (options.has("json")) report.write_json(options.get("json", "bench_quant.json"));
  return 0;
}

}  // namespace qgemm::tools
