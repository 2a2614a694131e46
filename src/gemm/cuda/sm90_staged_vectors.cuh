// sm90_staged_vectors.cuh — the epilogue's per-token and per-channel vectors
// (scale_a, azp; scale_b, azp_adj, bias) as epilogue-tree leaves that the
// kernel's idle epilogue-load warp stages in shared memory while the
// consumers still multiply.
//
// CUTLASS's Sm90RowBroadcast and Sm90ColBroadcast read their vectors from
// global memory in the consumers' begin(), after the last wgmma: one global
// latency per leaf, leaf after leaf, that nothing hides at small K
// (docs/gemm.md, "Where a pair-tile CTA's time goes"). These leaves say
// is_producer_load_needed(), so the cooperative kernel runs its epilogue
// load warp, which starts once the mainloop producer has issued the first
// tile's loads. Per tile, that warp
//   begin(): loads the tile's slice of every leaf's vector into registers
//            (all leaves' loads in flight together: one latency per tile);
//   step() of the tile's first subtile, after acquiring that subtile's stage
//            of the epilogue load pipeline: stores them into the tile's
//            buffer; the collective's producer_commit (every lane's mbarrier
//            arrive) releases the stores.
// The consumers wait for each subtile's stage before previsit() (the first
// wait of a tile makes the buffer visible), copy their elements of the
// subtile into registers there, and release the stage right after;
// visit() reads registers.
//
// Two buffers, by tile parity. The producer writes tile t's buffer after
// acquiring the stage of t's first subtile, that is after the consumers
// released the stage StagesC subtiles before it; since StagesC ≤ the
// subtiles per tile (min(subtiles, 4) for a kernel without C), that
// release came after every subtile of tile t − 2, the buffer's last user.
// The tile's index is load_iteration / subtiles per tile on both sides,
// which holds when every subtile of every tile goes through the pipeline:
// the data-parallel persistent scheduler, not stream-K's separate
// reduction (Kernel<> asserts it).
//
// Semantics are CUTLASS's broadcasts': a null pointer reads null_default;
// a bool stride (per-tensor or per-element at run time) of false reads
// element 0 everywhere; positions past M or N read null_default.
#pragma once

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/fusion/sm90_visitor_tma_warpspecialized.hpp"
#include "gemm/cuda/sm90_no_workspace.cuh"

namespace qgemm::detail::sm90 {

template <class CtaTileShapeMNK, class Element, class Compute, class StrideMNL, bool kAlongN>
struct StagedVector : NoWorkspace {
  static constexpr int kBuffers = 2;
  static constexpr int kLength =
      kAlongN ? int(cute::size<1>(CtaTileShapeMNK{})) : int(cute::size<0>(CtaTileShapeMNK{}));
  static constexpr int kPerLane = (kLength + 31) / 32;  // elements each lane of the load warp stages

  struct SharedStorage {
    cute::array_aligned<Element, kBuffers * kLength> buffers;
  };
  struct Arguments {
    const Element* ptr = nullptr;
    Element null_default = Element(0);
    StrideMNL stride = {};
  };
  using Params = Arguments;

  template <class ProblemShape>
  static bool can_implement(ProblemShape const&, Arguments const&) {
    return true;
  }

  // The buffer of the tile that subtile `load_iteration` belongs to (the
  // same count on the producer and the consumer side).
  template <int kSubtiles>
  CUTLASS_DEVICE static Element* tile_buffer(Element* buffers, int load_iteration) {
    return buffers + (load_iteration / kSubtiles) % kBuffers * kLength;
  }

  CUTLASS_HOST_DEVICE StagedVector() {}
  CUTLASS_HOST_DEVICE StagedVector(Params const& params, SharedStorage const& storage)
      : params_(params), buffers_(const_cast<Element*>(storage.buffers.data())) {}

  Params params_;
  Element* buffers_ = nullptr;

  CUTLASS_DEVICE bool is_producer_load_needed() const { return true; }
  CUTLASS_DEVICE bool is_C_load_needed() const { return false; }
  CUTLASS_DEVICE bool is_zero() const { return params_.ptr == nullptr && params_.null_default == Element(0); }

  // The epilogue load warp, per tile: begin() loads, the first step() stores.
  template <int kSubtiles>
  struct ProducerLoadCallbacks : cutlass::epilogue::fusion::EmptyProducerLoadCallbacks {
    CUTLASS_DEVICE ProducerLoadCallbacks(Params const& params, Element* buffers, int base, int extent, int lane)
        : params(params), buffers(buffers), base(base), extent(extent), lane(lane) {}
    Params const& params;
    Element* buffers;
    int base;    // the tile's first index along the vector (M or N)
    int extent;  // M or N
    int lane;
    Element values[kPerLane];

