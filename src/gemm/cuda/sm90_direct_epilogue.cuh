// sm90_direct_epilogue.cuh — the dequantization epilogue of the Hopper GEMMs
// without TMA: each consumer thread turns its own accumulator fragment into
// output elements and stores them straight to global memory, predicated on
// the problem's edge. Used where the TMA epilogue cannot go: an output whose
// row pitch or base is not 16-byte aligned (N or ldo not a multiple of 8, a
// view one element into a row), or per-channel vectors the row broadcasts
// would read out of alignment. The mainloop still loads A and B through TMA,
// so the GEMM keeps its wgmma speed; only the stores are narrower.
//
// The arithmetic is gemm/epilogue_math.h's, element by element, exactly as
// the CPU backend and the EVT of epilogue_evt.cuh compute it:
//
//   corrected = acc − azp[m]·azp_adj[n]      int32, wrap-around (int8 only;
//                                            azp null reads 1, azp_adj null 0)
//   D[m,n]    = dequant_epilogue(float(corrected), scale_a[m or 0],
//                                scale_b[n or 0], bias[n], bias != null)
//
// Layout: D [M,N] row-major with pitch ldo (any), element (m, n) at
// out + m·ldo + n. The fragment's coordinates come from partitioning an
// identity tensor of the tile with the thread's slice of the tiled MMA, the
// same partition the accumulators have, so no wgmma register layout is
// written out by hand here.
//
// It plugs into CUTLASS's sm90 warp-specialized kernels through
// Sm90TmaWarpSpecializedAdapter (the wrapper CUTLASS itself uses for its
// shared-memory-free epilogues), which gives it the (empty) load and store
// pipelines those kernels expect.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/detail.hpp"
#include "cutlass/epilogue/dispatch_policy.hpp"
#include "gemm/epilogue_math.h"
#include "gemm/scaled_mm_args.h"

namespace qgemm::detail::sm90 {

// The per-element operation, named for GemmUniversalAdapter's
// EpilogueOutputOp alias; the work is in DirectStoreEpilogue::operator().
template <class Accumulator, class Output>
struct DequantizeElement {
  using ElementOutput = Output;
  using ElementAccumulator = Accumulator;
  using ElementCompute = float;
  using ElementD = Output;
  static constexpr int kCount = 1;
  struct Params {};
};

template <class Accumulator, class Output>
class DirectStoreEpilogue {
 public:
  using EpilogueSchedule = cutlass::epilogue::NoSmemWarpSpecialized;
  using DispatchPolicy = EpilogueSchedule;
  using ThreadEpilogueOp = DequantizeElement<Accumulator, Output>;
  using ElementAccumulator = Accumulator;
  using ElementCompute = float;
  using ElementC = void;  // no source operand
  using ElementD = Output;
  using StrideC = cute::Stride<int64_t, cute::_1, int64_t>;
  using StrideD = StrideC;
  using GmemTiledCopyC = void;
  using GmemTiledCopyD = void;
  static constexpr bool kInt8 = std::is_same_v<Accumulator, int32_t>;

  struct SharedStorage {};
  using TensorStorage = SharedStorage;

  // Host arguments: the device pointers of ScaledMmArgs (null where absent).
  struct Arguments {
    Output* out = nullptr;
    int64_t ldo = 0;
    const float* scale_a = nullptr;
    const float* scale_b = nullptr;
    const Output* bias = nullptr;
    const int32_t* azp = nullptr;
    const int32_t* azp_adj = nullptr;
    bool scale_a_per_token = false;
    bool scale_b_per_channel = false;
  };
  using Params = Arguments;

  static Arguments arguments(const ScaledMmArgs& args) {
    return {static_cast<Output*>(args.out),
            args.ldo,
            args.scale_a,
            args.scale_b,
            static_cast<const Output*>(args.bias),
            args.azp,
            args.azp_adj,
            args.scale_a_per_token,
            args.scale_b_per_channel};
  }

  template <class ProblemShape>
  static constexpr Params to_underlying_arguments(ProblemShape const&, Arguments const& args, void*) {
    return args;
  }
  template <class ProblemShape>
  static size_t get_workspace_size(ProblemShape const&, Arguments const&) {
    return 0;
  }
  template <class ProblemShape>
  static cutlass::Status initialize_workspace(ProblemShape const&, Arguments const&, void*, cudaStream_t,
                                              cutlass::CudaHostAdapter* = nullptr) {
    return cutlass::Status::kSuccess;
  }
  template <class ProblemShape>
  static bool can_implement(ProblemShape const&, Arguments const& args) {
    return args.out != nullptr && args.scale_a != nullptr && args.scale_b != nullptr;
  }

  CUTLASS_HOST_DEVICE explicit DirectStoreEpilogue(Params const& params, SharedStorage const& = SharedStorage())
      : params_(params) {}

