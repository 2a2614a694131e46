// tma_oob_bench.cu -- does TMA zero-fill of out-of-bounds rows slow down loads?
//
// QUESTION
//   In the Hopper int8 GEMM (CUTLASS 3.x, TMA loads), CTAs whose A-operand box
//   (64 or 128 rows x 128 bytes of K, int8, row-major M x K) hangs past the last
//   row of A (M not a multiple of the tile) run slower than expected. One guess
//   is that TMA's zero fill of the out-of-bounds rows is slow. This program times
//   the TMA on its own, with no MMA, to test that guess.
//
// METHOD
//   * 2D int8 tensor map, row-major [R, K] (row stride K bytes, default K = 8192),
//     box = BR rows x 128 bytes (BR = 64 or 128), CU_TENSOR_MAP_SWIZZLE_128B,
//     OOB fill NONE (out-of-bounds elements are written as zeros), L2 promotion 256B.
//   * For each r ("rows past end") the tensor has R = BR*T - r rows (T = 4), so the
//     last row tile (row coordinate BR*(T-1)) has BR - r valid rows and r rows that
//     TMA must zero-fill.
//   * Kernel: one CTA per SM. Warp 0 / lane 0 is the producer: it issues
//     cp.async.bulk.tensor.2d (mbarrier::complete_tx::bytes) into a ring of stages
//     (16 x 8 KB for BR = 64, 8 x 16 KB for BR = 128; 128 KB either way), guarded
//     by full/empty mbarriers. Warp 1 is the consumer: it waits on each full
//     barrier, lane 0 reads one 16-byte word of the stage (XORed into a sink that is
//     written to global memory so nothing is dead) and arrives on the empty barrier.
//     Each CTA loads the box at (row tile, k tile) for every k tile 0..K/128-1 and
//     repeats that `passes` times (default 8). All CTAs read the same rows, so after
//     the warm-up the data is L2-resident, as for A in a GEMM where many CTAs re-read it.
//   * "ctrl" = the same tensor, same kernel, but the box at row tile 0 (fully in bounds).
//   * Timing: cudaEvent around each launch, 5 warm-up launches, median of 21.
//   * Correctness: once per box height, one CTA loads a single partially-OOB box
//     into shared memory pre-filled with 0xAB, copies it to global memory, and the
//     host un-swizzles it (16-byte chunk c of box row y is stored at chunk c ^ (y % 8))
//     and checks valid rows == source and OOB rows == 0. Prints PASS / FAIL.
//
// READING THE TABLE
//   box      rows in the box (64 or 128)
//   past     r = rows of the box beyond the tensor's last row (zero-filled by TMA)
//   valid    BR - r rows that are really read from global memory / L2
//   med_us   median kernel time (all CTAs, all boxes)
//   ns/box   med_us / boxes per CTA: time per box per CTA (the CTAs run concurrently)
//   GB/s box aggregate bytes landed in shared memory, counting the full box
//            (BR*128 bytes) -- the number that matters for feeding the MMA
//   GB/s val aggregate in-bounds bytes only ((BR - r)*128 per box)
//   ctrl_*   same numbers for the fully in-bounds box (row tile 0) of the same tensor
//   ratio    med_us / ctrl_med_us. If the zero fill were slow, ratio would be > 1 and
//            grow with r. ratio ~ 1 (or < 1: fewer bytes come from L2) means OOB
//            fill is not the bottleneck and the slowdown is elsewhere.
//
// BUILD / RUN (needs sm_90 / sm_90a, i.e. H100 / H200)
//   nvcc -std=c++17 -O3 -arch=sm_90a -o /tmp/tma_oob_bench experiments/tma_oob_bench.cu -lcuda
//   /tmp/tma_oob_bench [--passes N] [--k K] [--stagger] [--producer-only]
//     --passes N  repeats of the K sweep per CTA (default 8)
//     --k K       K in bytes (multiple of 128, default 8192)
//     --stagger   CTA b starts its K sweep at k tile b % (K/128) instead of 0, so the
//                 CTAs do not all hit the same L2 lines at the same moment
//     --producer-only  no consumer warp: the producer reuses a stage once its
//                 previous box landed, so the time is the TMA's alone (the
//                 consumer's wait → read → arrive chain can bound the default run)

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// ---------------------------------------------------------------- error checks