    CUTLASS_DEVICE void begin() {
      const int step = static_cast<int>(cute::get<kAlongN ? 1 : 0>(params.stride));
      CUTLASS_PRAGMA_UNROLL
      for (int j = 0; j < kPerLane; ++j) {
        const int index = base + lane + 32 * j;
        values[j] = params.ptr != nullptr && index < extent ? params.ptr[index * step] : params.null_default;
      }
    }
    CUTLASS_DEVICE void step(uint64_t*, int, int, int load_iteration, bool) {
      if (load_iteration % kSubtiles != 0) return;  // the tile's first subtile stores it whole
      Element* buffer = tile_buffer<kSubtiles>(buffers, load_iteration);
      CUTLASS_PRAGMA_UNROLL
      for (int j = 0; j < kPerLane; ++j) {
        if (lane + 32 * j < kLength) buffer[lane + 32 * j] = values[j];
      }
    }
  };

  template <class... Args>
  CUTLASS_DEVICE auto get_producer_load_callbacks(cutlass::epilogue::fusion::detail::ProducerLoadArgs<Args...> const& args) {
    auto [M, N, K, L] = args.problem_shape_mnkl;
    auto [m, n, k, l] = args.tile_coord_mnkl;
    auto subtiles = cute::flat_divide(cute::make_layout(cute::take<0, 2>(args.tile_shape_mnk)), args.epi_tile);
    constexpr int kSubtiles = decltype(cute::size<2>(subtiles) * cute::size<3>(subtiles))::value;
    const int base = kAlongN ? int(n) * kLength : int(m) * kLength;
    return ProducerLoadCallbacks<kSubtiles>(params_, buffers_, base, kAlongN ? int(N) : int(M), args.thread_idx % 32);
  }

  // The consumers: previsit() copies the thread's elements of the subtile
  // from the tile's buffer, visit() hands them out per fragment.
  template <class BufferPartition, class Registers>
  struct ConsumerStoreCallbacks : cutlass::epilogue::fusion::EmptyConsumerStoreCallbacks {
    CUTLASS_DEVICE ConsumerStoreCallbacks(Element* buffers, BufferPartition partition, Registers registers)
        : buffers(buffers), partition(partition), registers(registers) {}
    Element* buffers;
    BufferPartition partition;  // (CPY, CPY_M, CPY_N, EPI_M, EPI_N): offsets within a buffer
    Registers registers;        // (CPY, CPY_M, CPY_N), zero strides where the vector broadcasts

    CUTLASS_DEVICE void previsit(int epi_m, int epi_n, int load_iteration, bool) {
      constexpr int kSubtiles = decltype(cute::size<3>(partition) * cute::size<4>(partition))::value;
      const Element* buffer = tile_buffer<kSubtiles>(buffers, load_iteration);
      auto offsets = cute::filter_zeros(partition(cute::_, cute::_, cute::_, epi_m, epi_n));
      auto values = cute::filter_zeros(registers);
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < cute::size(values); ++i) values(i) = Compute(buffer[offsets(i)]);
    }

    template <class ElementAccumulator, int FragmentSize>
    CUTLASS_DEVICE cutlass::Array<Compute, FragmentSize> visit(cutlass::Array<ElementAccumulator, FragmentSize> const&,
                                                              int epi_v, int, int) {
      cutlass::Array<Compute, FragmentSize> fragment;
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < FragmentSize; ++i) fragment[i] = registers(epi_v * FragmentSize + i);
      return fragment;
    }
  };

  template <bool ReferenceSrc, class... Args>
  CUTLASS_DEVICE auto get_consumer_store_callbacks(
      cutlass::epilogue::fusion::detail::ConsumerStoreArgs<Args...> const& args) {
    using namespace cute;
    // A buffer seen as the CTA tile: stride 1 along the vector, 0 across it.
    auto tile = take<0, 2>(args.tile_shape_mnk);
    auto buffer_layout = [&] {
      if constexpr (kAlongN) {
        return make_layout(tile, make_stride(_0{}, _1{}));
      } else {
        return make_layout(tile, make_stride(_1{}, _0{}));
      }
    }();
    auto offsets = make_tensor(counting_iterator<int>{0}, buffer_layout);
    auto partition = cutlass::epilogue::fusion::sm90_partition_for_epilogue<ReferenceSrc>(offsets, args.epi_tile,
                                                                                          args.tiled_copy, args.thread_idx);
    auto registers = make_tensor_like<Compute>(take<0, 3>(partition));
    return ConsumerStoreCallbacks<decltype(partition), decltype(registers)>(buffers_, partition, registers);
  }
};

// The two shapes the tree uses, with CUTLASS's broadcasts' template order.
template <class CtaTileShapeMNK, class Element, class Compute, class StrideMNL>
using StagedRowVector = StagedVector<CtaTileShapeMNK, Element, Compute, StrideMNL, true>;
template <class CtaTileShapeMNK, class Element, class Compute, class StrideMNL>
using StagedColVector = StagedVector<CtaTileShapeMNK, Element, Compute, StrideMNL, false>;

}  // namespace qgemm::detail::sm90
