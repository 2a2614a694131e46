// sm90_fp8_overlap.cuh — the precise fp8 mainloop with its promotions hidden
// under the next wgmma batch.
//
// Precise fp8 (docs/gemm.md) sums each k-tile's wgmma products into a
// partial accumulator set P and adds P into the fp32 accumulators D once per
// k-tile ("promotion"): D = Σ_k P_k. CUTLASS's FP8 mainloop keeps one P, so
// every k-tile ends in warpgroup_wait<0> and the FADDs D += P, and the
// warpgroup issues no wgmma meanwhile. Here two partial sets alternate, and
// each k-tile's batch is issued as kSlices batches along N (wgmma
// m64n(N/kSlices)k32 on the same A descriptors), batch j into P[j % 2]:
//
//   issue batch j into P[j % 2]                 (its first wgmma zeroes it)
//   wait until only that batch is in flight     (batch j−1 is complete)
//   D[slice of j−1] += P[(j−1) % 2]             (runs while batch j computes)
//   after k-tile k−1's last batch: release its shared-memory stage
//
// kSlices = 1 (64×128 and 64×64 warpgroup tiles): two whole partial sets,
// 3 × 64 registers for 64×128. Tiles too wide for that take slices: 64×256
// in 4 (128 + 2·32 registers), 64×192 in 2 (96 + 2·48). A slice's registers
// are a contiguous run of the tile's: wgmma's accumulator register r of a
// thread holds column 8·(r / 4) + 2·(lane % 4) + r % 2 of its atom (PTX ISA,
// "wgmma register fragments"), so slice s's register i is the tile's
// register s·size(P) + i.
//
// Every output element gets the same sums in the same order (D = ((0 + P_0)
// + P_1) + …) as with CUTLASS's mainloop at its default promotion interval
// (one k-tile of 128, four wgmma k-steps), so the results are bit-identical.
//
// Only mma() differs from the builder's collective: loads, shared storage,
// parameters and mma_tail (which releases the last stage) are inherited.
#pragma once

#include <cstddef>
#include <utility>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"

namespace qgemm::detail::sm90 {

// The calling warpgroup's wgmma descriptors of `mma` over every pipeline
// stage: A (MMA, MMA_M, MMA_K, PIPE) and B (MMA, MMA_N, MMA_K, PIPE).
template <class SmemLayoutA, class SmemLayoutB, class Mma, class TensorStorage>
CUTLASS_DEVICE auto warpgroup_descriptors(Mma& mma, TensorStorage& shared_tensors, int thread_idx) {
  using namespace cute;
  Tensor sA = make_tensor(make_smem_ptr(shared_tensors.smem_A.data()), SmemLayoutA{});  // (BLK_M,BLK_K,PIPE)
  Tensor sB = make_tensor(make_smem_ptr(shared_tensors.smem_B.data()), SmemLayoutB{});  // (BLK_N,BLK_K,PIPE)
  constexpr int kWarpGroups = size(Mma{}) / cutlass::NumThreadsPerWarpGroup;
  const auto group_layout = make_layout(Int<kWarpGroups>{}, Int<cutlass::NumThreadsPerWarpGroup>{});
  const int group = __shfl_sync(0xffffffff, thread_idx / cutlass::NumThreadsPerWarpGroup, 0);
  auto thread_mma = mma.get_slice(group_layout(group));
  return make_tuple(thread_mma.make_fragment_A(thread_mma.partition_A(sA)),
                    thread_mma.make_fragment_B(thread_mma.partition_B(sB)));
}

template <class Base, int kSlices>
struct Fp8OverlappedPromotion : Base {
  using typename Base::MainloopPipeline;
  using typename Base::PipelineState;
  using typename Base::TensorStorage;
  using typename Base::Params;
  using typename Base::TiledMma;
  using typename Base::TileShape;
  using typename Base::SmemLayoutA;
  using typename Base::SmemLayoutB;
  static_assert(Base::K_PIPE_MMAS == 1, "mma_tail must release exactly the last stage");
  static_assert(kSlices >= 1, "at least one batch per k-tile");
  // Batches per turn of the loop: a whole number of k-tiles in which batch
  // j's set (j % 2) and slice (j % kSlices) repeat.
  static constexpr int kPeriod = kSlices % 2 == 0 ? kSlices : 2 * kSlices;

  static constexpr int kWarpGroups = cute::size(TiledMma{}) / cutlass::NumThreadsPerWarpGroup;
  using SliceShape = cute::Shape<cute::tuple_element_t<0, TileShape>,
                                 cute::Int<cute::tuple_element_t<1, TileShape>::value / kSlices>,
                                 cute::tuple_element_t<2, TileShape>>;  // (BLK_M, BLK_N / kSlices, BLK_K)
  using SliceMma = decltype(cute::make_tiled_mma(
      cute::GMMA::ss_op_selector<typename Base::ElementA, typename Base::ElementB, float, SliceShape,
                                 cute::GMMA::Major::K, cute::GMMA::Major::K>(),
      cute::Layout<cute::Shape<cute::Int<kWarpGroups>, cute::_1, cute::_1>>{}));

