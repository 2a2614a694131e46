// sm90_no_workspace.cuh — the host side CUTLASS asks of an epilogue (or of
// an epilogue-tree leaf) whose device parameters are its host arguments
// unchanged and that needs no global workspace: to_underlying_arguments
// returns the arguments, the workspace is 0 bytes and needs no setup.
// The direct-store epilogue and the staged vector leaves derive from it.
#pragma once

#include <cstddef>

#include "cutlass/cutlass.h"
#include "cutlass/cuda_host_adapter.hpp"

namespace qgemm::detail::sm90 {

struct NoWorkspace {
  template <class ProblemShape, class Arguments>
  static constexpr Arguments to_underlying_arguments(ProblemShape const&, Arguments const& args, void*) {
    return args;
  }
  template <class ProblemShape, class Arguments>
  static size_t get_workspace_size(ProblemShape const&, Arguments const&) {
    return 0;
  }
  template <class ProblemShape, class Arguments>
  static cutlass::Status initialize_workspace(ProblemShape const&, Arguments const&, void*, cudaStream_t,
                                              cutlass::CudaHostAdapter* = nullptr) {
    return cutlass::Status::kSuccess;
  }
};

}  // namespace qgemm::detail::sm90
