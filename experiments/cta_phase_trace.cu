// cta_phase_trace.cu — where a one-wave CTA of the int8 128×96 pair tile
// spends its life (docs/gemm.md, "The epilogue's vectors, loaded one after
// the other": the ~1 µs that qgemm's pair tile takes over cuBLASLt fp8's
// kernel of the same grid at 256×6144×128).
//
// The kernel is qgemm's (sm90_kernel.cuh's Epilogue tree and mainloop, the
// OneWave<96, 2, 1> config) with three probes that change nothing it computes:
// - the kernel class is wrapped so that every warp stamps its entry and exit;
// - the mainloop is wrapped to stamp load_init(), the producer's first load()
//   and the consumers' mma() and mma_tail();
// - the bias node (TRACE_STAGED below: the library's staged row vector, or
//   CUTLASS's row broadcast) has callbacks that stamp when the epilogue
//   builds them (the mainloop is done), after begin() (with CUTLASS's
//   broadcast: the row vectors are in shared memory; staged, begin() does
//   nothing and the first subtile's wait brings them), at each subtile (and
//   inside subtile 1) and at end().
// Each stamp is clock64() of the warp's SM (exact within a CTA) plus, at
// entry, %globaltimer (to line the CTAs up against each other). Before each
// traced launch a 512 MB memset evicts L2, as the bench's rotated inputs do.
//
// Build (sm_90a, from the repository root, after scripts/setup.sh):
//   nvcc -std=c++17 -O3 -arch=sm_90a --expt-relaxed-constexpr -DNDEBUG \
//     -DCUTLASS_ENABLE_GDC_FOR_SM90 -Iinclude -Isrc -I.deps/cutlass/include \
//     -I.deps/cutlass/tools/util/include experiments/cta_phase_trace.cu -o cta_phase_trace
// (add -DTRACE_STAGED=0 for CUTLASS's broadcasts instead of the staged vectors)
// Run: ./cta_phase_trace [M N K [warm]] (default 256 6144 128; warm: no L2
// flush between launches, so the inputs, vectors and parameters may hit L2).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gemm/cuda/sm90_kernel.cuh"

// 1: the library's pair tile as shipped, its vectors staged by the epilogue
// load warp during the mainloop; 0: CUTLASS's broadcasts, which read them
// after it (the kernel of the tables in docs/gemm.md up to 2026-12-02).
#ifndef TRACE_STAGED
#define TRACE_STAGED 1
#endif

