// sm90_fp8_overlap.cuh — the precise fp8 mainloop with its promotions hidden
// under the next k-tile's wgmma.
//
// Precise fp8 (docs/gemm.md) sums each k-tile's wgmma products into a
// partial accumulator set P and adds P into the fp32 accumulators D once per
// k-tile ("promotion"): D = Σ_k P_k. CUTLASS's FP8 mainloop keeps one P, so
// every k-tile ends in warpgroup_wait<0> and the FADDs D += P, and the
// warpgroup issues no wgmma meanwhile. Here two partial sets alternate:
//
//   issue k-tile k into P[k % 2]  (first wgmma of the tile zeroes it)
//   wait until only that batch is in flight   (k-tile k−1 is complete)
//   D += P[(k−1) % 2]             (runs while the tensor cores work on k)
//   release k-tile k−1's shared-memory stage
//
// The sums are the same, in the same order (D = ((0 + P_0) + P_1) + …), as
// CUTLASS's mainloop with its default promotion interval (one k-tile of 128,
// four wgmma k-steps), so the results are bit-identical; the cost is a third
// accumulator set (64×128 outputs per warpgroup: 3 × 64 registers).
//
// Only mma() differs from the builder's collective: loads, shared storage,
// parameters and mma_tail (which releases the last stage) are inherited.
#pragma once

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"

namespace qgemm::detail::sm90 {

template <class Base>
struct Fp8OverlappedPromotion : Base {
  using typename Base::MainloopPipeline;
  using typename Base::PipelineState;
  using typename Base::TensorStorage;
  using typename Base::Params;
  using typename Base::TiledMma;
  using typename Base::SmemLayoutA;
  using typename Base::SmemLayoutB;
  static_assert(Base::K_PIPE_MMAS == 1, "mma_tail must release exactly the last stage");

  template <class FrgTensorC>
  CUTLASS_DEVICE void mma(MainloopPipeline pipeline, PipelineState smem_pipe_read, FrgTensorC& accum,
                          int k_tile_count, int thread_idx, TensorStorage& shared_tensors, Params const&) {
    using namespace cute;
    clear(accum);
    if (k_tile_count <= 0) return;
    Tensor sA = make_tensor(make_smem_ptr(shared_tensors.smem_A.data()), SmemLayoutA{});  // (BLK_M,BLK_K,PIPE)
    Tensor sB = make_tensor(make_smem_ptr(shared_tensors.smem_B.data()), SmemLayoutB{});  // (BLK_N,BLK_K,PIPE)
    constexpr int kWarpGroups = size(TiledMma{}) / cutlass::NumThreadsPerWarpGroup;
    const auto group_layout = make_layout(Int<kWarpGroups>{}, Int<cutlass::NumThreadsPerWarpGroup>{});
    const int group = __shfl_sync(0xffffffff, thread_idx / cutlass::NumThreadsPerWarpGroup, 0);
    TiledMma tiled_mma;
    auto thread_mma = tiled_mma.get_slice(group_layout(group));
    Tensor tCrA = thread_mma.make_fragment_A(thread_mma.partition_A(sA));  // (MMA,MMA_M,MMA_K,PIPE) descriptors
    Tensor tCrB = thread_mma.make_fragment_B(thread_mma.partition_B(sB));  // (MMA,MMA_N,MMA_K,PIPE)
    // One promotion per k-tile equals CUTLASS's default interval (four
    // wgmma k-steps) only for k-tiles of four k-steps (128 fp8 elements).
    static_assert(decltype(size<2>(tCrA))::value == 4, "the precise mode promotes every 4 wgmma k-steps");

    Tensor even = make_fragment_like(accum);
    Tensor odd = make_fragment_like(accum);
    PipelineState smem_pipe_release = smem_pipe_read;

    // One k-tile's wgmma batch into `part`, zeroing it first.
    auto issue = [&](auto& part) {
      pipeline.consumer_wait(smem_pipe_read, pipeline.consumer_try_wait(smem_pipe_read));
      const int stage = smem_pipe_read.index();
      tiled_mma.accumulate_ = GMMA::ScaleOut::Zero;
      warpgroup_fence_operand(part);
      warpgroup_arrive();
      CUTLASS_PRAGMA_UNROLL
      for (int k_block = 0; k_block < size<2>(tCrA); ++k_block) {
        cute::gemm(tiled_mma, tCrA(_, _, k_block, stage), tCrB(_, _, k_block, stage), part);
        tiled_mma.accumulate_ = GMMA::ScaleOut::One;
      }
      warpgroup_commit_batch();
      warpgroup_fence_operand(part);
      ++smem_pipe_read;
    };
    // D += part once its batch is complete (`in_flight` later batches may run on).
    auto promote = [&](auto& part, auto in_flight) {
      warpgroup_wait<decltype(in_flight)::value>();
      warpgroup_fence_operand(part);
      warpgroup_fence_operand(accum);
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < size(accum); ++i) accum(i) += part(i);
      warpgroup_fence_operand(accum);
    };
    // Finishes `done`, the last batch issued, with `remaining` k-tiles left:
    // the next goes into `next` first, so the promotion overlaps it. False
    // when none was left.
    auto step = [&](auto& done, auto& next, int remaining) {
      if (remaining == 0) {
        promote(done, Int<0>{});
        return false;
      }
      issue(next);
      promote(done, Int<1>{});
      pipeline.consumer_release(smem_pipe_release);
      ++smem_pipe_release;
      return true;
    };

    issue(even);
    CUTLASS_PRAGMA_NO_UNROLL
    for (int remaining = k_tile_count - 1; step(even, odd, remaining) && step(odd, even, remaining - 1);
         remaining -= 2) {
    }
    // The last k-tile's stage is released by the inherited mma_tail.
  }
};

}  // namespace qgemm::detail::sm90
