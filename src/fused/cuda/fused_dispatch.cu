// CUDA entry of the fused ops: decides whether the call can use 16-byte
// vector accesses (every row start and parameter aligned, N a multiple of the
// vector width), picks the launch from the table in fused_configs.h and
// hands over to the op family's launcher.
#include <limits>
#include <string>

#include "core/cuda_check.h"
#include "core/cuda_device_info.h"
#include "fused/cuda/fused_configs.h"
#include "fused/cuda/fused_cuda.h"

namespace qgemm::detail {
namespace {

bool aligned(const void* p, int64_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

// A [T, ·] matrix whose every row start is aligned to `bytes` (null: absent).
bool rows_aligned(const void* base, int64_t ld, int64_t element_bytes, int64_t bytes) {
  return base == nullptr || (aligned(base, bytes) && (ld * element_bytes) % bytes == 0);
}

bool param_aligned(const void* p, int64_t bytes) { return p == nullptr || aligned(p, bytes); }

// Elements of the op's input per 16 bytes.
int vector_width(DType x_dtype) { return x_dtype == DType::kFloat16 || x_dtype == DType::kBFloat16 ? 8 : 4; }

// True when every access of a kVec-element chunk can be one aligned vector.
bool can_vectorize(const FusedArgs& a, int vec) {
  if (a.hidden % vec != 0) return false;
  const int64_t x_bytes = static_cast<int64_t>(dtype_size(a.x_dtype));
  const int64_t p_bytes = static_cast<int64_t>(dtype_size(a.param_dtype));
  const int64_t r_bytes = a.x_dtype == DType::kInt32 ? 1 : x_bytes;  // int8 residual with int32 x
  return rows_aligned(a.x, a.ldx, x_bytes, vec * x_bytes) &&
         rows_aligned(a.q, a.ldq, 1, vec) &&
         rows_aligned(a.residual, a.ld_residual, r_bytes, vec * r_bytes) &&
         param_aligned(a.weight, vec * p_bytes) && param_aligned(a.beta, vec * p_bytes) &&
         param_aligned(a.bias, vec * p_bytes) &&
         (!a.scale_w_per_channel || param_aligned(a.scale_w, vec * 4));
}

}  // namespace

void fused_cuda(const FusedArgs& args) {
  if (args.tokens > std::numeric_limits<int32_t>::max()) {
    throw Error(ErrorKind::kValue, "x: T=" + std::to_string(args.tokens) +
                                       " rows exceed the CUDA grid (one block per row)");
  }
  CudaDeviceGuard guard(args.device);
  const int vec = vector_width(args.x_dtype);
  const int sm_count = cuda_device_info(args.device.index).sm_count;
  const FusedLaunch launch = select_fused_launch(args.tokens, args.hidden, vec, can_vectorize(args, vec), sm_count,
                                                 prefers_four_items(args.op, args.x_dtype, args.residual != nullptr));
  if (args.op == FusedOp::kRmsNorm || args.op == FusedOp::kLayerNorm) {
    launch_fused_norm(args, launch);
  } else {
    launch_fused_act(args, launch);
  }
}

}  // namespace qgemm::detail
