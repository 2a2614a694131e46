// The dense prefill path of weight_only_mm (wonly_dense.cuh) for bf16 and
// fp16 activations: both CUTLASS GEMMs in one unit, which takes ~1.1× the
// time of one of them alone (cicc instantiates their shared templates once;
// docs/building.md, "Build time").
#include "wonly/cuda/wonly_dense.cuh"

namespace qgemm::detail {

bool run_wonly_dense_bf16(const WeightOnlyArgs& args, int sm_count) { return wonly_dense::run<true>(args, sm_count); }

bool run_wonly_dense_fp16(const WeightOnlyArgs& args, int sm_count) { return wonly_dense::run<false>(args, sm_count); }

}  // namespace qgemm::detail
