// CUDA dispatch of weight_only_mm by the number of tokens M (the table below),
// and the CUDA weight prepacking.
//
// Instantiations: 2 dtypes (bf16, fp16) × 2 parameter dtypes (fp32, 16-bit)
// × (2 weights (int4, int8) × (5 kernel shapes (gemv 1, 2 and 4 token
// blocks, mma 64 and 128 tokens) + 4 wgmma tiles (32, 64, 128, 256 tokens) +
// 3 stream-K builds of the 32-, 64- and 256-token tiles) + int4 × four more gemv
// shapes (one for 1 token block (M ≤ 4 on many rows), two for 2 token blocks
// (small grids; one wave of 32-row blocks), one for 4 token blocks (small
// grids)) + int8 × (a second gemv shape for 2 token blocks (16-row blocks
// where they fill their last wave better) + the Hopper decode kernel
// (wonly_stream_sm90.cu))) + bf16 int4 × 2 parameter dtypes × two
// occupancy shapes (16-row blocks of 8 warps at one token block, 32-row
// blocks at two per SM at two) = 124 kernels, plus one prepack kernel; and the
// dense prefill path (wonly_dense.cuh, taken before the table from
// dense_min_tokens tokens with a dense workspace): 8 dequantization kernels
// and 2 CUTLASS GEMMs.
// The gemv rows' block shapes per weight type (measured, issue 7) are at
// `launch` in wonly_gemv.cu.
#include <algorithm>
#include <cstdint>
#include <string>

#include "core/cuda_check.h"
#include "core/cuda_launch.cuh"
#include "core/cuda_device_info.h"
#include "core/cuda_dram_bandwidth.h"
#include "qgemm/weight_only.h"
#include "wonly/cuda/wonly_cuda.h"
#include "wonly/cuda/wonly_stream_k.h"
#include "wonly/cuda/wonly_stream_plan.h"

