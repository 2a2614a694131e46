// CUDA quantize: one launch per call, one block per row (token), the scalar
// math of quant/quant_math.h so every bit equals the CPU backend's.
//
// quantize_vectors_kernel (rows readable as 16-byte vectors): a row is
// processed in chunks of blockDim·2 vectors; thread t owns vectors t and
// t + B of a chunk (B = blockDim.x), both loads issued before any use (32 B
// in flight per thread), kept packed in registers:
//
//   row:  | v0 v1 … vB-1 | vB … v2B-1 | next chunk …
//   owner:  t0 t1 … tB-1   t0 … tB-1
//
//   per-tensor  codes straight from the given scale;
//   per-token   the block reduces amax (or min/max) over the row, then
//               quantizes the registers of the first chunk (the launch sizes
//               B so that a row of up to 2048 vectors is one chunk: x is read
//               from DRAM once); longer rows read later chunks again;
//   per-group   the group_size / kVec consecutive lanes holding one group
//               (a power of two ≤ 32, aligned) reduce with shuffles: no
//               shared memory, no barrier.
// quantize_scalar_kernel (any H, stride, alignment or group size): the same
// three modes one element at a time, a warp per group.
#include <algorithm>
#include <cstdint>
#include <string>

#include "core/cuda_check.h"
#include "core/cuda_launch.cuh"
#include "quant/cuda/float_access.cuh"
#include "quant/cuda/quant_cuda.h"
#include "quant/cuda/quant_reduce.cuh"

