// sm90_staged_vectors.cuh — the epilogue's per-token and per-channel vectors
// (scale_a, azp; scale_b, azp_adj, bias) as epilogue-tree leaves that the
// kernel's idle epilogue-load warp stages in shared memory while the
// consumers still wait for their first k-tile.
//
// CUTLASS's Sm90RowBroadcast and Sm90ColBroadcast read their vectors from
// global memory in the consumers' begin(), after the last wgmma: one global
// latency (or two, loads in a row) that nothing hides at small K (docs/gemm.md,
// "Where a pair-tile CTA's time goes"). These leaves say
// is_producer_load_needed(), so the cooperative kernel runs its epilogue
// load warp: it starts as soon as the mainloop producer has issued the
// first tile's loads and, per epilogue subtile, acquires a stage of the
// epilogue's load pipeline, writes that subtile's slice of the vector into
// the stage's slot (32 lanes, plain loads and shared stores) and commits it
// — the commit is every lane's mbarrier arrive, which releases its stores.
// The consumers wait for the stage before previsit(), copy their elements
// to registers there, and release it right after; visit() reads registers.
//
// A slot holds a whole CTA tile's row (kAlongN) or column: the subtile's
// positions come from flat_divide of the CTA tile by the epilogue tile, on
// both sides, so any epilogue-tile layout works. kSlots = 4 is at least the
// pipeline's StagesC (min(subtiles, 4) for a kernel without C), so a slot
// is rewritten only after the consumers released the stage that used it.
//
// Semantics are CUTLASS's broadcasts': a null pointer reads null_default;
// a bool stride (per-tensor or per-element at run time) of false reads
// element 0 everywhere; positions past M or N read null_default.
#pragma once

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/fusion/sm90_visitor_tma_warpspecialized.hpp"

namespace qgemm::detail::sm90 {

template <class CtaTileShapeMNK, class Element, class Compute, class StrideMNL, bool kAlongN>
struct StagedVector {
  static constexpr int kSlots = 4;
  static constexpr int kSlotLength =
      kAlongN ? int(cute::size<1>(CtaTileShapeMNK{})) : int(cute::size<0>(CtaTileShapeMNK{}));

  struct SharedStorage {
    cute::array_aligned<Element, kSlots * kSlotLength> slots;
  };
  struct Arguments {
    const Element* ptr = nullptr;
    Element null_default = Element(0);
    StrideMNL stride = {};
  };
  using Params = Arguments;