namespace qgemm::detail {
namespace {

struct WonlyConfig {
  int64_t max_m;       // rows with M ≤ max_m (first match wins)
  WonlyKernel kernel;
  int tile;            // gemv: n8 token blocks (per chunk); mma / wgmma: tokens per block tile
  const char* why;
  bool many_row_tiles = false;     // only where wgmma32_takes (below)
  bool int8_stream = false;        // only int8 weights where wonly::stream_takes (wonly_stream_plan.h)
};

// clang-format off
constexpr WonlyConfig kConfigs[] = {
  {16, WonlyKernel::kStream, 0,
                              "Hopper, int8 weights whose 32-row tiles are one round on enough of the SMs (four "
                              "fifths; half for the plain layout at M = 9–16), on GPUs whose DRAM gives an SM at "
                              "most 30 GB/s of peak (an H100, not an H200: wonly_stream_plan.h): the weight "
                              "by bulk copy into a ring of shared-memory stages that one producer warp keeps "
                              "full for 16 consumer warps, which run the decode kernel's dequantization and "
                              "MMAs. H100, W8 per channel, M = 1 / 8 / 16, µs against the rows below forced in "
                              "the same call (bench/results/wonly-h100-stream-rule-sweep.json): (4096, 4096) "
                              "12.4 / 12.8 / 13.1 against 13.4 / 13.4 / 14.4, (4224, 8192) 18.2 / 18.7 / 19.1 "
                              "against 19.5 / 19.6 / 20.7; more rounds within 0.96–1.09× of the rows below, so "
                              "they take those",
                              false, true},
  {8,  WonlyKernel::kGemv, 1, "decode: one n8 token block; weight streamed once, HFMA2 dequant, tensor cores "
                              "multiply (int4: 32-row blocks, or 16 rows × 4 warps at M ≤ 4 on many rows; int8: 16-row "
                              "blocks, 4 blocks/SM)"},
  {16, WonlyKernel::kGemv, 2, "two n8 token blocks share every dequantized weight register; int4 64-row blocks "
                              "so fewer blocks re-read the activations from L2, 32-row ones on grids that "
                              "64-row blocks would leave thin, with group-major parameters and for fp16; "
                              "int8 32- or 16-row blocks by the fill of their last wave (block shapes: `launch` "
                              "in wonly_gemv.cu)"},
  {32, WonlyKernel::kWgmma, 32,
                              "one wgmma launch of 32-token tiles (m64n32k16: half the 64-token tile's MMA work "
                              "at M ≤ 32) on weights of many row tiles: int4 more than SMs/2, int8 more than "
                              "3/4 of the SMs (wgmma32_takes). H200 at 308169a, M = 17 / 32, µs, against the "
                              "64-token tile and the four-token-block decode launch forced in the same call "
                              "(bench/results/wonly-h200-wgmma-32-sweep-308169a.json): int4 g128 (28672, 8192) "
                              "85.7 / 85.9 against 106.4 / 94.8 and 117.3 / 127.6, (14336, 8192) 51.3 / 51.4 "
                              "against 61.5 / 55.2 and 61.6 / 66.6, (11008, 4096) 29.9 / 29.9 against 32.5 / "
                              "32.6 and 35.1 / 38.0; int8 per channel (28672, 8192) 95.7 / 95.6 against 116.6 / "
                              "104.8 and 122.9 / 126.9, (14336, 8192) 56.1 / 56.4 against 67.6 / 61.2 and the "
                              "prepacked decode launch's 62.7 / 66.0",
                              true},
  {32, WonlyKernel::kGemv, 4,
                              "one decode launch of four n8 token blocks (int4: 32 or 16 rows by grid size, "
                              "int8: 16 rows × 8 warps; `launch` in wonly_gemv.cu) on the weights the row above "
                              "leaves, with or without a workspace. H200 at 308169a, M = 17 / 32 µs, against the "
                              "32-token wgmma tile: int4 (8192, 8192) 33.8 / 35.9 against 36.5 / 36.6, (4096, "
                              "4096) 14.7 / 15.4 against 19.0 / 19.0; int8 prepacked (11008, 4096) 28.2 / 30.0 "
                              "against plain wgmma's 32.2 / 32.3, (8192, 8192) 34.6 / 36.1 against 38.8 / 39.0. "
                              "H100 at 03bc88f, W4 g128, against the former choices (two M ≤ 16 launches; with a "
                              "workspace and K ≥ 10240 a stream-K wgmma launch): (4096, 4096) 15.7 / 16.1 against "
                              "21.7 / 20.8 (cuBLAS 17.0); (2048, 8192) 16.4 / 17.7 against 24.9 / 23.9; (4096, "
                              "11008) 26.4 / 27.4 against stream-K's 33.9 / 33.9. Without wgmma (other GPUs) it "
                              "also beats two launches on the taller weights: (28672, 8192) int4 109.9 / 122.8 "
                              "against 130.5 / 153.8, int8 123.5 / 128.6 against 185.8 / 193.8 (2d6c185)"},
  {64, WonlyKernel::kWgmma, 64, "128 rows × 64 tokens, two warpgroups of m64n64k16 wgmmas; on the H100 at "
                                "M = 64: int4 105.6 µs on (28672, 8192) (mma.sync: 226), 30.2 on (4096, 4096) "
                                "(37.1); int8 at f7dc43d 124.8 (mma.sync 162.8), 25.2 (30.1)"},
  {64, WonlyKernel::kMma,  64, "128 rows × 64 tokens: little padding waste for 17..64 tokens; 60 / 76 KB "
                               "4-stage ring (int4 / int8), 2 blocks/SM"},
  {INT64_MAX, WonlyKernel::kWgmma, 0, "tile by M and grid size (wgmma_tile, measurements there): 128 / 256 "
                                      "tokens, a smaller one when that grid would be too small for the GPU; int8 "
                                      "on (28672, 8192) at f7dc43d, M = 256 / 1024 / 4096: 229 / 878 / 3358 µs "
                                      "(mma.sync: 588 / 2038 / 8027)"},
  {INT64_MAX, WonlyKernel::kMma, 128, "128 rows × 128 tokens: each dequantized weight register feeds 64 tokens "
                                      "per warp; 98 / 112 KB ring (int4 / int8), 2 blocks/SM"},
};
// clang-format on

thread_local WonlyKernel override_kernel = WonlyKernel::kGemv;  // kGemv: no override
thread_local int override_tile = 0;

constexpr int64_t kRowsPerTile = 128;  // weight rows per tensor-core block tile (wonly_tile.cuh: kTileRows)

int64_t row_tiles(const WeightOnlyArgs& args) { return (args.n + kRowsPerTile - 1) / kRowsPerTile; }

// The tensor-core kernels index k in 32 bits and tile N on grid y.
void check_tensor_core_limits(const WeightOnlyArgs& args) {
  if (args.k > (int64_t{1} << 30)) {
    throw Error(ErrorKind::kValue, "weight_only_mm: K=" + std::to_string(args.k) +
                                       " exceeds the tensor-core kernel's 32-bit k index (2^30)");
  }
  if (args.params_group_stride > INT32_MAX) {
    throw Error(ErrorKind::kValue, "weight_only_mm: the scales' group stride " +
                                       std::to_string(args.params_group_stride) +
                                       " exceeds the tensor-core kernel's 32-bit parameter index");
  }
  if (args.n > 65535 * kRowsPerTile) {
    throw Error(ErrorKind::kValue, "weight_only_mm: N=" + std::to_string(args.n) +
                                       " exceeds the grid of the tensor-core kernel");
  }
}

// out[tile(row, c)] = w[row, chunk c]: one thread per 16-byte chunk.
__global__ void prepack_kernel(uint8_t* out, const uint8_t* w, int64_t n, int64_t chunks,
                               int64_t ld_bytes, WeightAddressing addr) {
  wait_for_preceding_grids();
  allow_dependent_launch();
  const int64_t total = n * chunks;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = i / chunks, c = i % chunks;
    alignas(16) uint8_t bytes[16];
    for (int b = 0; b < 16; ++b) bytes[b] = w[row * ld_bytes + c * 16 + b];  // any alignment
    *reinterpret_cast<uint4*>(out + addr.chunk_offset(row, c)) = *reinterpret_cast<uint4*>(bytes);
  }
}

// Whether M = 17–32 runs the 32-token wgmma tile rather than one decode
// launch of four token blocks (the table's rows say where it was measured):
// on weights of more 128-row tiles than half the SMs (int4) or three
// quarters (int8, whose prepacked decode launch keeps up longer: (11008,
// 4096), 86 tiles on 132 SMs, 28.2–30.0 µs against wgmma's 32.2).
bool wgmma32_takes(const WeightOnlyArgs& args, int sms) {
  return args.int4 ? row_tiles(args) * 2 > sms : row_tiles(args) * 4 > sms * 3;
}

// The wgmma token tile for M > 64: 128 up to 128 tokens, else 256 (little
// padding, and the most tokens per dequantized weight) — unless that grid has
// fewer CTAs than a third of the SMs: then the next smaller tile (256 → 128
// → 64) whose grid has that many, or 64, whose 2–4× more CTAs beat the bigger
// tile split along K. H100 (132 SMs), µs, bf16, g128, `qgemm bench wonly
// --sweep` at afd809f (after the one-CTA-per-SM split rule of 6d9b319;
// bench/results/wonly-h100-sweep-m17-256.json), and (*) at 8f80181
// (bench/results/wonly-h100-sweep.json):
//   (N, K)          M      64-tile  128-tile  256-tile
//   (28672, 8192)   128    203      133       263
//   (28672, 8192)   192    301      249       202
//   (28672, 8192)   256    352      253       194
//   (28672, 8192)   1024*  1373     953       741
//   (4096, 4096)    128    23.8     28.4      49.6    (128-tile: 32 CTAs)
//   (4096, 4096)    192    34.0     27.9      50.0    (256-tile: 32 CTAs, 128-tile: 64)
//   (4096, 4096)    256    34.2     27.9      50.4
//   (4096, 4096)    1024*  104      68.0      53.0    (256-tile: 128 CTAs)
//   (4096, 11008)   128    48.4     54.0      85.3
//   (4096, 11008)   256    74.3     57.5      87.3
//   (11008, 4096)   128    56.0     42.9      51.3
//   (11008, 4096)   256    82.0     65.1      51.1
int wgmma_tile(const WeightOnlyArgs& args, int sms) {
  const auto fills = [&](int tile) { return (args.m + tile - 1) / tile * row_tiles(args) * 3 >= sms; };
  if (args.m > 128 && fills(256)) return 256;
  return fills(128) ? 128 : 64;
}

// Which optional kernels this build holds (CMake defines them where their
// architecture and CUTLASS are available).
#if QGEMM_HAS_WONLY_SM90
constexpr bool kWgmmaBuilt = true;
#else
constexpr bool kWgmmaBuilt = false;
#endif
#if QGEMM_HAS_WONLY_STREAM_SM90
constexpr bool kStreamBuilt = true;
#else
constexpr bool kStreamBuilt = false;
#endif
#if QGEMM_HAS_WONLY_DENSE_SM90
constexpr bool kDenseBuilt = true;
#else
constexpr bool kDenseBuilt = false;
#endif
#if QGEMM_HAS_WONLY_DENSE_SM80
constexpr bool kDenseMmaBuilt = true;
#else
constexpr bool kDenseMmaBuilt = false;
#endif

// sm_90a code runs on compute capability 9.0 only.
bool runs_sm90a(bool built, const CudaDeviceInfo& device) { return built && device.major == 9 && device.minor == 0; }

// Whether the wgmma kernel (wonly_wgmma.cu) is built and runs on a GPU of this compute capability.
bool wgmma_runs_on(const CudaDeviceInfo& device) { return runs_sm90a(kWgmmaBuilt, device); }

// The dense path (wonly_dense.cuh): the weight dequantized once into the
// workspace, then a dense CUTLASS GEMM. Taken from dense_min_tokens tokens
// on, with a workspace that holds ŵ, on sm_90. Its dequantization pass
// (N·K·2.5 bytes for int4) costs a fixed time, so its share falls as 1/M —
// ~30 % of the GEMM at M = 1024, ~15 % at 2048, ~7 % at 4096 — while the
// fused kernels dequantize every weight tile once per token tile. H100 at
// b245dce, against cuBLAS bf16 in one call (`qgemm bench wonly`,
// "<impl>-dense"; bench/results/wonly-h100-dense.json), fused → dense, W4
// g128 plain:
//   M      (28672, 8192)  (4096, 4096)  (11008, 4096)  (4096, 11008)
//   2048   0.82 → 0.84    0.89 → 0.84   0.77 → 0.74    0.92 → 0.78
//   3072   0.93 → 0.91    0.88 → 0.85   0.76 → 0.84    0.78 → 0.79
//   4096   0.91 → 0.92    0.84 → 0.89   0.76 → 0.89    0.88 → 0.94
//   8192   0.94 → 0.94    0.78 → 0.90   0.84 → 0.93    0.88 → 0.96
// W8 per channel (the fused kernels move twice the int4 bytes per tile):
//   2048   0.81 → 0.82    0.84 → 0.83   0.72 → 0.72    0.79 → 0.78
//   3072   0.83 → 0.92    0.82 → 0.86   0.73 → 0.84    0.78 → 0.84
//   4096   0.86 → 0.91    0.77 → 0.85   0.76 → 0.90    0.86 → 0.94
// So int4 from 4096 tokens (faster or equal at every variant and shape
// there, at most 2 % slower at 8192 with bf16 parameters on (28672, 8192);
// 3072 is mixed), int8 from 3072.
// Other GPUs (the CUTLASS 2.x GEMM of wonly_dense_sm80.cu against the
// mma.sync kernel, wonly_mma, whose tiles dequantize as often): from 1024
// tokens. Measured on the H100 running both as sm_80 code (`qgemm bench wonly
// --sweep`, "dense-mma" against the faster of "mma-64" / "mma-128";
// bench/results/wonly-h100-dense-mma-sweep.json), W4 g128 µs:
//   M      (28672, 8192)  (4096, 4096)  (11008, 4096)  (4096, 11008)
//   256    518 → 537      56 → 97       131 → 130      121 → 240
//   1024   1813 → 1288    136 → 94      403 → 271      347 → 238
//   4096   7533 → 4662    542 → 314     1393 → 881     1470 → 922
// (W8 per channel at 1024: 1979 → 1368, 146 → 97, 411 → 276, 377 → 244.)
// Not measured on an A100 or an Ada GPU.
constexpr int64_t kDenseMinTokensInt4 = 4096, kDenseMinTokensInt8 = 3072, kDenseMmaMinTokens = 1024;
int64_t dense_min_tokens(const WeightOnlyArgs& args, bool mma) {
  if (mma) return kDenseMmaMinTokens;
  return args.int4 ? kDenseMinTokensInt4 : kDenseMinTokensInt8;
}

// Whether the Hopper int8 decode kernel (wonly_stream_sm90.cu) is built and runs on a GPU of this
// compute capability.
bool stream_runs_on(const CudaDeviceInfo& device) { return runs_sm90a(kStreamBuilt, device); }

// Whether the dense path's sm_90 form (CUTLASS 3.x) or, `mma`, its CUTLASS
// 2.x form (sm_80+) is built and runs on `device`.
bool dense_runs_on(const CudaDeviceInfo& device, bool mma) {
  return mma ? kDenseMmaBuilt && device.major >= 8 : kDenseBuilt && wgmma_runs_on(device);
}

// Runs the dense path (sm_90: CUTLASS 3.x; `mma`: the CUTLASS 2.x GEMM of
// wonly_dense_sm80.cu); false (nothing launched) where it cannot.
bool run_dense(const WeightOnlyArgs& args, const CudaDeviceInfo& device, bool mma) {
  if (mma) {
#if QGEMM_HAS_WONLY_DENSE_SM80
    return run_wonly_dense_sm80(args);
#endif
  } else {
#if QGEMM_HAS_WONLY_DENSE_SM90
    return args.dtype == DType::kBFloat16 ? run_wonly_dense_bf16(args, device.sm_count)
                                          : run_wonly_dense_fp16(args, device.sm_count);
#endif
  }
  (void)args, (void)device;
  return false;
}

}  // namespace