namespace trace {

constexpr int kMaxCtas = 264, kWarps = 12;
enum Event {
  kEntryTimer, kEntry, kInitStart, kInitEnd, kLoadStart, kMmaStart, kMmaEnd, kMmaTailEnd, kEpilogueBuilt, kVectorsStaged,
  kSubtile1, kSubtile2, kSubtileLast, kEpilogueEnd, kExit,
  kMidPrevisit, kMidPostreduce, kMidTmaStore, kMidEndLoop, kEvents
};
__device__ unsigned long long stamps[kMaxCtas][kWarps][kEvents];

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// Lane 0 of each warp records `value` as its `event`.
__device__ __forceinline__ void record(Event event, unsigned long long value) {
  if (threadIdx.x % 32 != 0) return;
  const int cta = blockIdx.x + gridDim.x * blockIdx.y;
  if (cta < kMaxCtas) stamps[cta][threadIdx.x / 32][event] = value;
}
__device__ __forceinline__ void stamp(Event event) { record(event, clock64()); }

// The library's bias node (CUTLASS's row broadcast, or the staged row
// vector of sm90_staged_vectors.cuh), stamping the epilogue's phases.
template <class Base>
struct StampedBias : Base {
  using Base::Base;
  template <class BaseCallbacks>
  struct Callbacks : BaseCallbacks {
    CUTLASS_DEVICE explicit Callbacks(BaseCallbacks const& base) : BaseCallbacks(base) { stamp(kEpilogueBuilt); }
    CUTLASS_DEVICE void begin() {
      BaseCallbacks::begin();
      stamp(kVectorsStaged);
    }
    CUTLASS_DEVICE void begin_loop(int epi_m, int epi_n) {
      if (epi_m + epi_n == 1) stamp(kSubtile1);
      if (epi_m + epi_n == 2) stamp(kSubtile2);
      BaseCallbacks::begin_loop(epi_m, epi_n);
    }
    CUTLASS_DEVICE void end_loop(int epi_m, int epi_n) {
      BaseCallbacks::end_loop(epi_m, epi_n);
      stamp(kSubtileLast);  // the last one stamped is the last subtile's
      if (epi_m + epi_n == 1) stamp(kMidEndLoop);
    }
    // Inside subtile 1 (the steady state): before its visits, after its
    // results are in shared memory, after the fence, barrier and TMA store
    // issue (end_loop then follows the wait for a free store buffer).
    CUTLASS_DEVICE void previsit(int epi_m, int epi_n, int load_iteration, bool is_producer_load_needed) {
      if (epi_m + epi_n == 1) stamp(kMidPrevisit);
      BaseCallbacks::previsit(epi_m, epi_n, load_iteration, is_producer_load_needed);
    }
    CUTLASS_DEVICE void postreduce(int epi_m, int epi_n, int store_iteration, bool issue_smem_store) {
      BaseCallbacks::postreduce(epi_m, epi_n, store_iteration, issue_smem_store);
      if (epi_m + epi_n == 1) stamp(kMidPostreduce);
    }
    CUTLASS_DEVICE void tma_store(int epi_m, int epi_n, int store_iteration, bool issue_tma_store) {
      BaseCallbacks::tma_store(epi_m, epi_n, store_iteration, issue_tma_store);
      if (epi_m + epi_n == 1) stamp(kMidTmaStore);
    }
    CUTLASS_DEVICE void end() {
      BaseCallbacks::end();
      stamp(kEpilogueEnd);
    }
  };
  template <bool ReferenceSrc, class... Args>
  CUTLASS_DEVICE auto get_consumer_store_callbacks(cutlass::epilogue::fusion::ConsumerStoreArgs<Args...> const& args) {
    auto base = Base::template get_consumer_store_callbacks<ReferenceSrc>(args);
    return Callbacks<decltype(base)>(base);
  }
};

// The mainloop, stamping when the producer starts issuing loads and when the
// consumers enter and leave the MMA loop (entering it, they first wait for
// the first k-tile's data).
template <class Base>
struct StampedMainloop : Base {
  // Called by every warp before the cluster barrier's wait.
  template <class... Args>
  CUTLASS_DEVICE decltype(auto) load_init(Args&&... args) {
    stamp(kInitStart);
    auto inputs = Base::load_init(static_cast<Args&&>(args)...);
    stamp(kInitEnd);
    return inputs;
  }
  template <class... Args>
  CUTLASS_DEVICE decltype(auto) load(Args&&... args) {
    stamp(kLoadStart);
    return Base::load(static_cast<Args&&>(args)...);
  }
  template <class... Args>
  CUTLASS_DEVICE void mma(Args&&... args) {
    stamp(kMmaStart);
    Base::mma(static_cast<Args&&>(args)...);
    stamp(kMmaEnd);
  }
  template <class... Args>
  CUTLASS_DEVICE void mma_tail(Args&&... args) {
    Base::mma_tail(static_cast<Args&&>(args)...);
    stamp(kMmaTailEnd);
  }
};

template <class Base>
struct Stamped : Base {
  CUTLASS_DEVICE void operator()(typename Base::Params const& params, char* smem) {
    record(kEntryTimer, global_ns());
    stamp(kEntry);
    Base::operator()(params, smem);
    stamp(kExit);
  }
};

using namespace qgemm::detail;
using namespace qgemm::detail::sm90;
using Config = OneWave<96, 2, 1, TRACE_STAGED != 0>;
using Output = cutlass::bfloat16_t;
// The library's kernel for this config: its epilogue tree, mainloop and arguments.
using Library = Kernel<Config, int8_t, Output>;
using Tree0 = Library::Tree;
using Bias = StampedBias<Tree0::Bias>;
using Tree = fusion::Sm90EVT<fusion::Sm90Compute<evt::FusedMultiplyAdd, Output, float, kRound>, Tree0::ScaleA,
                             Tree0::ScaledByB, Bias>;
using Epi = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Config::TileShape, Config::ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, int32_t, float, void, cutlass::layout::RowMajor, 8, Output,
    cutlass::layout::RowMajor, 8, Config::EpilogueSchedule, Tree>::CollectiveOp;
// The library's mainloop is carved out for the same epilogue storage: the stamped node adds none.
static_assert(sizeof(typename Epi::SharedStorage) == sizeof(typename Library::CollectiveEpilogue::SharedStorage));
using Plain = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, StampedMainloop<Library::CollectiveMainloop>, Epi,
                                                   cutlass::gemm::PersistentScheduler>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Stamped<Plain>>;

}  // namespace trace

