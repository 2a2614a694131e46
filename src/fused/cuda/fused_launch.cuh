// fused_launch.cuh — instantiation and launch of fused_row_kernel for one op:
// the vector width (16-byte vectors or single elements) and the register
// items come from the FusedLaunch chosen by fused_configs.h.
#pragma once

#include "core/cuda_check.h"
#include "core/cuda_launch.cuh"
#include "fused/cuda/fused_cuda.h"
#include "fused/cuda/fused_row_kernel.cuh"

namespace qgemm::detail::fused {

// Two-item rows of a norm op in a grid of few rows run the kFewRows build
// (fused_row_kernel.cuh): parameters loaded with the row, under a register
// cap of two blocks per SM instead of the op's occupancy cap.
template <class Op, int kVec, int kItems>
void launch_kernel(const FusedArgs& args, const FusedLaunch& launch) {
  auto kernel = fused_row_kernel<Op, kVec, kItems>;
  if constexpr (kItems == 2 && Op::kStats != RowStats::kNone) {
    if (launch.few_rows) kernel = fused_row_kernel<Op, kVec, kItems, true>;
  }
  launch_pdl_kernel(kernel, dim3(static_cast<unsigned>(args.tokens)), dim3(static_cast<unsigned>(launch.threads)), 0,
                    as_cuda_stream(args.stream), args.device.index, args);
}

template <class Op, int kVec>
void launch_items(const FusedArgs& args, const FusedLaunch& launch) {
  switch (launch.items) {
    case 1: return launch_kernel<Op, kVec, 1>(args, launch);
    case 2: return launch_kernel<Op, kVec, 2>(args, launch);
    case 4: return launch_kernel<Op, kVec, 4>(args, launch);
    case 8: return launch_kernel<Op, kVec, 8>(args, launch);
    default: return launch_kernel<Op, kVec, 0>(args, launch);
  }
}

// kVectorWidth: elements per 16 bytes of the op's input.
template <class Op, int kVectorWidth>
void launch_op(const FusedArgs& args, const FusedLaunch& launch) {
  if (launch.vector) {
    launch_items<Op, kVectorWidth>(args, launch);
  } else {
    launch_items<Op, 1>(args, launch);
  }
}

// Calls launch_op<OpTemplate<dtype>, 16 / size> for a float dtype.
template <template <DType> class OpTemplate>
void launch_by_float_dtype(DType dtype, const FusedArgs& args, const FusedLaunch& launch) {
  switch (dtype) {
    case DType::kFloat32: launch_op<OpTemplate<DType::kFloat32>, 4>(args, launch); break;
    case DType::kFloat16: launch_op<OpTemplate<DType::kFloat16>, 8>(args, launch); break;
    default: launch_op<OpTemplate<DType::kBFloat16>, 8>(args, launch); break;
  }
}

// int32 input (4 per 16 bytes) with parameters of `param_dtype`.
template <template <DType> class OpTemplate>
void launch_int32_by_param_dtype(DType param_dtype, const FusedArgs& args, const FusedLaunch& launch) {
  switch (param_dtype) {
    case DType::kFloat32: launch_op<OpTemplate<DType::kFloat32>, 4>(args, launch); break;
    case DType::kFloat16: launch_op<OpTemplate<DType::kFloat16>, 4>(args, launch); break;
    default: launch_op<OpTemplate<DType::kBFloat16>, 4>(args, launch); break;
  }
}

}  // namespace qgemm::detail::fused