namespace qgemm::detail {
namespace {

enum class Scope { kTensor, kToken, kGroup };

// ---- Launch configurations -------------------------------------------------
// Vectors per thread in quantize_vectors_kernel: 2 × 16 B in flight per
// thread, in blocks twice as wide as with 4: on the H100 per-group(128)
// int8 went from 71 % to 78 % of copy bandwidth at 4096×4096 (96 → 99 % at
// 16384×8192), the other modes stayed within ±1 %.
constexpr int kVectorsPerThread = 2;
// Its block: ceil(vectors / 2) threads rounded up to a warp, within [32, 1024]
// (1024 × 2 vectors: per-token rows up to 16384 bf16 / 8192 fp32 elements
// are cached in registers).
constexpr int kMinThreads = 32, kMaxThreads = 1024;
// quantize_scalar_kernel's block by hidden size: enough threads to keep
// loads in flight, few enough that short rows waste little.
struct ScalarBlock {
  int64_t max_hidden;
  int threads;
};
constexpr ScalarBlock kScalarBlocks[] = {{1024, 128}, {4096, 256}, {INT64_MAX, 512}};
// -----------------------------------------------------------------------------

int vector_threads(int64_t vectors) {
  const int64_t threads = ((vectors + kVectorsPerThread - 1) / kVectorsPerThread + 31) / 32 * 32;
  return static_cast<int>(std::clamp<int64_t>(threads, kMinThreads, kMaxThreads));
}

int scalar_threads(int64_t hidden) {
  for (const auto& b : kScalarBlocks) {
    if (hidden <= b.max_hidden) return b.threads;
  }
  return kScalarBlocks[0].threads;
}

template <bool kFp8>
__device__ __forceinline__ uint8_t quantize_one(float x, const quant::Int8Code& code) {
  if constexpr (kFp8) {
    return quant::quantize_fp8(x, code.inv_scale);
  } else {
    return static_cast<uint8_t>(quant::quantize_int8(x, code));
  }
}

template <DType kIn, typename Stats>
__device__ __forceinline__ void accumulate(const RawVector& raw, Stats& stats) {
#pragma unroll
  for (int e = 0; e < FloatAccess<kIn>::kVec; ++e) stats.add(element<kIn>(raw, e));
}

// Quantizes one raw vector into kVec bytes at `out` (aligned to kVec).
template <DType kIn, bool kFp8>
__device__ __forceinline__ void quantize_vector(const RawVector& raw, const quant::Int8Code& code, uint8_t* out) {
  constexpr int kVec = FloatAccess<kIn>::kVec;
  ByteVector<kVec> q;
#pragma unroll
  for (int e = 0; e < kVec; ++e) q.bytes[e] = quantize_one<kFp8>(element<kIn>(raw, e), code);
  *reinterpret_cast<ByteVector<kVec>*>(out) = q;
}

template <bool kFp8>
__device__ __forceinline__ quant::Int8Code static_code(const QuantArgs& a) {
  return quant::int8_code(quant::reciprocal(a.scale[0]), a.azp != nullptr ? a.azp[0] : 0, a.narrow_range);
}

template <DType kIn, bool kFp8, Scope kScope, bool kAsymmetric>
__global__ void __launch_bounds__(kMaxThreads) quantize_vectors_kernel(const QuantArgs a) {
  wait_for_preceding_grids();
  allow_dependent_launch();
  constexpr int kVec = FloatAccess<kIn>::kVec;
  using Stats = StatsOf<kAsymmetric>;
  const int64_t row = blockIdx.x;
  const auto* in = static_cast<const typename FloatAccess<kIn>::Storage*>(a.in) + row * a.in_stride;
  uint8_t* out = static_cast<uint8_t*>(a.out) + row * a.out_stride;
  const int vectors = static_cast<int>(a.hidden / kVec);
  const int threads = static_cast<int>(blockDim.x);
  const int chunk = threads * kVectorsPerThread;
  const int t = static_cast<int>(threadIdx.x);

  auto load_chunk = [&](int base, RawVector(&raw)[kVectorsPerThread]) {
#pragma unroll
    for (int j = 0; j < kVectorsPerThread; ++j) {
      const int v = base + t + j * threads;
      raw[j] = v < vectors ? load_raw(in + static_cast<int64_t>(v) * kVec) : RawVector{};
    }
  };
  auto store_chunk = [&](int base, const RawVector(&raw)[kVectorsPerThread], const quant::Int8Code& code) {
#pragma unroll
    for (int j = 0; j < kVectorsPerThread; ++j) {
      const int v = base + t + j * threads;
      if (v < vectors) quantize_vector<kIn, kFp8>(raw[j], code, out + static_cast<int64_t>(v) * kVec);
    }
  };

  if constexpr (kScope == Scope::kTensor) {
    const quant::Int8Code code = static_code<kFp8>(a);
    for (int base = 0; base < vectors; base += chunk) {
      RawVector raw[kVectorsPerThread];
      load_chunk(base, raw);
      store_chunk(base, raw, code);
    }
  } else if constexpr (kScope == Scope::kToken) {
    RawVector first[kVectorsPerThread];
    load_chunk(0, first);
    Stats stats;
#pragma unroll
    for (int j = 0; j < kVectorsPerThread; ++j) accumulate<kIn>(first[j], stats);  // zero padding: neutral
    for (int base = chunk; base < vectors; base += chunk) {
      RawVector raw[kVectorsPerThread];
      load_chunk(base, raw);
#pragma unroll
      for (int j = 0; j < kVectorsPerThread; ++j) accumulate<kIn>(raw[j], stats);
    }
    const GroupCode c = code_of<kFp8>(reduce_block(stats));
    if (t == 0) store_code(a, row * a.scale_row_stride, c);
    const quant::Int8Code code = quant::int8_code(c.inv_scale, c.zero_point, a.narrow_range);
    store_chunk(0, first, code);
    for (int base = chunk; base < vectors; base += chunk) {
      RawVector raw[kVectorsPerThread];
      load_chunk(base, raw);
      store_chunk(base, raw, code);
    }
  } else {
    const int lanes = static_cast<int>(a.group_size) / kVec;  // power of two ≤ 32
    const int lane_shift = __ffs(lanes) - 1;
    for (int base = 0; base < vectors; base += chunk) {
      RawVector raw[kVectorsPerThread];
      load_chunk(base, raw);
#pragma unroll
      for (int j = 0; j < kVectorsPerThread; ++j) {
        const int v = base + t + j * threads;
        Stats stats;
        accumulate<kIn>(raw[j], stats);  // past the row: zeros, whole groups (vectors % lanes == 0)
        stats = reduce_lanes(stats, lanes);
        if (v < vectors) {
          const GroupCode c = code_of<kFp8>(stats);
          if ((v & (lanes - 1)) == 0) store_code(a, row * a.scale_row_stride + (v >> lane_shift) * a.scale_group_stride, c);
          quantize_vector<kIn, kFp8>(raw[j], quant::int8_code(c.inv_scale, c.zero_point, a.narrow_range),
                                     out + static_cast<int64_t>(v) * kVec);
        }
      }
    }
  }
}

template <DType kIn, bool kFp8, Scope kScope, bool kAsymmetric>
__global__ void quantize_scalar_kernel(const QuantArgs a) {
  wait_for_preceding_grids();
  allow_dependent_launch();
  using Access = FloatAccess<kIn>;
  using Stats = StatsOf<kAsymmetric>;
  const int64_t row = blockIdx.x;
  const auto* in = static_cast<const typename Access::Storage*>(a.in) + row * a.in_stride;
  uint8_t* out = static_cast<uint8_t*>(a.out) + row * a.out_stride;
  const int hidden = static_cast<int>(a.hidden);
  const int t = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);

