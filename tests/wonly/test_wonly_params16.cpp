// 16-bit scales and offsets (in the activation dtype T) on the GPU. Every
// kernel rounds a parameter to T before it uses it (s_T = round_T(s)), so
// 16-bit parameters must give exactly the bits of fp32 parameters that hold
// the same T values: each case runs both and compares them bit for bit, and
// the 16-bit call is also checked against the CPU twin. Cases cover every
// kernel (decode with one and two token blocks, M = 17–32, the mma.sync and
// wgmma tiles forced, stream-K), every copy path of the tensor-core kernels'
// param blocks (wonly_param_blocks.cuh: 4-byte pairs for even group counts,
// loads for odd counts, per channel, odd strides and 2-byte-aligned bases),
// int4 and int8, both dtypes, offsets on and off, plain and prepacked.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/cuda_buffer.h"
#include "wonly/cuda/wonly_cuda.h"
#include "wonly/wonly_cuda_check.h"
#include "wonly/wonly_problem.h"

namespace qgemm::test {
namespace {

struct Path {
  const char* name;
  int64_t m;
  detail::WonlyKernel kernel = detail::WonlyKernel::kGemv;  // kGemv: the dispatch table's choice
  int tile = 0;
  int stream_k_ctas = 0;  // > 0: a workspace and stream-K forced with that many CTAs
};

const Path kPaths[] = {
    {"decode M=1", 1},
    {"decode M=5", 5},
    {"decode M=16", 16},
    {"M=24", 24},
    {"mma 64", 40, detail::WonlyKernel::kMma, 64},
    {"mma 128", 100, detail::WonlyKernel::kMma, 128},
    {"wgmma 32", 24, detail::WonlyKernel::kWgmma, 32},
    {"wgmma 64", 40, detail::WonlyKernel::kWgmma, 64},
    {"wgmma 128", 100, detail::WonlyKernel::kWgmma, 128},
    {"wgmma 256", 257, detail::WonlyKernel::kWgmma, 256},
    {"wgmma 32 stream-K", 32, detail::WonlyKernel::kWgmma, 32, 4},
    {"wgmma 64 stream-K", 64, detail::WonlyKernel::kWgmma, 64, 5},
    {"wgmma 256 stream-K", 257, detail::WonlyKernel::kWgmma, 256, 3},
};

// (N, K, group): group counts even (pairs), odd (loads), per channel (0;
// [N] rows adjacent and N even: the aligned words of wonly_param_blocks.cuh),
// and K = 4128 with a partial last k tile.
const int64_t kShapes[][3] = {{200, 512, 64}, {77, 288, 32}, {300, 1024, 128}, {129, 96, 32}, {150, 512, 0}, {64, 4128, 32}};

// The output bits of one GPU call.
std::vector<uint16_t> run(const WonlyCase& c, const WonlyActs& x, const CudaBuffer& a, const CudaBuffer& bias,
                          const TensorView& w, const TensorView& scales, const std::optional<TensorView>& offsets,
                          int group, const TensorView* workspace) {
  CudaBuffer out(x.out.size() * 2);
  out.poison();
  weight_only_mm_with(x.out_view(out.get(), c.n, x.ldo, kGpu), x.a_view(a.get(), kGpu), w, scales, offsets, group,
                      x.bias_view(bias.get(), 0, c.n, kGpu), workspace);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << c.name();
  std::vector<uint16_t> bits;
  out.download(bits);
  return bits;
}

// `host` (param_dtype rows of `groups`) copied into rows of ld = groups + 1
// starting one element past the buffer: an odd stride and a base only 2-byte
// aligned, on the device.
struct StridedParams {
  std::unique_ptr<CudaBuffer> buffer;
  TensorView view;
  StridedParams(const std::vector<uint16_t>& host, int64_t n, int64_t groups, DType dtype) {
    const int64_t ld = groups + 1;
    std::vector<uint16_t> bits(static_cast<size_t>(1 + n * ld), 0x7e00);  // NaN fill: must never be read
    for (int64_t r = 0; r < n; ++r)
      for (int64_t g = 0; g < groups; ++g) bits[1 + r * ld + g] = host[r * groups + g];
    buffer = std::make_unique<CudaBuffer>(bits);
    view = TensorView::strided(static_cast<const uint16_t*>(buffer->get()) + 1, dtype, {n, groups}, {ld, 1}, kGpu);
  }
};

TEST(WeightOnlyCudaParams16, SameBitsAsFp32ParamsAndMatchCpu) {
  QGEMM_SKIP_WITHOUT_GPU();
  const bool wgmma = detail::wonly_wgmma_available(0);
  const int64_t ws_bytes = weight_only_workspace_bytes(kGpu);
  CudaBuffer workspace(static_cast<size_t>(ws_bytes));
  const TensorView ws(workspace.get(), DType::kUInt8, {ws_bytes}, kGpu);
  int index = 0;
  for (bool int4 : {true, false}) {
    for (const auto& s : kShapes) {
      for (const Path& path : kPaths) {
        if (path.kernel == detail::WonlyKernel::kWgmma && !wgmma) continue;
        WonlyCase c;
        c.m = path.m, c.n = s[0], c.k = s[1], c.int4 = int4, c.group_size = static_cast<int>(s[2]);
        c.dtype = index % 2 == 0 ? DType::kBFloat16 : DType::kFloat16;
        c.offsets = index % 3 != 1, c.bias = index % 4 != 2, c.prepacked = index % 5 == 3;
        ++index;
        auto rng = make_rng(static_cast<uint64_t>(7919 * index));
        WonlyWeights w16(c.n, c.k, int4, c.group(), c.offsets, c.ldw_pad, rng);
        w16.use_16bit_params(c.dtype);
        WonlyWeights w32 = w16;  // the same (T-representable) values as fp32
        w32.param_dtype = DType::kFloat32;
        const DeviceWeights dev16(w16, c.prepacked), dev32(w32, c.prepacked);
        WonlyActs x(c, rng);
        const CudaBuffer a(x.a), bias(x.bias);
        const std::string what = c.name() + " " + path.name;
        SCOPED_TRACE(what);

        std::optional<detail::WonlyKernelOverride> force;
        if (path.kernel != detail::WonlyKernel::kGemv) force.emplace(path.kernel, path.tile);
        std::optional<detail::WonlyStreamKOverride> stream_k;
        if (path.stream_k_ctas > 0) stream_k.emplace(path.stream_k_ctas);
        const TensorView* workspace_arg = path.stream_k_ctas > 0 ? &ws : nullptr;

        const auto want = run(c, x, a, bias, dev32.w_view, w32.scales_view(dev32.scales->get(), 0, c.n, kGpu),
                              w32.offsets_view(dev32.offsets->get(), 0, c.n, kGpu), w32.group, workspace_arg);
        const auto got = run(c, x, a, bias, dev16.w_view, w16.scales_view(dev16.scales->get(), 0, c.n, kGpu),
                             w16.offsets_view(dev16.offsets->get(), 0, c.n, kGpu), w16.group, workspace_arg);
        EXPECT_EQ(got, want) << what << ": 16-bit parameters";
        const StridedParams scales(w16.scales16, c.n, w16.groups(), c.dtype);
        std::optional<StridedParams> offsets;
        if (c.offsets) offsets.emplace(w16.offsets16, c.n, w16.groups(), c.dtype);
        const auto strided = run(c, x, a, bias, dev16.w_view, scales.view,
                                 offsets ? std::optional<TensorView>(offsets->view) : std::nullopt, w16.group,
                                 workspace_arg);
        EXPECT_EQ(strided, want) << what << ": strided 16-bit parameters";
        if (path.kernel == detail::WonlyKernel::kGemv || index % 3 == 0) {
          check_case(c, w16, dev16, {{0, c.n}}, workspace_arg);  // against the CPU twin
        }
      }
    }
  }
}

}  // namespace
}  // namespace qgemm::test