  template <class ProblemShape>
  static constexpr Params to_underlying_arguments(ProblemShape const&, Arguments const& args, void*) {
    return args;
  }
  template <class ProblemShape>
  static bool can_implement(ProblemShape const&, Arguments const&) {
    return true;
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

  CUTLASS_HOST_DEVICE StagedVector() {}
  CUTLASS_HOST_DEVICE StagedVector(Params const& params, SharedStorage const& storage)
      : params_(params), slots_(const_cast<Element*>(storage.slots.data())) {}

  Params params_;
  Element* slots_ = nullptr;

  CUTLASS_DEVICE bool is_producer_load_needed() const { return true; }
  CUTLASS_DEVICE bool is_C_load_needed() const { return false; }
  CUTLASS_DEVICE bool is_zero() const { return params_.ptr == nullptr && params_.null_default == Element(0); }

  // The element at global index `index` along the vector (M or N).
  CUTLASS_DEVICE static Element element(Params const& params, int index, int extent) {
    if (params.ptr == nullptr || index >= extent) return params.null_default;
    const auto step = cute::get<kAlongN ? 1 : 0>(params.stride);
    return params.ptr[index * static_cast<int>(step)];
  }

  // The epilogue load warp: per subtile, its slice of the vector into slot
  // load_iteration % kSlots. The collective's producer_commit (all 32 lanes
  // arrive) publishes the stores; nothing here touches the barrier.
  template <class SubtileCoords>
  struct ProducerLoadCallbacks : cutlass::epilogue::fusion::EmptyProducerLoadCallbacks {
    CUTLASS_DEVICE ProducerLoadCallbacks(Params const& params, Element* slots, SubtileCoords coords, int base,
                                         int extent, int lane)
        : params(params), slots(slots), coords(coords), base(base), extent(extent), lane(lane) {}
    Params const& params;
    Element* slots;
    SubtileCoords coords;  // (EPI_TILE_M, EPI_TILE_N, EPI_M, EPI_N) → CTA-local (m, n)
    int base;              // the CTA tile's first index along the vector
    int extent;            // M or N
    int lane;

    CUTLASS_DEVICE void step(uint64_t*, int epi_m, int epi_n, int load_iteration, bool) {
      Element* slot = slots + (load_iteration % kSlots) * kSlotLength;
      constexpr int kCount = kAlongN ? decltype(cute::size<1>(coords))::value : decltype(cute::size<0>(coords))::value;
      for (int i = lane; i < kCount; i += 32) {
        int local;
        if constexpr (kAlongN) {
          local = cute::get<1>(coords(0, i, epi_m, epi_n));
        } else {
          local = cute::get<0>(coords(i, 0, epi_m, epi_n));
        }
        slot[local] = element(params, base + local, extent);
      }
    }
  };

  template <class... Args>
  CUTLASS_DEVICE auto get_producer_load_callbacks(cutlass::epilogue::fusion::detail::ProducerLoadArgs<Args...> const& args) {
    auto [M, N, K, L] = args.problem_shape_mnkl;
    auto [m, n, k, l] = args.tile_coord_mnkl;
    auto tile = cute::take<0, 2>(args.tile_shape_mnk);
    auto coords = cute::flat_divide(cute::make_identity_tensor(tile), args.epi_tile);
    const int base = kAlongN ? int(n) * int(cute::size<1>(tile)) : int(m) * int(cute::size<0>(tile));
    return ProducerLoadCallbacks<decltype(coords)>(params_, slots_, coords, base, kAlongN ? int(N) : int(M),
                                                   args.thread_idx % 32);
  }

  // The consumers: previsit() copies the thread's elements of the subtile
  // from its slot, visit() hands them out per fragment.
  template <class SlotPartition, class Registers>
  struct ConsumerStoreCallbacks : cutlass::epilogue::fusion::EmptyConsumerStoreCallbacks {
    CUTLASS_DEVICE ConsumerStoreCallbacks(Element* slots, SlotPartition partition, Registers registers)
        : slots(slots), partition(partition), registers(registers) {}
    Element* slots;
    SlotPartition partition;  // (CPY, CPY_M, CPY_N, EPI_M, EPI_N), offsets within a slot
    Registers registers;      // (CPY, CPY_M, CPY_N), zero strides where the vector broadcasts

    CUTLASS_DEVICE void previsit(int epi_m, int epi_n, int load_iteration, bool) {
      const Element* slot = slots + (load_iteration % kSlots) * kSlotLength;
      auto offsets = cute::filter_zeros(partition(cute::_, cute::_, cute::_, epi_m, epi_n));
      auto values = cute::filter_zeros(registers);
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < cute::size(values); ++i) values(i) = Compute(slot[offsets(i)]);
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
    // A slot seen as the CTA tile: stride 1 along the vector, 0 across it.
    auto tile = take<0, 2>(args.tile_shape_mnk);
    auto slot_layout = [&] {
      if constexpr (kAlongN) {
        return make_layout(tile, make_stride(_0{}, _1{}));
      } else {
        return make_layout(tile, make_stride(_1{}, _0{}));
      }
    }();
    auto offsets = make_tensor(counting_iterator<int>{0}, slot_layout);
    auto partition = cutlass::epilogue::fusion::sm90_partition_for_epilogue<ReferenceSrc>(offsets, args.epi_tile,
                                                                                          args.tiled_copy, args.thread_idx);
    auto registers = make_tensor_like<Compute>(take<0, 3>(partition));
    return ConsumerStoreCallbacks<decltype(partition), decltype(registers)>(slots_, partition, registers);
  }
};

// The two shapes the tree uses, with CUTLASS's broadcasts' template order.
template <class CtaTileShapeMNK, class Element, class Compute, class StrideMNL>
using StagedRowVector = StagedVector<CtaTileShapeMNK, Element, Compute, StrideMNL, true>;
template <class CtaTileShapeMNK, class Element, class Compute, class StrideMNL>
using StagedColVector = StagedVector<CtaTileShapeMNK, Element, Compute, StrideMNL, false>;

}  // namespace qgemm::detail::sm90
