// CUDA kv_cache_write: one warp per (token, kv head), key then value. A
// quantized cache takes the warp's amax of the head vector (fmaxf: any order
// gives the same bits) and the codes through kv_cache_math.h, so codes and
// scales equal the CPU backend's; a 16-bit cache is a copy. The op moves
// T · kv_heads · head_dim elements, small beside the attention that reads
// them, so it stays one simple kernel for every head_dim, stride and
// alignment.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <limits>
#include <string>

#include "core/cuda_check.h"
#include "core/cuda_launch.cuh"
#include "kvcache/cuda/kv_cache_cuda.h"
#include "kvcache/kv_cache_math.h"
#include "quant/cuda/float_access.cuh"

namespace qgemm::detail {
namespace {

constexpr int kWarpsPerBlock = 4;

struct WriteParams {
  const void* src[2];  // key, value
  int64_t token_stride[2], head_stride[2];
  void* pool[2];
  float* scales[2];
  const void* slot_mapping;
  bool slot_mapping_int64;
  int64_t tokens, kv_heads, head_dim, slots;
};

template <DType kInput, DType kCache>
__global__ void __launch_bounds__(kWarpsPerBlock * 32) kv_cache_write_kernel(WriteParams p) {
  using In = typename FloatAccess<kInput>::Storage;
  wait_for_preceding_grids();
  allow_dependent_launch();
  const int lane = threadIdx.x % 32;
  const int64_t pair = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (pair >= p.tokens * p.kv_heads) return;
  const int64_t t = pair / p.kv_heads, h = pair % p.kv_heads;
  const int64_t slot = p.slot_mapping_int64 ? static_cast<const int64_t*>(p.slot_mapping)[t]
                                            : static_cast<const int32_t*>(p.slot_mapping)[t];
  if (slot < 0 || slot >= p.slots) return;  // padding, or outside the pool
  const int64_t at = slot * p.kv_heads + h;
  for (int which = 0; which < 2; ++which) {
    const In* src = static_cast<const In*>(p.src[which]) + t * p.token_stride[which] + h * p.head_stride[which];
    if constexpr (kCache == DType::kFloat16 || kCache == DType::kBFloat16) {
      In* dst = static_cast<In*>(p.pool[which]) + at * p.head_dim;
      for (int64_t d = lane; d < p.head_dim; d += 32) dst[d] = src[d];
    } else {
      constexpr bool kFp8 = kCache == DType::kFloat8E4M3;
      quant::AbsMax amax;
      for (int64_t d = lane; d < p.head_dim; d += 32) amax.add(FloatAccess<kInput>::load(src + d));
      for (int offset = 16; offset > 0; offset /= 2) {
        amax.amax = fmaxf(amax.amax, __shfl_xor_sync(0xffffffffu, amax.amax, offset));
      }
      const quant::GroupCode code = quant::code_of(amax, kv::cache_qmax(kFp8));
      uint8_t* dst = static_cast<uint8_t*>(p.pool[which]) + at * p.head_dim;
      for (int64_t d = lane; d < p.head_dim; d += 32) {
        dst[d] = kv::quantize_code(FloatAccess<kInput>::load(src + d), code.inv_scale, kFp8);
      }
      if (lane == 0) p.scales[which][at] = code.scale;
    }
  }
}

template <DType kInput>
void launch_for_cache(const KvWriteArgs& args, const WriteParams& params, dim3 grid, cudaStream_t stream) {
  const int device = args.device.index;
  switch (args.cache.dtype) {
    case DType::kInt8:
      launch_pdl_kernel(kv_cache_write_kernel<kInput, DType::kInt8>, grid, dim3(kWarpsPerBlock * 32), 0, stream, device,
                        params);
      break;
    case DType::kFloat8E4M3:
      launch_pdl_kernel(kv_cache_write_kernel<kInput, DType::kFloat8E4M3>, grid, dim3(kWarpsPerBlock * 32), 0, stream,
                        device, params);
      break;
    default:  // the keys' own 16-bit dtype (validated)
      launch_pdl_kernel(kv_cache_write_kernel<kInput, kInput>, grid, dim3(kWarpsPerBlock * 32), 0, stream, device,
                        params);
      break;
  }
}

}  // namespace

void kv_cache_write_cuda(const KvWriteArgs& args) {
  const int64_t pairs = args.tokens * args.cache.kv_heads;
  const int64_t blocks = (pairs + kWarpsPerBlock - 1) / kWarpsPerBlock;
  if (blocks > std::numeric_limits<int32_t>::max()) {
    throw Error(ErrorKind::kValue, "key: T · kv_heads = " + std::to_string(pairs) + " exceeds the CUDA grid");
  }
  CudaDeviceGuard guard(args.device);
  WriteParams params{};
  params.src[0] = args.key;
  params.src[1] = args.value;
  params.token_stride[0] = args.key_token_stride;
  params.token_stride[1] = args.value_token_stride;
  params.head_stride[0] = args.key_head_stride;
  params.head_stride[1] = args.value_head_stride;
  params.pool[0] = args.cache.key;
  params.pool[1] = args.cache.value;
  params.scales[0] = args.cache.key_scale;
  params.scales[1] = args.cache.value_scale;
  params.slot_mapping = args.slot_mapping;
  params.slot_mapping_int64 = args.slot_mapping_int64;
  params.tokens = args.tokens;
  params.kv_heads = args.cache.kv_heads;
  params.head_dim = args.cache.head_dim;
  params.slots = args.cache.slots();
  const dim3 grid(static_cast<unsigned>(blocks));
  const cudaStream_t stream = as_cuda_stream(args.stream);
  if (args.input_dtype == DType::kBFloat16) {
    launch_for_cache<DType::kBFloat16>(args, params, grid, stream);
  } else {
    launch_for_cache<DType::kFloat16>(args, params, grid, stream);
  }
}

}  // namespace qgemm::detail