  // Batch j's partial set: P[j % 2].
  template <int kBatch, class Partial>
  CUTLASS_DEVICE static Partial& of_parity(Partial& even, Partial& odd) {
    if constexpr (kBatch % 2 == 0) return even;
    else return odd;
  }

  // step(0, r) && step(1, r − 1) && … && step(kPeriod − 1, …). The loop
  // leaves from its condition: with an exit flag tested in the loop body
  // instead, the exits rejoin the loop header, ptxas can no longer tell
  // which batch a wait retires, and it serializes every wgmma (C7514).
  template <class Step, size_t... kBatch>
  CUTLASS_DEVICE static bool steps(Step& step, int remaining, std::index_sequence<kBatch...>) {
    return (step(cute::Int<int(kBatch)>{}, remaining - int(kBatch)) && ...);
  }

  template <class FrgTensorC>
  CUTLASS_DEVICE void mma(MainloopPipeline pipeline, PipelineState smem_pipe_read, FrgTensorC& accum,
                          int k_tile_count, int thread_idx, TensorStorage& shared_tensors, Params const&) {
    using namespace cute;
    clear(accum);
    if (k_tile_count <= 0) return;
    SliceMma slice_mma;
    auto descriptors = warpgroup_descriptors<SmemLayoutA, SmemLayoutB>(slice_mma, shared_tensors, thread_idx);
    auto& tCrA = get<0>(descriptors);  // (MMA,1,MMA_K,PIPE)
    auto& tCrB = get<1>(descriptors);  // (MMA,kSlices,MMA_K,PIPE)
    static_assert(decltype(size<2>(tCrA))::value == 4, "the precise mode promotes every 4 wgmma k-steps");
    static_assert(decltype(size<1>(tCrA))::value == 1 && decltype(size<1>(tCrB))::value == kSlices);
    static_assert(decltype(size<1>(accum))::value == 1 && decltype(size<2>(accum))::value == 1,
                  "slices map onto the tile's registers only when each warpgroup's tile is one wgmma atom");

    using Partial = decltype(partition_fragment_C(slice_mma, take<0, 2>(SliceShape{})));
    static_assert(decltype(size(Partial{}))::value * kSlices == decltype(size(accum))::value);
    Partial even, odd;
    // Defined before the first batch (the wgmma name them as inputs; with
    // scale-d 0 their values are not used).
    clear(even);
    clear(odd);
    warpgroup_fence_operand(even);
    warpgroup_fence_operand(odd);
    PipelineState smem_pipe_release = smem_pipe_read;
    int stage = 0;

    auto begin_k_tile = [&]() {
      pipeline.consumer_wait(smem_pipe_read, pipeline.consumer_try_wait(smem_pipe_read));
      stage = smem_pipe_read.index();
    };
    // Slice `slice` of the current k-tile's wgmma batch into `part`.
    auto issue = [&](auto& part, int slice) {
      warpgroup_fence_operand(part);
      warpgroup_arrive();
      slice_mma.accumulate_ = GMMA::ScaleOut::Zero;
      CUTLASS_PRAGMA_UNROLL
      for (int k_block = 0; k_block < size<2>(tCrA); ++k_block) {
        cute::gemm(slice_mma, tCrA(_, 0, k_block, stage), tCrB(_, slice, k_block, stage), part(_, 0, 0));
        slice_mma.accumulate_ = GMMA::ScaleOut::One;
      }
      warpgroup_commit_batch();
      warpgroup_fence_operand(part);
    };
    // D[slice] += part once its batch is complete (`in_flight` later batches may run on).
    auto promote = [&](auto& part, int slice, auto in_flight) {
      warpgroup_wait<decltype(in_flight)::value>();
      warpgroup_fence_operand(part);
      warpgroup_fence_operand(accum);
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < size(part); ++i) accum(slice * size(part) + i) += part(i);
      warpgroup_fence_operand(accum);
    };
    // Finishes batch `done` (of the loop's period), the last one issued,
    // with `remaining` batches left: the next goes into the other set first,
    // so the promotion overlaps it. False when none was left.
    auto step = [&](auto done_c, int remaining) {
      constexpr int done = decltype(done_c)::value, next = done + 1;
      constexpr int done_slice = done % kSlices, next_slice = next % kSlices;
      if (remaining == 0) {
        promote(of_parity<done>(even, odd), done_slice, Int<0>{});
        return false;
      }
      if constexpr (next_slice == 0) {
        ++smem_pipe_read;
        begin_k_tile();
      }
      issue(of_parity<next>(even, odd), next_slice);
      promote(of_parity<done>(even, odd), done_slice, Int<1>{});
      if constexpr (next_slice == 0) {  // k-tile k−1's batches are complete
        pipeline.consumer_release(smem_pipe_release);
        ++smem_pipe_release;
      }
      return true;
    };

    begin_k_tile();
    issue(even, 0);
    CUTLASS_PRAGMA_NO_UNROLL
    for (int remaining = k_tile_count * kSlices - 1; steps(step, remaining, std::make_index_sequence<kPeriod>{});
         remaining -= kPeriod) {
    }
    // The last k-tile's stage is released by the inherited mma_tail.
  }
};

}  // namespace qgemm::detail::sm90
