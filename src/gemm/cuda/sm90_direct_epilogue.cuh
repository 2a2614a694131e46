// sm90_direct_epilogue.cuh — the dequantization epilogue of the Hopper GEMMs
// without TMA: each consumer thread turns its own accumulator fragment into
// output elements and stores them straight to global memory, predicated on
// the problem's edge. Used where the TMA epilogue cannot go: an output whose
// row pitch or base is not 16-byte aligned (N or ldo not a multiple of 8, a
// view one element into a row). The mainloop still loads A and B through
// TMA, so the GEMM keeps its wgmma speed; only the stores are narrower.
//
// The arithmetic is gemm/epilogue_math.h's (the CPU backend's), element by
// element, as the EVT of epilogue_evt.cuh computes it:
//
//   corrected = acc − azp[m]·azp_adj[n]        int32, wrap-around (int8 only)
//   D[m,n]    = fma(scale_a[m], scale_b[n]·float(corrected), bias[n])
//
// with one rounding per operation; an absent bias adds −0, which leaves
// every product unchanged (so D = scale_a·t exactly as without the fma).
//
// Per tile, each warpgroup first stages the tile's rows of scale_a / azp
// and columns of scale_b / bias / azp_adj in shared memory (neutral values
// where absent or past the edge), so the per-element code has no branch
// and reads each row's and column's values once.
//
// Layout: D [M,N] row-major with pitch ldo (any), element (m, n) at
// out + m·ldo + n. The fragment's coordinates come from partitioning an
// identity tensor of the tile with the thread's slice of the tiled MMA, the
// same partition the accumulators have, so no wgmma register layout is
// written out by hand here.
//
// It plugs into CUTLASS's sm90 warp-specialized ping-pong kernel through
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
#include "cutlass/arch/barrier.h"
#include "gemm/cuda/sm90_no_workspace.cuh"
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

template <class TileShape, class Accumulator, class Output>
class DirectStoreEpilogue : public NoWorkspace {
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
  static constexpr int kTileM = cute::size<0>(TileShape{});
  static constexpr int kTileN = cute::size<1>(TileShape{});

  // A tile's rows and columns of the vectors, staged once per tile so that
  // each element reads them from shared memory with no branch: absent
  // operands and rows / columns past the problem hold neutral values.
  struct TileVectors {
    float scale_b[kTileN];
    float bias[kTileN];  // −0 where there is no bias: fma(a, t, −0) = a·t, even for a·t = ±0
    float scale_a[kTileM];
    int32_t azp_adj[kInt8 ? kTileN : 1];  // 0 where absent
    int32_t azp[kInt8 ? kTileM : 1];      // 1 where absent
  };
  // One per consumer warpgroup: the ping-pong kernel's two warpgroups work
  // on different tiles at the same time.
  struct SharedStorage {
    TileVectors tiles[2];
  };
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
  static bool can_implement(ProblemShape const&, Arguments const& args) {
    return args.out != nullptr && args.scale_a != nullptr && args.scale_b != nullptr;
  }

  CUTLASS_HOST_DEVICE explicit DirectStoreEpilogue(Params const& params, SharedStorage const& = SharedStorage())
      : params_(params) {}

  CUTLASS_DEVICE bool is_source_needed() { return false; }

  // Dequantizes and stores this warpgroup's tile at blk_coord.
  template <class ProblemShapeMNKL, class BlockShapeMNK, class BlockCoordMNKL, class FrgEngine, class FrgLayout,
            class TiledMma, class ResidueMNK>
  CUTLASS_DEVICE void operator()(ProblemShapeMNKL problem_shape_mnkl, BlockShapeMNK blk_shape_mnk,
                                 BlockCoordMNKL blk_coord_mnkl, cute::Tensor<FrgEngine, FrgLayout> const& accumulators,
                                 TiledMma tiled_mma, ResidueMNK, int thread_idx, char* smem) {
    using namespace cute;
    static_assert(size(TiledMma{}) == 128, "ping-pong kernels only: one warpgroup per tile");
    static_assert(is_static<FrgLayout>::value, "the accumulator layout must be static");
    const int m_total = get<0>(problem_shape_mnkl);
    const int n_total = get<1>(problem_shape_mnkl);
    const auto [m_coord, n_coord, k_coord, l_coord] = blk_coord_mnkl;
    const int m0 = static_cast<int>(m_coord) * kTileM;
    const int n0 = static_cast<int>(n_coord) * kTileN;

    // Stage this tile's vectors (named barrier per warpgroup: ids past
    // CUTLASS's reserved ones). The first barrier keeps the previous tile's
    // readers ahead of this tile's writers.
    const int slot = cutlass::canonical_warp_group_idx() - 1;  // consumers are warpgroups 1 and 2
    TileVectors& tile = reinterpret_cast<SharedStorage*>(smem)->tiles[slot];
    cutlass::arch::NamedBarrier::arrive_and_wait(128, slot);
    stage_vectors(tile, m0, n0, m_total, n_total, thread_idx);
    cutlass::arch::NamedBarrier::arrive_and_wait(128, slot);

    // (m, n) of every accumulator element of this thread, relative to the tile.
    Tensor thread_coords =
        tiled_mma.get_thread_slice(thread_idx).partition_C(make_identity_tensor(take<0, 2>(blk_shape_mnk)));
    CUTE_STATIC_ASSERT_V(size(thread_coords) == size(accumulators));
    constexpr int kElements = decltype(size(accumulators))::value;

    // Every element's output value, branch-free, so that repeated rows and
    // columns of the fragment read the vectors once.
    cutlass::Array<Output, kElements> values;
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < kElements; ++i) {
      const int m = get<0>(thread_coords(i)), n = get<1>(thread_coords(i));
      float accumulator;
      if constexpr (kInt8) {  // acc − azp·azp_adj, wrapping
        accumulator = static_cast<float>(static_cast<int32_t>(
            static_cast<uint32_t>(accumulators(i)) -
            static_cast<uint32_t>(tile.azp[m]) * static_cast<uint32_t>(tile.azp_adj[n])));
      } else {
        accumulator = accumulators(i);
      }
      values[i] = Output(__fmaf_rn(tile.scale_a[m], __fmul_rn(tile.scale_b[n], accumulator), tile.bias[n]));
    }

