// wonly_cuda.h — CUDA backend of the weight-only GEMMs (compiled only when
// QGEMM_WITH_CUDA). Arguments arrive validated.
#pragma once

#include <cstdint>

#include "wonly/wonly_args.h"

namespace qgemm::detail {

// Picks the kernel for M from the table in wonly_dispatch.cu and launches it.
void weight_only_mm_cuda(const WeightOnlyArgs& args);
// weight_only_workspace_bytes on CUDA device `device` (wonly_stream_k.h).
int64_t weight_only_workspace_bytes_cuda(int device);
void weight_only_prepack_cuda(uint8_t* out, const uint8_t* w, int64_t n, int64_t k,
                              int64_t ld_bytes, bool int4, Device device, Stream stream);

enum class WonlyKernel {
  kGemv,        // the decode kernel, one launch (wonly_gemv.cu)
  kStream,      // the Hopper int8 decode kernel, weight stages by bulk copy (wonly_stream_sm90.cu), M ≤ 16
  kGemvChunks,  // the decode kernel, one launch per 8·tile tokens (tile 2: per 16, each re-reading the
                // weight; tile 4: for M ≤ 32 the table's one four-token-block kGemv launch, forced)
  kMma,         // the mma.sync tensor-core kernel (wonly_mma.cu), sm_80+
  kWgmma,       // the wgmma tensor-core kernel (wonly_wgmma.cu), sm_90a
  kDense,       // dequantize once into the workspace, then a dense GEMM (wonly_dense.cuh), sm_90a
  kDenseMma,    // the same with the CUTLASS 2.x GEMM (wonly_dense_sm80.cu), sm_80+
};

// Bytes of the workspace that lets weight_only_mm take the dense path on
// CUDA device `device`: the dequantized N×K weight in 16-bit T, and at least
// the stream-K workspace (weight_only_dense_workspace_bytes).
int64_t weight_only_dense_workspace_bytes_cuda(int device, int64_t n, int64_t k);

// Whether the wgmma kernel is built and runs on `device` (compute capability 9.0).
bool wonly_wgmma_available(int device);
// Whether the Hopper int8 decode kernel (wonly_stream_sm90.cu) is built and runs on `device` (9.0).
bool wonly_stream_available(int device);
// Whether the dense prefill path (wonly_dense.cuh) is built and runs on `device`.
bool wonly_dense_available(int device);
// Whether its CUTLASS 2.x form (wonly_dense_sm80.cu) is built and runs on `device` (sm_80+).
bool wonly_dense_mma_available(int device);

// For tests and benchmarks: while one is alive on a thread, weight_only_mm
// calls on that thread with M > 16 run `kernel` (kMma, kWgmma, or
// kGemvChunks: decode launches of 8·tile tokens) with `tile` tokens per block
// tile (kGemvChunks: n8 token blocks, 2 or 4) instead of the dispatch table's
// choice. At M ≤ 16, kGemvChunks runs wonly_gemv (one launch) and kStream
// (tile 0) the Hopper int8 decode kernel; kStream at M > 16, on int4
// weights, with another tile or off sm_90 is an error; the other kernels
// leave M ≤ 16 to the table. kWgmma where it cannot run (not sm_90, not built) is an error, and
// so is a tile the kernel does not have (kMma: 64, 128; kWgmma: 32, 64, 128, 256;
// kGemvChunks: 2, 4; kDense, kDenseMma: 0) or another kernel. kDense and
// kDenseMma also need a workspace of weight_only_dense_workspace_bytes and
// operands their GEMM takes (an error otherwise).
class WonlyKernelOverride {
 public:
  WonlyKernelOverride(WonlyKernel kernel, int tile);
  ~WonlyKernelOverride();
  WonlyKernelOverride(const WonlyKernelOverride&) = delete;
  WonlyKernelOverride& operator=(const WonlyKernelOverride&) = delete;

 private:
  WonlyKernel previous_kernel_;
  int previous_tile_;
};

// For tests: while one is alive on a thread, wgmma launches of the 32-, 64- and
// 256-token tiles that have a workspace run stream-K (wonly_stream_k.h) with
// `ctas` CTAs (≥ 1, at most the kernel's resident CTAs: an error otherwise)
// whatever the balance of their tiles; ctas = 0 turns stream-K off.
class WonlyStreamKOverride {
 public:
  explicit WonlyStreamKOverride(int ctas);
  ~WonlyStreamKOverride();
  WonlyStreamKOverride(const WonlyStreamKOverride&) = delete;
  WonlyStreamKOverride& operator=(const WonlyStreamKOverride&) = delete;

 private:
  int previous_;
};

// The live override's CTA count, or −1 (read by wonly_wgmma.cu's launcher).
int stream_k_override_ctas();

// The kernels (wonly_gemv.cu, wonly_mma.cu, wonly_wgmma.cu).
void launch_wonly_gemv(const WeightOnlyArgs& args, int token_blocks);  // 1, 2 or 4; M ≤ 8·token_blocks
void launch_wonly_stream(const WeightOnlyArgs& args);                   // sm_90a; int8 weights, M ≤ 16
void launch_wonly_mma(const WeightOnlyArgs& args, int block_m);        // block_m 64 or 128
void launch_wonly_wgmma(const WeightOnlyArgs& args, int block_m);      // sm_90a; 64, 128 or 256
// The dense path (wonly_dense.cu, sm_90a): false, with
// nothing launched, when its GEMM cannot take these operands.
bool run_wonly_dense_bf16(const WeightOnlyArgs& args, int sm_count);
bool run_wonly_dense_fp16(const WeightOnlyArgs& args, int sm_count);
// The dense path with the CUTLASS 2.x GEMM (wonly_dense_sm80.cu, sm_80+).
bool run_wonly_dense_sm80(const WeightOnlyArgs& args);

}  // namespace qgemm::detail