#define CUDA_CHECK(call)                                                        \
  do {                                                                          \
    cudaError_t err_ = (call);                                                  \
    if (err_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "CUDA error %s (%d) at %s:%d: %s\n",                 \
                   cudaGetErrorName(err_), static_cast<int>(err_), __FILE__,    \
                   __LINE__, cudaGetErrorString(err_));                         \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

#define CU_CHECK(call)                                                          \
  do {                                                                          \
    CUresult res_ = (call);                                                     \
    if (res_ != CUDA_SUCCESS) {                                                 \
      std::fprintf(stderr, "CUDA driver error %d at %s:%d: %s\n",               \
                   static_cast<int>(res_), __FILE__, __LINE__, #call);          \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

// ---------------------------------------------------------------- constants

constexpr int kBoxCols = 128;          // bytes of K per box (= 128B swizzle span)
constexpr int kRingBytes = 128 * 1024; // shared-memory ring, split into stages
constexpr int kMaxStages = 16;
constexpr int kRowTiles = 4;           // T: tensor has BR*T - r rows
constexpr int kWarmup = 5;
constexpr int kTimed = 21;

// ---------------------------------------------------------------- PTX helpers

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count)
               : "memory");
}

// Make mbarrier.init visible to other threads and to the async (TMA) proxy.
__device__ __forceinline__ void mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// Order this thread's generic-proxy shared-memory writes before later
// async-proxy (TMA) accesses.
__device__ __forceinline__ void fence_proxy_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
               "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

// Spin until the phase with the given parity has completed.
// (On a freshly initialised barrier, parity 1 counts as already completed.)
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  uint32_t done;
  do {
    asm volatile(
        "{\n\t"
        ".reg .pred p;\n\t"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
        "selp.u32 %0, 1, 0, p;\n\t"
        "}"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}

__device__ __forceinline__ void prefetch_tensormap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map))
               : "memory");
}

// 2D tiled TMA load: box at (col = c0 [bytes of K], row = c1) -> smem dst,
// completion signalled on mbarrier bar as transaction bytes.
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map,
                                            int32_t c0, int32_t c1, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}

// Dynamic shared memory, rounded up to 1024 bytes (required by 128B swizzle).
__device__ __forceinline__ uint8_t* aligned_dyn_smem() {
  extern __shared__ __align__(1024) uint8_t dyn_smem[];
  uint32_t a = smem_addr(dyn_smem);
  uint32_t pad = ((a + 1023u) & ~1023u) - a;
  return dyn_smem + pad;
}

// ---------------------------------------------------------------- kernels