bool wonly_wgmma_available(int device) { return wgmma_runs_on(cuda_device_info(device)); }
bool wonly_stream_available(int device) { return stream_runs_on(cuda_device_info(device)); }
bool wonly_dense_available(int device) { return dense_runs_on(cuda_device_info(device), false); }
bool wonly_dense_mma_available(int device) { return dense_runs_on(cuda_device_info(device), true); }

int64_t weight_only_dense_workspace_bytes_cuda(int device, int64_t n, int64_t k) {
  const int64_t w_hat = (n * k * 2 + 255) / 256 * 256;
  return std::max(weight_only_workspace_bytes_cuda(device), w_hat);
}

// Room for four 64-token stream-K CTAs per SM, which is also one 256-token
// CTA's slot (128 KiB per SM).
int64_t weight_only_workspace_bytes_cuda(int device) {
  static_assert(4 * wonly::stream_k_partial_bytes(64) == wonly::stream_k_partial_bytes(256), "");
  const int64_t sms = cuda_device_info(device).sm_count;
  return wonly::stream_k_workspace_bytes(4 * sms, wonly::stream_k_partial_bytes(64));
}

namespace {
thread_local int stream_k_override = -1;  // WonlyStreamKOverride; -1: none
}  // namespace

WonlyStreamKOverride::WonlyStreamKOverride(int ctas) : previous_(stream_k_override) {
  if (ctas < 0) throw Error(ErrorKind::kValue, "WonlyStreamKOverride: ctas must be >= 0, got " + std::to_string(ctas));
  stream_k_override = ctas;
}
WonlyStreamKOverride::~WonlyStreamKOverride() { stream_k_override = previous_; }
int stream_k_override_ctas() { return stream_k_override; }

