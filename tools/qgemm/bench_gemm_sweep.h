// bench_gemm_sweep.h — the kernels `qgemm bench gemm --sweep` forces on the
// GPU, and the `--kernels` selection of them. Host code (CUDA builds only),
// so that the command checks the names before it touches a GPU.
#pragma once

#include <string>
#include <vector>

#include "gemm/cuda/kernels.h"

namespace qgemm::tools {

// Every kernel of the sweep, in the order it times them.
const std::vector<detail::GemmKernel>& gemm_sweep_kernels();

// All of gemm_sweep_kernels() for empty `names`, else those named (a
// comma-separated list of gemm_kernel_name()s, in that order). An unknown
// name is an std::invalid_argument that names it and lists the known ones.
std::vector<detail::GemmKernel> gemm_sweep_selection(const std::string& names);

}  // namespace qgemm::tools