  CUTLASS_DEVICE bool is_source_needed() { return false; }

  // Dequantizes and stores this thread's part of the CTA tile at blk_coord.
  template <class ProblemShapeMNKL, class BlockShapeMNK, class BlockCoordMNKL, class FrgEngine, class FrgLayout,
            class TiledMma, class ResidueMNK>
  CUTLASS_DEVICE void operator()(ProblemShapeMNKL problem_shape_mnkl, BlockShapeMNK blk_shape_mnk,
                                 BlockCoordMNKL blk_coord_mnkl, cute::Tensor<FrgEngine, FrgLayout> const& accumulators,
                                 TiledMma tiled_mma, ResidueMNK, int thread_idx, char*) {
    using namespace cute;
    const int m_total = get<0>(problem_shape_mnkl);
    const int n_total = get<1>(problem_shape_mnkl);
    const auto [m_coord, n_coord, k_coord, l_coord] = blk_coord_mnkl;

    // (m, n) of every accumulator element of this thread, in the whole output.
    Tensor coords = make_identity_tensor(make_shape(m_total, n_total));
    Tensor tile_coords = local_tile(coords, take<0, 2>(blk_shape_mnk), make_coord(m_coord, n_coord));
    Tensor thread_coords = tiled_mma.get_thread_slice(thread_idx).partition_C(tile_coords);
    static_assert(is_static<FrgLayout>::value, "the accumulator layout must be static");
    CUTE_STATIC_ASSERT_V(size(thread_coords) == size(accumulators));

    // Adjacent fragment elements (i, i+1) that are columns (n, n+1) of one
    // row go out as one 4-byte store when the output allows it (even pitch,
    // 4-byte aligned base); everything else, odd pitches included, element by
    // element. The coordinate test folds at compile time: the fragment's
    // layout is static and only its origin is not.
    const bool pairs = params_.ldo % 2 == 0 && reinterpret_cast<uintptr_t>(params_.out) % (2 * sizeof(Output)) == 0;
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < size(accumulators); i += 2) {
      const int m = get<0>(thread_coords(i)), n = get<1>(thread_coords(i));
      const bool has_next = i + 1 < size(accumulators);
      const bool next_is_neighbour =
          has_next && get<0>(thread_coords(i + 1)) == m && get<1>(thread_coords(i + 1)) == n + 1;
      if (pairs && next_is_neighbour && n % 2 == 0 && m < m_total && n + 1 < n_total) {
        cutlass::Array<Output, 2> both;
        both[0] = dequantize(accumulators(i), m, n);
        both[1] = dequantize(accumulators(i + 1), m, n + 1);
        *reinterpret_cast<cutlass::Array<Output, 2>*>(params_.out + static_cast<int64_t>(m) * params_.ldo + n) = both;
        continue;
      }
      store(accumulators(i), m, n, m_total, n_total);
      if (has_next) {
        store(accumulators(i + 1), get<0>(thread_coords(i + 1)), get<1>(thread_coords(i + 1)), m_total, n_total);
      }
    }
  }

 private:
  // D[m,n] from its accumulator (see the file comment).
  template <class Acc>
  CUTLASS_DEVICE Output dequantize(Acc acc, int m, int n) const {
    const Params& p = params_;
    float accumulator;
    if constexpr (kInt8) {
      const uint32_t zero_point = p.azp != nullptr ? static_cast<uint32_t>(__ldg(p.azp + m)) : 1u;
      const uint32_t adjustment = p.azp_adj != nullptr ? static_cast<uint32_t>(__ldg(p.azp_adj + n)) : 0u;
      accumulator = static_cast<float>(static_cast<int32_t>(static_cast<uint32_t>(acc) - zero_point * adjustment));
    } else {
      accumulator = acc;
    }
    const float scale_a = __ldg(p.scale_a + (p.scale_a_per_token ? m : 0));
    const float scale_b = __ldg(p.scale_b + (p.scale_b_per_channel ? n : 0));
    const float bias = p.bias != nullptr ? static_cast<float>(p.bias[n]) : 0.0f;
    return Output(dequant_epilogue(accumulator, scale_a, scale_b, bias, p.bias != nullptr));
  }

  template <class Acc>
  CUTLASS_DEVICE void store(Acc acc, int m, int n, int m_total, int n_total) const {
    if (m < m_total && n < n_total) params_.out[static_cast<int64_t>(m) * params_.ldo + n] = dequantize(acc, m, n);
  }

  Params params_;
};

// The collective the sm90 kernels take: the epilogue above behind CUTLASS's
// adapter for epilogues without TMA.
template <class Accumulator, class Output>
using DirectStoreCollective =
    cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter<DirectStoreEpilogue<Accumulator, Output>>;

}  // namespace qgemm::detail::sm90
