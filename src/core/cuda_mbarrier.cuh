// cuda_mbarrier.cuh — sm_90 shared-memory barriers (mbarrier) and the bulk
// asynchronous copies that complete on them, as thin wrappers over their PTX.
// Only for code compiled for sm_90 and later.
//
// A producer announces a stage's bytes on the stage's "full" barrier
// (mbarrier_expect_bytes) and starts copies that count those bytes down as
// they land; consumers wait for the barrier's phase (mbarrier_wait with the
// phase's parity), read the stage and arrive on its "empty" barrier, which
// the producer waits for before refilling it. Addresses are shared-memory
// addresses (smem_address, core/cuda_smem.cuh).
#pragma once

#include <cstdint>

#include "core/cuda_smem.cuh"

namespace qgemm::detail {

// A barrier whose phase completes after `arrivals` arrivals (and, with
// mbarrier_expect_bytes, the announced bytes).
__device__ __forceinline__ void mbarrier_init(uint32_t bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals));
}

// Makes initialized barriers visible to the async proxy (the copy engine);
// a CTA barrier must follow before other threads use them.
__device__ __forceinline__ void mbarrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// A ring of `stages` stage barriers, initialized by thread 0: full[s]
// completes on one arrival (the producer's, with the stage's bytes),
// empty[s] on `consumers` arrivals. A CTA barrier must follow.
__device__ __forceinline__ void init_stage_ring(uint64_t* full, uint64_t* empty, int stages, uint32_t consumers) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbarrier_init(smem_address(&full[s]), 1);
      mbarrier_init(smem_address(&empty[s]), consumers);
    }
    mbarrier_init_fence();
  }
}

// One arrival that also announces `bytes` to arrive by copies in this phase.
__device__ __forceinline__ void mbarrier_expect_bytes(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

// One arrival (release: this thread's shared-memory reads before it are done).
__device__ __forceinline__ void mbarrier_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Waits until the phase of the given parity has completed. A fresh barrier
// is in phase 0, so waiting for parity 1 returns at once (the producer's
// first pass over empty stages).
__device__ __forceinline__ void mbarrier_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

// An L2 policy for data read once (the weights of a decode GEMM): evicted first.
__device__ __forceinline__ uint64_t l2_evict_first_policy() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}

// Copies `bytes` (a multiple of 16; both addresses 16-byte aligned) from
// global to shared memory, counted down on `bar` when they land.
__device__ __forceinline__ void bulk_copy_to_shared(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar,
                                                    uint64_t policy) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;\n" ::"r"(
          dst),
      "l"(src), "r"(bytes), "r"(bar), "l"(policy)
      : "memory");
}

}  // namespace qgemm::detail