// Block = 64 threads: warp 0 lane 0 = TMA producer, warp 1 = consumer.
__global__ void __launch_bounds__(64, 1)
tma_stream_kernel(const __grid_constant__ CUtensorMap map, int row_coord,
                  int box_bytes, int stages, int k_tiles, int passes, int stagger,
                  int producer_only, uint4* __restrict__ sink_out) {
  __shared__ __align__(8) uint64_t full_bar[kMaxStages];
  __shared__ __align__(8) uint64_t empty_bar[kMaxStages];
  uint8_t* ring = aligned_dyn_smem();
  const uint32_t ring_s = smem_addr(ring);

  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;

  if (threadIdx.x == 0) {
    prefetch_tensormap(&map);
    for (int s = 0; s < stages; ++s) {
      mbar_init(smem_addr(&full_bar[s]), 1);   // producer's arrive.expect_tx
      mbar_init(smem_addr(&empty_bar[s]), 1);  // consumer lane 0's arrive
    }
    mbar_init_fence();
  }
  __syncthreads();

  const int total = k_tiles * passes;
  const int k0 = stagger ? static_cast<int>(blockIdx.x % k_tiles) : 0;

  if (warp == 0) {
    if (lane == 0) {
      for (int i = 0; i < total; ++i) {
        const int s = i % stages;
        const uint32_t phase = (i / stages) & 1;
        const uint32_t fb = smem_addr(&full_bar[s]);
        if (producer_only) {
          // No consumer: the slot is free once its previous box landed, so
          // the loop measures the TMA alone (up to `stages` boxes in flight).
          if (i >= stages) mbar_wait(fb, phase ^ 1);
        } else {
          mbar_wait(smem_addr(&empty_bar[s]), phase ^ 1);  // slot free?
        }
        mbar_arrive_expect_tx(fb, box_bytes);
        const int kt = (k0 + i) % k_tiles;
        tma_load_2d(ring_s + s * box_bytes, &map, kt * kBoxCols, row_coord, fb);
      }
    }
    if (producer_only && lane == 0) {  // drain the last boxes before the CTA exits
      for (int i = total > stages ? total - stages : 0; i < total; ++i) {
        mbar_wait(smem_addr(&full_bar[i % stages]), (i / stages) & 1);
      }
    }
  } else if (!producer_only) {
    uint4 sink = make_uint4(0, 0, 0, 0);
    for (int i = 0; i < total; ++i) {
      const int s = i % stages;
      const uint32_t phase = (i / stages) & 1;
      mbar_wait(smem_addr(&full_bar[s]), phase);  // data landed?
      if (lane == 0) {
        // Touch one 16-byte word (varying position) so the load is not dead.
        const uint4 v = *reinterpret_cast<const uint4*>(ring + s * box_bytes +
                                                        (i % (box_bytes / 16)) * 16);
        sink.x ^= v.x; sink.y ^= v.y; sink.z ^= v.z; sink.w ^= v.w;
      }
      __syncwarp();
      if (lane == 0) mbar_arrive(smem_addr(&empty_bar[s]));  // release slot
    }
    if (lane == 0) sink_out[blockIdx.x] = sink;
  }
}

// One CTA: load one box into 0xAB-filled smem and copy the raw (swizzled)
// shared-memory image to global memory.
__global__ void tma_verify_kernel(const __grid_constant__ CUtensorMap map, int col,
                                  int row, int box_bytes, uint8_t* __restrict__ out) {
  __shared__ __align__(8) uint64_t bar;
  uint8_t* buf = aligned_dyn_smem();
  for (int i = threadIdx.x; i < box_bytes; i += blockDim.x) buf[i] = 0xAB;
  fence_proxy_async_smem();
  if (threadIdx.x == 0) {
    mbar_init(smem_addr(&bar), 1);
    mbar_init_fence();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbar_arrive_expect_tx(smem_addr(&bar), box_bytes);
    tma_load_2d(smem_addr(buf), &map, col, row, smem_addr(&bar));
  }
  mbar_wait(smem_addr(&bar), 0);
  for (int i = threadIdx.x; i < box_bytes; i += blockDim.x) out[i] = buf[i];
}

// ---------------------------------------------------------------- host side

using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                   const cuuint64_t*, const cuuint64_t*,
                                   const cuuint32_t*, const cuuint32_t*,
                                   CUtensorMapInterleave, CUtensorMapSwizzle,
                                   CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

static EncodeTiledFn get_encode_fn() {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                              cudaEnableDefault, &q));
  if (q != cudaDriverEntryPointSuccess || fn == nullptr) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled entry point not found\n");
    std::exit(1);
  }
  return reinterpret_cast<EncodeTiledFn>(fn);
}

static CUtensorMap make_map(EncodeTiledFn encode, void* base, uint64_t rows, uint64_t k,
                            uint32_t box_rows) {
  CUtensorMap map;
  std::memset(&map, 0, sizeof(map));
  const cuuint64_t dims[2] = {k, rows};        // innermost (K) first
  const cuuint64_t strides[1] = {k};           // bytes between rows
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(kBoxCols), box_rows};
  const cuuint32_t estr[2] = {1, 1};
  CU_CHECK(encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, base, dims, strides, box, estr,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}

static inline uint8_t pattern(uint64_t row, uint64_t col) {
  return static_cast<uint8_t>((row * 131u + col * 7u) % 251u + 1u);  // never 0
}

