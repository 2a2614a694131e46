// CUDA dispatch of the scaled GEMMs: picks the kernel for the device's
// architecture and the problem from dispatch_table.h, checks what the fast
// kernels need (aligned pointers, leading dimensions), sends outputs their
// 16-byte epilogues cannot store to the same mainloops with narrow stores
// (unaligned_output_kernel), and falls back to the portable tiled kernel for
// everything else — a result, never an error.
// Nothing here allocates or synchronizes: each call enqueues one kernel.
#include <cstdio>
#include <cstdlib>
#include <iterator>

#include "core/cuda_check.h"
#include "core/cuda_launch.cuh"
#include "core/cuda_device_info.h"
#include "core/cuda_dram_bandwidth.h"
#include "gemm/cuda/dispatch_table.h"
#include "gemm/cuda/kernels.h"
#include "gemm/cuda/operand_layout.h"
#include "gemm/cuda/scaled_mm_cuda.h"
#include "gemm/cuda/scaled_mm_fallback.h"

namespace qgemm::detail {
namespace {

// out[n] = azp · Σ_k b[k,n]: one warp per column, int32 (wrapping) arithmetic.
__global__ void azp_adj_kernel(int32_t* out, const int8_t* b, int64_t k, int64_t n, int64_t ldb,
                               int32_t azp) {
  wait_for_preceding_grids();
  allow_dependent_launch();
  const int64_t col = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (col >= n) return;
  int32_t sum = 0;
  for (int64_t i = lane; i < k; i += 32) sum += b[col * ldb + i];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (lane == 0) out[col] = static_cast<int32_t>(static_cast<uint32_t>(azp) * static_cast<uint32_t>(sum));
}

// The Hopper TMA kernels load A and B as operands_aligned (operand_layout.h)
// says and also store D through TMA: a 16-byte aligned base and
// row pitch (ldo a multiple of 8 16-bit elements) and N a multiple of 8 (the
// epilogue's 8-element accesses). TMA clips the last tile along N; the row
// broadcasts load single elements, so the vectors need no alignment.
bool tma_can_take(const ScaledMmArgs& args) {
  return operands_aligned(args) && args.n % 8 == 0 && args.ldo % 8 == 0 && aligned16(args.out);
}

// The mma.sync tiles (CUTLASS 2.x) as tested: N a multiple of 16, 16-byte
// output accesses, and per-channel vectors read 16 bytes at a time
// (sm80_kernel.cuh).
bool sm80_can_take(const ScaledMmArgs& args) {
  return tma_can_take(args) && args.n % 16 == 0 && aligned16(args.bias) && aligned16(args.azp_adj) &&
         (!args.scale_b_per_channel || aligned16(args.scale_b));
}

// Whether `kernel` can take these arguments' layouts (not whether it is built).
bool layout_fits(GemmKernel kernel, const ScaledMmArgs& args) {
  switch (kernel) {
    case GemmKernel::kFallback: return true;
    // A and B loaded 16 bytes at a time (operand_layout.h); the output and
    // the vectors may have any pitch and element alignment.
    case GemmKernel::kSkinny:
    case GemmKernel::kSm90Direct: return operands_aligned(args);
    case GemmKernel::kSm90SkinnyStream: return args.m <= 16 && operands_aligned(args);
    // A and B by TMA (16-byte aligned bases and pitches); D stored element
    // by element, so any output.
    case GemmKernel::kSm90DecodeWgmma:
      return args.m <= 16 && args.input_dtype == DType::kFloat8E4M3 && operands_aligned(args);
    // The swapped decode kernel stores Dᵀ through TMA: D's rows as the
    // columns of a column-major matrix, the same bytes and the same rules.
    case GemmKernel::kSm90Decode: return args.m <= 16 && tma_can_take(args);
    case GemmKernel::kSm90Swapped: return args.m <= 192 && tma_can_take(args);
    case GemmKernel::kSm90SwappedStreamK: return args.m <= kSwappedTokenTilesMaxM && tma_can_take(args);
    case GemmKernel::kSm90SwappedHalves: return swapped_halves_take_m(args.m) && tma_can_take(args);
    case GemmKernel::kSm90SwappedHalvesStreamK: return args.m > 128 && args.m <= 192 && tma_can_take(args);
    case GemmKernel::kSm80Large:
    case GemmKernel::kSm80Small: return sm80_can_take(args);
    default: return is_sm90_tma_kernel(kernel) && tma_can_take(args);
  }
}

// The table's kernel, or where it cannot take the output but the operands
// fit, its narrow-store twin (unaligned_output_kernel), else the fallback.
GemmKernel fit_to_layout(GemmKernel chosen, const ScaledMmArgs& args) {
  if (layout_fits(chosen, args)) return chosen;
  const GemmKernel twin = unaligned_output_kernel(chosen);
  return twin != chosen && layout_fits(twin, args) ? twin : GemmKernel::kFallback;
}

// Runs `kernel` if it is built, fits the device and takes the arguments.
bool try_kernel(GemmKernel kernel, const ScaledMmArgs& args, const CudaDeviceInfo& info) {
  const bool int8 = args.input_dtype == DType::kInt8;
  const bool bf16 = args.out_dtype == DType::kBFloat16;
  if (is_sm90_tma_kernel(kernel)) {
#if QGEMM_HAS_GEMM_SM90
    if (info.major != 9 || !layout_fits(kernel, args)) return false;
    // Stream-K: one launcher per output for int8, precise and fast fp8.
    if (kernel == GemmKernel::kSm90StreamK) {
      return bf16 ? sm90_streamk_bf16(args, info.sm_count) : sm90_streamk_fp16(args, info.sm_count);
    }
    // The one-wave tiles: one launcher per output for all three inputs.
    if (kernel == GemmKernel::kSm90Wide80 || kernel == GemmKernel::kSm90Wide96 ||
        kernel == GemmKernel::kSm90Wide80Pairs || kernel == GemmKernel::kSm90Wide96Pairs) {
      return bf16 ? sm90_one_wave_bf16(kernel, args, info.sm_count) : sm90_one_wave_fp16(kernel, args, info.sm_count);
    }
    // The swapped tiles, whole, in token halves or on the stream-K scheduler: one launcher
    // per output for int8 and precise fp8 (fast fp8 runs precise).
    if (kernel == GemmKernel::kSm90Swapped) {
      return bf16 ? sm90_swapped_bf16(args, info.sm_count) : sm90_swapped_fp16(args, info.sm_count);
    }
    if (kernel == GemmKernel::kSm90SwappedStreamK) {
      return bf16 ? sm90_swapped_streamk_bf16(args, info.sm_count) : sm90_swapped_streamk_fp16(args, info.sm_count);
    }
    if (kernel == GemmKernel::kSm90SwappedHalves) {
      return bf16 ? sm90_swapped_halves_bf16(args, info.sm_count) : sm90_swapped_halves_fp16(args, info.sm_count);
    }
    if (kernel == GemmKernel::kSm90SwappedHalvesStreamK) {
      return bf16 ? sm90_swapped_halves_streamk_bf16(args, info.sm_count)
                  : sm90_swapped_halves_streamk_fp16(args, info.sm_count);
    }
    // The cluster-1×4 tiles: the same.
    if (kernel == GemmKernel::kSm90Thin48 || kernel == GemmKernel::kSm90Wide80x4 ||
        kernel == GemmKernel::kSm90Wide96x4) {
      return bf16 ? sm90_cluster4_bf16(kernel, args, info.sm_count) : sm90_cluster4_fp16(kernel, args, info.sm_count);
    }
    if (int8) return bf16 ? sm90_int8_bf16(kernel, args, info.sm_count) : sm90_int8_fp16(kernel, args, info.sm_count);
    // Fast accumulation: every config on int8's tiles has a fast variant;
    // kSm90Coop128 does not (false: the caller falls back).
    if (args.fp8_fast_accum) {
      return bf16 ? sm90_fp8fast_bf16(kernel, args, info.sm_count) : sm90_fp8fast_fp16(kernel, args, info.sm_count);
    }
    return bf16 ? sm90_fp8_bf16(kernel, args, info.sm_count) : sm90_fp8_fp16(kernel, args, info.sm_count);
#else
    return false;
#endif
  }
  switch (kernel) {
    case GemmKernel::kFallback:
      scaled_mm_fallback_cuda(args);
      return true;
    case GemmKernel::kSkinny:
      if (!int8 && info.major * 10 + info.minor < 89) return false;
      return skinny_gemm(args, info.sm_count);
    case GemmKernel::kSm90Direct:
#if QGEMM_HAS_GEMM_SM90
      // fp8 runs the precise kernel whatever args.fp8_fast_accum says.
      if (info.major != 9 || !layout_fits(kernel, args)) return false;
      return bf16 ? sm90_direct_bf16(args, info.sm_count) : sm90_direct_fp16(args, info.sm_count);
#else
      return false;
#endif
    case GemmKernel::kSm90Decode:
#if QGEMM_HAS_GEMM_SM90
      // fp8 runs the precise kernel whatever args.fp8_fast_accum says.
      if (info.major != 9 || !layout_fits(kernel, args)) return false;
      return bf16 ? sm90_decode_bf16(args, info.sm_count) : sm90_decode_fp16(args, info.sm_count);
#else
      return false;
#endif
    case GemmKernel::kSm90SkinnyStream:
#if QGEMM_HAS_GEMM_SKINNY_SM90
      if (info.major != 9 || !layout_fits(kernel, args)) return false;
      return skinny_stream_sm90(args);
#else
      return false;
#endif
    case GemmKernel::kSm90DecodeWgmma:
#if QGEMM_HAS_GEMM_SKINNY_SM90
      // fp8 runs precise whatever args.fp8_fast_accum says.
      if (info.major != 9 || !layout_fits(kernel, args)) return false;
      return sm90_decode_wgmma(args, info.sm_count);
#else
      return false;
#endif
    case GemmKernel::kSm80Large:
    case GemmKernel::kSm80Small: {
      // sm_80 (int8) and sm_89 (fp8) code runs on every later GPU (through
      // its PTX on sm_90).
      const int arch = info.major * 10 + info.minor;
      if (arch < (int8 ? 80 : 89) || !layout_fits(kernel, args)) return false;
      if (int8) {
#if QGEMM_HAS_GEMM_SM80
        return bf16 ? sm80_int8_bf16(kernel, args) : sm80_int8_fp16(kernel, args);
#endif
      } else {
#if QGEMM_HAS_GEMM_SM89
        return bf16 ? sm89_fp8_bf16(kernel, args) : sm89_fp8_fp16(kernel, args);
#endif
      }
      return false;
    }
    default:  // the sm90 TMA kernels, above
      return false;
  }
}

// The table's choice for this problem on this device (table_kernel,
// dispatch_table.h), fitted to the layout: an output the TMA epilogue cannot
// store goes to the direct-store kernel, whose mainloop is the same wgmma
// one. What scaled_mm_cuda runs where that kernel is built.
GemmChoice choose(const ScaledMmArgs& args, const CudaDeviceInfo& info) {
  const bool int8 = args.input_dtype == DType::kInt8;
  // Stream-K only with room for it (a smaller workspace would make the
  // kernel run whole tiles, which the model's pick does better).
  const bool workspace = args.workspace_bytes >= stream_k_workspace_bytes(info.sm_count);
  const GemmKernel kernel = table_kernel(info.major * 10 + info.minor, int8, args.fp8_fast_accum, args.m, args.n,
                                         args.k, info.sm_count, cuda_peak_dram_gbps(args.device.index), workspace);
  GemmChoice choice{fit_to_layout(kernel, args), args.fp8_fast_accum};
  if (info.major == 9 && !int8 && args.fp8_fast_accum) choice.fp8_fast_accum = !fp8_fast_runs_precise(choice.kernel);
  return choice;
}

}  // namespace

GemmChoice scaled_mm_cuda_choice(const ScaledMmArgs& args) {
  return choose(args, cuda_device_info(args.device.index));
}

GemmKernel scaled_mm_cuda_kernel(const ScaledMmArgs& args) { return scaled_mm_cuda_choice(args).kernel; }

bool scaled_mm_cuda_with(const ScaledMmArgs& args, GemmKernel kernel) {
  if (args.m == 0 || args.n == 0) return true;
  CudaDeviceGuard guard(args.device);
  return try_kernel(kernel, args, cuda_device_info(args.device.index));
}

void scaled_mm_cuda(const ScaledMmArgs& args) {
  if (args.m == 0 || args.n == 0) return;
  CudaDeviceGuard guard(args.device);
  const CudaDeviceInfo info = cuda_device_info(args.device.index);
  const GemmChoice chosen = choose(args, info);
  ScaledMmArgs run = args;
  run.fp8_fast_accum = chosen.fp8_fast_accum;  // false where fp8_fast_runs_precise
  if (try_kernel(chosen.kernel, run, info)) return;
  // What the table's kernel declined for what the table does not see (a
  // workspace CUTLASS finds too small, 32-bit TMA coordinates): its twin.
  const GemmKernel twin = declined_kernel_twin(chosen.kernel);
  if (twin != chosen.kernel && try_kernel(twin, run, info)) return;
  scaled_mm_fallback_cuda(args);
}

int64_t scaled_mm_workspace_bytes_cuda(int device) {
  const CudaDeviceInfo info = cuda_device_info(device);
  return info.major == 9 ? stream_k_workspace_bytes(info.sm_count) : 0;
}

void azp_adj_cuda(int32_t* out, const int8_t* b, int64_t k, int64_t n, int64_t ldb, int32_t azp,
                  Device device, Stream stream) {
  if (n == 0) return;
  CudaDeviceGuard guard(device);
  constexpr int kWarpsPerBlock = 8;
  const auto blocks = static_cast<unsigned>((n + kWarpsPerBlock - 1) / kWarpsPerBlock);
  launch_pdl_kernel(azp_adj_kernel, dim3(blocks), dim3(kWarpsPerBlock * 32), 0, as_cuda_stream(stream), device.index,
                    out, b, k, n, ldb, azp);
}

}  // namespace qgemm::detail
