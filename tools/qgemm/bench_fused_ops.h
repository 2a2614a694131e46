// bench_fused_ops.h — the fused ops `qgemm bench fused` times (bench_fused_cuda.cu)
// and its launch sweep (bench_fused_sweep.cu), and the minimum DRAM traffic of one
// call of each, the figure both quote bandwidth against.
#pragma once

namespace qgemm::tools {

// bf16 activations; the int32 forms read an int8 GEMM's accumulator (and,
// for LayerNorm, an int8 residual).
enum class FusedBenchOp { kRms, kAddRms, kLayerNorm, kLayerNormInt32, kSiluMul, kGelu, kGeluInt32 };

// Minimum DRAM bytes of one call at [T, H]: inputs read once, outputs written
// once, per-hidden parameters left out.
inline double fused_op_bytes(FusedBenchOp op, double t, double h, bool dynamic) {
  const double q = t * h + (dynamic ? 4 * t : 0);
  switch (op) {
    case FusedBenchOp::kRms: return 2 * t * h + q;
    case FusedBenchOp::kAddRms: return 2 * t * h + 2 * 2 * t * h + q;  // x, residual read + written
    case FusedBenchOp::kLayerNorm: return 2 * 2 * t * h + q;           // x + residual
    case FusedBenchOp::kLayerNormInt32: return 4 * t * h + t * h + q;  // int32 acc + int8 residual
    case FusedBenchOp::kSiluMul: return 2 * 2 * t * h + q;
    case FusedBenchOp::kGelu: return 2 * t * h + q;
    default: return 4 * t * h + q;  // kGeluInt32
  }
}

}  // namespace qgemm::tools