struct Ctx {
  EncodeTiledFn encode;
  uint8_t* d_a;
  uint4* d_sink;
  int num_sms;
  int k;
  int passes;
  int stagger;
  int producer_only;
};

// Median time in microseconds of the streaming kernel.
static float time_stream(const Ctx& c, const CUtensorMap& map, int row_coord,
                         int box_rows) {
  const int box_bytes = box_rows * kBoxCols;
  const int stages = std::min(kMaxStages, kRingBytes / box_bytes);
  const int k_tiles = c.k / kBoxCols;
  const size_t smem = static_cast<size_t>(stages) * box_bytes + 1024;

  cudaEvent_t e0, e1;
  CUDA_CHECK(cudaEventCreate(&e0));
  CUDA_CHECK(cudaEventCreate(&e1));
  std::vector<float> ts;
  for (int it = 0; it < kWarmup + kTimed; ++it) {
    CUDA_CHECK(cudaEventRecord(e0));
    tma_stream_kernel<<<c.num_sms, 64, smem>>>(map, row_coord, box_bytes, stages,
                                               k_tiles, c.passes, c.stagger, c.producer_only, c.d_sink);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(e1));
    CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0.f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    if (it >= kWarmup) ts.push_back(ms * 1000.f);
  }
  CUDA_CHECK(cudaEventDestroy(e0));
  CUDA_CHECK(cudaEventDestroy(e1));
  std::sort(ts.begin(), ts.end());
  return ts[ts.size() / 2];
}