WonlyKernelOverride::WonlyKernelOverride(WonlyKernel kernel, int tile)
    : previous_kernel_(override_kernel), previous_tile_(override_tile) {
  override_kernel = kernel;
  override_tile = tile;
}

WonlyKernelOverride::~WonlyKernelOverride() {
  override_kernel = previous_kernel_;
  override_tile = previous_tile_;
}

void weight_only_mm_cuda(const WeightOnlyArgs& args) {
  CudaDeviceGuard guard(args.device);
  const CudaDeviceInfo device = cuda_device_info(args.device.index);
  const bool wgmma = wgmma_runs_on(device);
  // The dense path: sm_90's GEMM there, the CUTLASS 2.x one on other sm_80+ GPUs.
  const bool dense_workspace =
      args.workspace_bytes >= weight_only_dense_workspace_bytes_cuda(args.device.index, args.n, args.k);
  if (args.m > 16 && (override_kernel == WonlyKernel::kDense || override_kernel == WonlyKernel::kDenseMma)) {
    const bool mma = override_kernel == WonlyKernel::kDenseMma;
    if (override_tile != 0 || !dense_workspace || !dense_runs_on(device, mma) || !run_dense(args, device, mma)) {
      throw Error(ErrorKind::kValue, std::string("WonlyKernelOverride: ") + (mma ? "kDenseMma needs sm_80+" : "kDense needs sm_90") +
                                         ", tile 0, a workspace of weight_only_dense_workspace_bytes and operands "
                                         "its GEMM takes");
    }
    return;
  }
  if (override_kernel == WonlyKernel::kGemv && dense_workspace && dense_runs_on(device, !wgmma) &&
      args.m >= dense_min_tokens(args, !wgmma) && run_dense(args, device, !wgmma)) {
    return;
  }
  WonlyConfig config{};
  for (const WonlyConfig& row : kConfigs) {
    if (args.m > row.max_m || (row.kernel == WonlyKernel::kWgmma && !wgmma)) continue;
    if (row.many_row_tiles && !wgmma32_takes(args, device.sm_count)) continue;
    if (row.int8_stream && (args.int4 || !stream_runs_on(device) ||
                            !wonly::stream_takes(args.n, args.m, args.prepacked, device.sm_count,
                                                 cuda_peak_dram_gbps(args.device.index)))) {
      continue;
    }
    config = row;
    break;
  }
  if (config.kernel == WonlyKernel::kWgmma && config.tile == 0) config.tile = wgmma_tile(args, device.sm_count);
  // The override replaces the table's choice at M > 16, and for the decode
  // kernels (kGemvChunks: one wonly_gemv launch per 8·tile tokens; kStream)
  // at M ≤ 16 too.
  const bool decode_override = override_kernel == WonlyKernel::kGemvChunks || override_kernel == WonlyKernel::kStream;
  if (override_kernel != WonlyKernel::kGemv && (args.m > 16 || decode_override)) {
    if (override_kernel == WonlyKernel::kWgmma && !wgmma) {
      throw Error(ErrorKind::kValue, "weight_only_mm: the wgmma kernel runs on sm_90 only (a build with CUTLASS)");
    }
    if (override_kernel == WonlyKernel::kStream &&
        (args.m > 16 || args.int4 || override_tile != 0 || !stream_runs_on(device))) {
      throw Error(ErrorKind::kValue, "WonlyKernelOverride: kStream runs int8 weights at M <= 16 on sm_90 only, "
                                     "tile 0 (got M=" + std::to_string(args.m) + (args.int4 ? ", int4" : ", int8") +
                                         ", tile " + std::to_string(override_tile) + ")");
    }
    const bool mma_tile = override_tile == 64 || override_tile == 128;
    const bool wgmma_tile = mma_tile || override_tile == 32 || override_tile == 256;
    const bool supported = override_kernel == WonlyKernel::kMma         ? mma_tile
                           : override_kernel == WonlyKernel::kWgmma     ? wgmma_tile
                           : override_kernel == WonlyKernel::kGemvChunks ? override_tile == 2 || override_tile == 4
                                                                        : override_kernel == WonlyKernel::kStream;
    if (!supported) {
      throw Error(ErrorKind::kValue, "WonlyKernelOverride: expected kMma with 64 or 128 tokens, kWgmma with "
                                     "32, 64, 128 or 256, or kGemvChunks with 2 or 4 token blocks, got tile " +
                                     std::to_string(override_tile));
    }
    config.kernel = override_kernel;
    config.tile = override_tile;
  }
  switch (config.kernel) {
    case WonlyKernel::kGemv: launch_wonly_gemv(args, config.tile); break;
    case WonlyKernel::kStream: launch_wonly_stream(args); break;
    case WonlyKernel::kGemvChunks: {
      const int64_t chunk = 8 * config.tile;
      for (int64_t m0 = 0; m0 < args.m; m0 += chunk) {  // views of a and out: no copies
        WeightOnlyArgs part = args;
        part.m = std::min(chunk, args.m - m0);
        part.a = static_cast<const uint16_t*>(args.a) + m0 * args.lda;
        part.out = static_cast<uint16_t*>(args.out) + m0 * args.ldo;
        launch_wonly_gemv(part, part.m <= 8 ? 1 : part.m <= 16 ? 2 : config.tile);
      }
      break;
    }
    case WonlyKernel::kMma:
      check_tensor_core_limits(args);
      launch_wonly_mma(args, config.tile);
      break;
    case WonlyKernel::kWgmma:
      check_tensor_core_limits(args);
      launch_wonly_wgmma(args, config.tile);
      break;
  }
}

void weight_only_prepack_cuda(uint8_t* out, const uint8_t* w, int64_t n, int64_t k,
                              int64_t ld_bytes, bool int4, Device device, Stream stream) {
  CudaDeviceGuard guard(device);
  const PrepackedShape shape = weight_only_prepacked_shape(n, k, int4);
  const int64_t k_tiles = shape.k_tiles;
  const int64_t bytes = shape.row_blocks * k_tiles * shape.tile_bytes;
  cudaStream_t s = as_cuda_stream(stream);
  QGEMM_CUDA_CHECK(cudaMemsetAsync(out, 0, static_cast<size_t>(bytes), s));  // padding
  const int64_t chunks = k / (int4 ? 32 : 16);
  const int64_t total = n * chunks;
  const auto blocks = static_cast<unsigned>(std::min<int64_t>((total + 255) / 256, 65535));
  launch_pdl_kernel(prepack_kernel, dim3(blocks), dim3(256), 0, s, device.index, out, w, n, chunks, ld_bytes,
                    prepacked_addressing(k_tiles));
}

}  // namespace qgemm::detail