#define CHECK(x) QGEMM_CUDA_CHECK(x)  // throws qgemm::Error with the call and its location

__global__ void fill(unsigned char* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned x = unsigned(i) * 2654435761u + seed;
    p[i] = (x >> 13) & 0x3f;  // small positive bytes: int8 in [0, 63], floats and bf16 of modest size
  }
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

int main(int argc, char** argv) {
  using namespace trace;
  const int m = argc > 3 ? std::atoi(argv[1]) : 256, n = argc > 3 ? std::atoi(argv[2]) : 6144,
            k = argc > 3 ? std::atoi(argv[3]) : 128;
  const bool flush_l2 = !(argc > 4 && std::strcmp(argv[4], "warm") == 0);
  int sms = 0, clock_khz = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  void *a, *b, *scale_a, *scale_b, *bias, *out, *flush;
  const size_t flush_bytes = size_t(512) << 20;
  CHECK(cudaMalloc(&a, size_t(m) * k));
  CHECK(cudaMalloc(&b, size_t(n) * k));
  CHECK(cudaMalloc(&scale_a, m * 4));
  CHECK(cudaMalloc(&scale_b, n * 4));
  CHECK(cudaMalloc(&bias, n * 2));
  CHECK(cudaMalloc(&out, size_t(m) * n * 2));
  CHECK(cudaMalloc(&flush, flush_bytes));
  fill<<<264, 256>>>(static_cast<unsigned char*>(a), size_t(m) * k, 1);
  fill<<<264, 256>>>(static_cast<unsigned char*>(b), size_t(n) * k, 2);
  CHECK(cudaMemset(scale_a, 0x3c, m * 4));  // ~0.0123 as fp32
  CHECK(cudaMemset(scale_b, 0x3c, n * 4));
  CHECK(cudaMemset(bias, 0x3c, n * 2));

  ScaledMmArgs args;
  args.m = m, args.n = n, args.k = k;
  args.a = a, args.lda = k, args.b = b, args.ldb = k, args.out = out, args.ldo = n;
  args.scale_a = static_cast<const float*>(scale_a), args.scale_a_per_token = true;
  args.scale_b = static_cast<const float*>(scale_b), args.scale_b_per_channel = true;
  args.bias = bias;
  // The library's arguments, with the epilogue tree's rebuilt node by node
  // (the stamped node takes the row broadcast's).
  const auto library = Library::arguments(args, sms);
  const auto& plain = library.epilogue.thread;
  typename Gemm::Arguments arguments{library.mode, library.problem_shape, library.mainloop,
                                     {{plain.op_0, plain.op_1, plain.op_2, plain.op_3}, library.epilogue.ptr_C,
                                      library.epilogue.dC, library.epilogue.ptr_D, library.epilogue.dD},
                                     library.hw_info, library.scheduler};
  Gemm gemm;
  if (gemm.can_implement(arguments) != cutlass::Status::kSuccess || gemm.initialize(arguments, nullptr) != cutlass::Status::kSuccess) {
    std::fprintf(stderr, "cannot run the kernel on %dx%dx%d\n", m, n, k);
    return 1;
  }
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  const dim3 grid = Plain::get_grid_shape(gemm.params());
  const int ctas = int(grid.x * grid.y * grid.z);
  std::printf("%dx%dx%d int8 128x96 pair tile, %d CTAs, %d SMs, clock %.2f GHz (attribute)\n", m, n, k, ctas, sms,
              clock_khz / 1e6);
  if (ctas > kMaxCtas) return 1;

  for (int i = 0; i < 20; ++i) gemm.run();
  CHECK(cudaDeviceSynchronize());
  const int runs = 30;
  constexpr int kPhases = 18;
  std::vector<double> kernel_us, start_skew_ns, phases[kPhases];
  for (int run = 0; run < runs; ++run) {
    if (flush_l2) CHECK(cudaMemset(flush, run, flush_bytes));
    CHECK(cudaEventRecord(start));
    gemm.run();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    kernel_us.push_back(ms * 1e3);
    static unsigned long long host[kMaxCtas][kWarps][kEvents];
    CHECK(cudaMemcpyFromSymbol(host, stamps, sizeof(host)));
    unsigned long long first = ~0ull, last = 0;
    std::vector<double> per_cta[kPhases];
    for (int c = 0; c < ctas; ++c) {
      first = std::min(first, host[c][0][kEntryTimer]);
      last = std::max(last, host[c][0][kEntryTimer]);
      // Consumer warps are 4..11 (warpgroups 1 and 2): the latest of them
      // at each event; warp 0 is the producer. Cycles from the CTA's entry.
      const auto consumer = [&](Event e) {
        unsigned long long t = 0;
        for (int w = 4; w < kWarps; ++w) t = std::max(t, host[c][w][e]);
        return double(t);
      };
      unsigned long long entry = ~0ull;
      for (int w = 0; w < kWarps; ++w) entry = std::min(entry, host[c][w][kEntry]);
      const double e0 = double(entry);
      const double points[kPhases] = {double(host[c][0][kInitStart]) - e0, double(host[c][0][kInitEnd]) - e0,
                                      double(host[c][0][kLoadStart]) - e0, consumer(kMmaStart) - e0,
                                      consumer(kMmaEnd) - e0, consumer(kMmaTailEnd) - e0,
                                      consumer(kEpilogueBuilt) - e0, consumer(kVectorsStaged) - e0,
                                      consumer(kSubtile1) - e0, consumer(kMidPrevisit) - e0,
                                      consumer(kMidPostreduce) - e0, consumer(kMidTmaStore) - e0,
                                      consumer(kMidEndLoop) - e0, consumer(kSubtile2) - e0,
                                      consumer(kSubtileLast) - e0, consumer(kEpilogueEnd) - e0,
                                      consumer(kExit) - e0, double(host[c][0][kExit]) - e0};
      for (int p = 0; p < kPhases; ++p) per_cta[p].push_back(points[p]);
    }
    start_skew_ns.push_back(double(last - first));
    for (int p = 0; p < kPhases; ++p) phases[p].push_back(median(per_cta[p]));
  }
  const double ghz = clock_khz / 1e6;
  std::printf("kernel (events, %s): median %.2f us over %d runs\n",
              flush_l2 ? "L2 flushed before each" : "back to back, nothing flushed", median(kernel_us), runs);
  std::printf("CTA entry spread (globaltimer, last - first): median %.0f ns\n", median(start_skew_ns));
  const char* names[kPhases] = {"producer: load_init() called", "producer: load_init() done",
                                 "producer: first load() call", "consumers: enter mma (wait for k-tile 0)",
                                 "consumers: leave mma", "consumers: mma_tail done",
                                 "epilogue callbacks built", "row vectors staged (begin done)",
                                 "subtile 1 begins", "  subtile 1: previsit (visits start)",
                                 "  subtile 1: postreduce (results in smem)", "  subtile 1: tma_store (after fence, barrier, issue)",
                                 "  subtile 1: end_loop (store buffer acquired)", "subtile 2 begins", "last subtile's end_loop",
                                 "epilogue end()", "consumers exit (stores drained)", "producer exits"};
  std::printf("cycles from the CTA's entry (median over CTAs, then over runs; us at %.2f GHz):\n", ghz);
  for (int p = 0; p < kPhases; ++p) {
    const double cycles = median(phases[p]);
    std::printf("  %-45s %7.0f cycles  %6.2f us\n", names[p], cycles, cycles / ghz / 1e3);
  }
  return 0;
}