    // Adjacent elements (i, i+1) that are columns (n, n+1) of one row go out
    // as one 4-byte store when the output allows it (even pitch, 4-byte
    // aligned base); everything else, odd pitches included, element by
    // element. The neighbour test folds at compile time: the fragment's
    // layout is static and only its origin is not.
    Output* out = params_.out + static_cast<int64_t>(m0) * params_.ldo + n0;
    const int rows = m_total - m0, columns = n_total - n0;
    const bool pairs = params_.ldo % 2 == 0 && reinterpret_cast<uintptr_t>(params_.out) % (2 * sizeof(Output)) == 0;
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < kElements; i += 2) {
      const int m = get<0>(thread_coords(i)), n = get<1>(thread_coords(i));
      const bool has_next = i + 1 < kElements;
      const bool next_is_neighbour =
          has_next && get<0>(thread_coords(i + 1)) == m && get<1>(thread_coords(i + 1)) == n + 1;
      if (pairs && next_is_neighbour && n % 2 == 0 && m < rows && n + 1 < columns) {
        cutlass::Array<Output, 2> both;
        both[0] = values[i];
        both[1] = values[i + 1];
        *reinterpret_cast<cutlass::Array<Output, 2>*>(out + static_cast<int64_t>(m) * params_.ldo + n) = both;
        continue;
      }
      if (m < rows && n < columns) out[static_cast<int64_t>(m) * params_.ldo + n] = values[i];
      if (has_next) {
        const int m1 = get<0>(thread_coords(i + 1)), n1 = get<1>(thread_coords(i + 1));
        if (m1 < rows && n1 < columns) out[static_cast<int64_t>(m1) * params_.ldo + n1] = values[i + 1];
      }
    }
  }

 private:
  // The tile's scale_a / azp rows and scale_b / bias / azp_adj columns,
  // with the neutral values of TileVectors where absent or out of range.
  CUTLASS_DEVICE void stage_vectors(TileVectors& tile, int m0, int n0, int m_total, int n_total,
                                    int thread_idx) const {
    const Params& p = params_;
    for (int j = thread_idx; j < kTileN; j += 128) {
      const int n = n0 + j;
      const bool inside = n < n_total;
      tile.scale_b[j] = inside ? p.scale_b[p.scale_b_per_channel ? n : 0] : 0.0f;
      tile.bias[j] = inside && p.bias != nullptr ? static_cast<float>(p.bias[n]) : -0.0f;
      if constexpr (kInt8) tile.azp_adj[j] = inside && p.azp_adj != nullptr ? p.azp_adj[n] : 0;
    }
    for (int j = thread_idx; j < kTileM; j += 128) {
      const int m = m0 + j;
      const bool inside = m < m_total;
      tile.scale_a[j] = inside ? p.scale_a[p.scale_a_per_token ? m : 0] : 0.0f;
      if constexpr (kInt8) tile.azp[j] = inside && p.azp != nullptr ? p.azp[m] : 1;
    }
  }

  Params params_;
};

// The collective the sm90 kernels take: the epilogue above behind CUTLASS's
// adapter for epilogues without TMA.
template <class TileShape, class Accumulator, class Output>
using DirectStoreCollective = cutlass::epilogue::collective::detail::Sm90TmaWarpSpecializedAdapter<
    DirectStoreEpilogue<TileShape, Accumulator, Output>>;

}  // namespace qgemm::detail::sm90
