// The dense prefill path of weight_only_mm (wonly_dense.cuh) for bf16
// activations: one translation unit per dtype, so the two CUTLASS GEMMs
// compile in parallel.
#include "wonly/cuda/wonly_dense.cuh"

namespace qgemm::detail {

bool run_wonly_dense_bf16(const WeightOnlyArgs& args, int sm_count) { return wonly_dense::run<true>(args, sm_count); }

}  // namespace qgemm::detail
