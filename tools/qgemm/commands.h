// commands.h — the subcommands of the qgemm command line.
#pragma once

#include "bench_common.h"

namespace qgemm::tools {

int cmd_info(int argc, char** argv);
int cmd_demo(int argc, char** argv);

// `qgemm bench gemm`: CPU part (bench_gemm.cpp) and, in CUDA builds, the GPU
// part with its peers (bench_gemm_cuda.cu).
int cmd_bench_gemm(int argc, char** argv);
void bench_gemm_cpu(const Options& options, BenchReport& report);
void bench_gemm_cuda(const Options& options, BenchReport& report);

// `qgemm bench quant` (GPU only): bench_quant_cuda.cu.
int cmd_bench_quant(int argc, char** argv);
void bench_quant_cuda(const Options& options, BenchReport& report);

}  // namespace qgemm::tools