// Load the last (partial) row tile of an R = box_rows*T - r tensor at k tile 1
// and check zeros / source bytes after un-swizzling.
static bool verify(const Ctx& c, int box_rows, int r) {
  const int box_bytes = box_rows * kBoxCols;
  const uint64_t rows = static_cast<uint64_t>(box_rows) * kRowTiles - r;
  const int row0 = box_rows * (kRowTiles - 1);
  const int col0 = (c.k / kBoxCols > 1) ? kBoxCols : 0;
  CUtensorMap map = make_map(c.encode, c.d_a, rows, c.k, box_rows);

  uint8_t* d_out = nullptr;
  CUDA_CHECK(cudaMalloc(&d_out, box_bytes));
  tma_verify_kernel<<<1, 128, box_bytes + 1024>>>(map, col0, row0, box_bytes, d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint8_t> h(box_bytes);
  CUDA_CHECK(cudaMemcpy(h.data(), d_out, box_bytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(d_out));

  long bad = 0;
  for (int y = 0; y < box_rows; ++y) {
    const bool in_bounds = static_cast<uint64_t>(row0 + y) < rows;
    for (int x = 0; x < kBoxCols; ++x) {
      const int chunk = x / 16, byte = x % 16;
      const int off = y * kBoxCols + ((chunk ^ (y % 8)) * 16) + byte;  // 128B swizzle
      const uint8_t want = in_bounds ? pattern(row0 + y, col0 + x) : 0;
      if (h[off] != want) {
        if (bad < 5)
          std::printf("  mismatch box row %d col %d (%s): got 0x%02x want 0x%02x\n", y,
                      x, in_bounds ? "valid" : "OOB", h[off], want);
        ++bad;
      }
    }
  }
  std::printf("verify box %3d rows, %3d past end (tensor %llu rows, box row %d, col %d): "
              "%s (%ld bad bytes)\n",
              box_rows, r, static_cast<unsigned long long>(rows), row0, col0,
              bad ? "FAIL" : "PASS", bad);
  return bad == 0;
}

static void run_table(const Ctx& c, int box_rows, const std::vector<int>& past) {
  const int box_bytes = box_rows * kBoxCols;
  const int k_tiles = c.k / kBoxCols;
  const double boxes_per_cta = static_cast<double>(k_tiles) * c.passes;
  const double boxes_total = boxes_per_cta * c.num_sms;

  std::printf("\nbox %d x %d B, %d stages, %d CTAs, %.0f boxes/CTA\n", box_rows,
              kBoxCols, std::min(kMaxStages, kRingBytes / box_bytes), c.num_sms,
              boxes_per_cta);
  std::printf("%4s %5s %5s | %8s %7s %8s %8s | %8s %7s %8s | %6s\n", "box", "past",
              "valid", "med_us", "ns/box", "GB/s_box", "GB/s_val", "ctrl_us",
              "ctrl_ns", "ctrl_GBs", "ratio");
  for (int r : past) {
    const uint64_t rows = static_cast<uint64_t>(box_rows) * kRowTiles - r;
    CUtensorMap map = make_map(c.encode, c.d_a, rows, c.k, box_rows);
    const float t = time_stream(c, map, box_rows * (kRowTiles - 1), box_rows);
    const float tc = time_stream(c, map, 0, box_rows);
    const int valid = box_rows - r;
    const double gbs_box = boxes_total * box_bytes / (t * 1e3);       // bytes/us/1e3
    const double gbs_val = boxes_total * valid * kBoxCols / (t * 1e3);
    const double gbs_ctrl = boxes_total * box_bytes / (tc * 1e3);
    std::printf("%4d %5d %5d | %8.2f %7.2f %8.1f %8.1f | %8.2f %7.2f %8.1f | %6.3f\n",
                box_rows, r, valid, t, t * 1e3 / boxes_per_cta, gbs_box, gbs_val, tc,
                tc * 1e3 / boxes_per_cta, gbs_ctrl, t / tc);
  }
}

int main(int argc, char** argv) {
  Ctx c{};
  c.k = 8192;
  c.passes = 8;
  c.stagger = 0;
  c.producer_only = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--passes") && i + 1 < argc) {
      c.passes = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--k") && i + 1 < argc) {
      c.k = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--stagger")) {
      c.stagger = 1;
    } else if (!std::strcmp(argv[i], "--producer-only")) {
      c.producer_only = 1;
    } else {
      std::fprintf(stderr, "usage: %s [--passes N] [--k K] [--stagger] [--producer-only]\n", argv[0]);
      return 2;
    }
  }
  if (c.k < kBoxCols || c.k % kBoxCols != 0 || c.passes < 1) {
    std::fprintf(stderr, "need K a positive multiple of %d and passes >= 1\n", kBoxCols);
    return 2;
  }

  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  if (prop.major < 9) {
    std::fprintf(stderr, "needs sm_90 (TMA); device is sm_%d%d\n", prop.major,
                 prop.minor);
    return 1;
  }
  c.num_sms = prop.multiProcessorCount;
  std::printf("device %s (sm_%d%d, %d SMs, L2 %d MB), K = %d, passes = %d, stagger = %d\n",
              prop.name, prop.major, prop.minor, c.num_sms, prop.l2CacheSize >> 20, c.k,
              c.passes, c.stagger);

  c.encode = get_encode_fn();

  // Largest tensor: 128 * T rows. Smaller ones reuse the same allocation.
  const uint64_t max_rows = 128ull * kRowTiles;
  const size_t bytes = max_rows * static_cast<size_t>(c.k);
  std::vector<uint8_t> h_a(bytes);
  for (uint64_t y = 0; y < max_rows; ++y)
    for (int x = 0; x < c.k; ++x) h_a[y * c.k + x] = pattern(y, x);
  CUDA_CHECK(cudaMalloc(&c.d_a, bytes));
  CUDA_CHECK(cudaMemcpy(c.d_a, h_a.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMalloc(&c.d_sink, sizeof(uint4) * c.num_sms));

  const int max_smem = kRingBytes + 1024;
  CUDA_CHECK(cudaFuncSetAttribute(tma_stream_kernel,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, max_smem));
  CUDA_CHECK(cudaFuncSetAttribute(tma_verify_kernel,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, max_smem));

  bool ok = verify(c, 64, 24);
  ok = verify(c, 128, 96) && ok;

  run_table(c, 64, {0, 1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 60, 62, 63});
  run_table(c, 128, {0, 1, 32, 64, 96, 120, 127});

  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaFree(c.d_sink));
  CUDA_CHECK(cudaFree(c.d_a));
  std::printf("\nverification: %s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