  if constexpr (kScope == Scope::kTensor) {
    const quant::Int8Code code = static_code<kFp8>(a);
    for (int i = t; i < hidden; i += threads) out[i] = quantize_one<kFp8>(Access::load(in + i), code);
  } else if constexpr (kScope == Scope::kToken) {
    Stats stats;
    for (int i = t; i < hidden; i += threads) stats.add(Access::load(in + i));
    const GroupCode c = code_of<kFp8>(reduce_block(stats));
    if (t == 0) store_code(a, row * a.scale_row_stride, c);
    const quant::Int8Code code = quant::int8_code(c.inv_scale, c.zero_point, a.narrow_range);
    for (int i = t; i < hidden; i += threads) out[i] = quantize_one<kFp8>(Access::load(in + i), code);
  } else {
    // A warp per group: lanes stride over its elements.
    const int group_size = static_cast<int>(a.group_size), lane = t % 32;
    for (int g = t / 32; g < a.groups; g += threads / 32) {
      const auto* group_in = in + static_cast<int64_t>(g) * group_size;
      Stats stats;
      for (int i = lane; i < group_size; i += 32) stats.add(Access::load(group_in + i));
      const GroupCode c = code_of<kFp8>(reduce_lanes(stats, 32));
      if (lane == 0) store_code(a, row * a.scale_row_stride + g * a.scale_group_stride, c);
      const quant::Int8Code code = quant::int8_code(c.inv_scale, c.zero_point, a.narrow_range);
      uint8_t* group_out = out + static_cast<int64_t>(g) * group_size;
      for (int i = lane; i < group_size; i += 32) group_out[i] = quantize_one<kFp8>(Access::load(group_in + i), code);
    }
  }
}

// True when every row of `in` is a sequence of 16-byte aligned vectors, every
// row of `out` takes kVec-byte stores, and (per-group) a group is a power of
// two ≤ 32 of whole vectors.
template <DType kIn>
bool vectorizable(const QuantArgs& a) {
  constexpr int vec = FloatAccess<kIn>::kVec;
  const int64_t in_row_bytes = a.in_stride * static_cast<int64_t>(sizeof(typename FloatAccess<kIn>::Storage));
  const bool rows = a.hidden % vec == 0 && is_aligned(a.in, 16) && in_row_bytes % 16 == 0 &&
                    is_aligned(a.out, vec) && a.out_stride % vec == 0;
  if (!rows || a.mode != QuantMode::kDynamicPerGroup) return rows;
  const int64_t lanes = a.group_size / vec;
  return a.group_size % vec == 0 && lanes <= 32 && (lanes & (lanes - 1)) == 0;
}

template <DType kIn, bool kFp8, Scope kScope, bool kAsymmetric>
void launch(const QuantArgs& a, cudaStream_t stream) {
  const auto grid = static_cast<unsigned>(a.tokens);
  if (vectorizable<kIn>(a)) {
    const int threads = vector_threads(a.hidden / FloatAccess<kIn>::kVec);
    launch_pdl_kernel(quantize_vectors_kernel<kIn, kFp8, kScope, kAsymmetric>, dim3(grid), dim3(threads), 0, stream,
                      a.device.index, a);
  } else {
    launch_pdl_kernel(quantize_scalar_kernel<kIn, kFp8, kScope, kAsymmetric>, dim3(grid),
                      dim3(static_cast<unsigned>(scalar_threads(a.hidden))), 0, stream, a.device.index, a);
  }
}

template <DType kIn, bool kFp8>
void dispatch_mode(const QuantArgs& a, cudaStream_t stream) {
  // fp8 is symmetric only (validated); the static mode reads its zero point as given.
  constexpr bool kCanBeAsymmetric = !kFp8;
  switch (a.mode) {
    case QuantMode::kStaticPerTensor: return launch<kIn, kFp8, Scope::kTensor, false>(a, stream);
    case QuantMode::kDynamicPerToken:
      if (kCanBeAsymmetric && a.asymmetric) return launch<kIn, kFp8, Scope::kToken, kCanBeAsymmetric>(a, stream);
      return launch<kIn, kFp8, Scope::kToken, false>(a, stream);
    case QuantMode::kDynamicPerGroup:
      if (kCanBeAsymmetric && a.asymmetric) return launch<kIn, kFp8, Scope::kGroup, kCanBeAsymmetric>(a, stream);
      return launch<kIn, kFp8, Scope::kGroup, false>(a, stream);
  }
}

template <bool kFp8>
void dispatch_dtype(const QuantArgs& a, cudaStream_t stream) {
  switch (a.float_dtype) {
    case DType::kFloat32: return dispatch_mode<DType::kFloat32, kFp8>(a, stream);
    case DType::kFloat16: return dispatch_mode<DType::kFloat16, kFp8>(a, stream);
    default: return dispatch_mode<DType::kBFloat16, kFp8>(a, stream);
  }
}

}  // namespace

void check_cuda_limits(const QuantArgs& a, const char* op) {
  if (a.tokens > 2147483647 || a.hidden > 2147483647 / 16) {
    throw Error(ErrorKind::kValue, std::string(op) + ": [T=" + std::to_string(a.tokens) + ", H=" +
                                       std::to_string(a.hidden) +
                                       "] exceeds the CUDA kernels' limits (T < 2^31 rows, H < 2^27)");
  }
}

void quantize_cuda(const QuantArgs& a) {
  check_cuda_limits(a, "quantize");
  CudaDeviceGuard guard(a.device);
  const auto stream = as_cuda_stream(a.stream);
  if (a.quant_dtype == DType::kFloat8E4M3) dispatch_dtype<true>(a, stream);
  else dispatch_dtype<false>(a, stream);
  QGEMM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace qgemm::detail
