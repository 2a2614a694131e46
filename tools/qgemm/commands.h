// commands.h — the subcommands of the qgemm command line.
#pragma once

#include "bench_common.h"

namespace qgemm::tools {

// A command's GPU part (run_bench_parts), or none in builds without the CUDA
// backend, where the GPU functions below are not defined.
#if QGEMM_WITH_CUDA
#define QGEMM_CUDA_PART(part) BenchPart(part)
#else
#define QGEMM_CUDA_PART(part) BenchPart()
#endif

int cmd_info(int argc, char** argv);
int cmd_demo(int argc, char** argv);
// `qgemm dispatch`: the CUDA table's kernel per shape for a described GPU (cmd_dispatch.cpp).
int cmd_dispatch(int argc, char** argv);
// `qgemm calibrate`: a static scale per calibration method and target (cmd_calibrate.cpp).
int cmd_calibrate(int argc, char** argv);

// `qgemm bench gemm`: CPU part (bench_gemm.cpp) and, in CUDA builds, the GPU
// part with its peers (bench_gemm_cuda.cu).
int cmd_bench_gemm(int argc, char** argv);
void bench_gemm_cpu(const Options& options, BenchReport& report);
void bench_gemm_cuda(const Options& options, BenchReport& report);

// `qgemm bench quant`: CPU part (bench_quant.cpp) and, in CUDA builds, the
// GPU part with its peers (bench_quant_cuda.cu, bench_quant_peers.cu).
int cmd_bench_quant(int argc, char** argv);
void bench_quant_cpu(const Options& options, BenchReport& report);
void bench_quant_cuda(const Options& options, BenchReport& report);

// `qgemm bench fused`: CPU part (bench_fused.cpp) and, in CUDA builds, the
// GPU part with the unfused peer (bench_fused_cuda.cu, bench_fused_peers.cuh;
// with --sweep, bench_fused_sweep_cuda instead).
int cmd_bench_fused(int argc, char** argv);
void bench_fused_cpu(const Options& options, BenchReport& report);
void bench_fused_cuda(const Options& options, BenchReport& report);
// `qgemm bench fused --sweep`: every launch config per shape (bench_fused_sweep.cu).
void bench_fused_sweep_cuda(const Options& options, BenchReport& report);

// `qgemm bench wonly`: CPU part (bench_wonly.cpp) and, in CUDA builds, the
// GPU part with cuBLAS bf16 (bench_wonly_cuda.cu).
int cmd_bench_wonly(int argc, char** argv);
void bench_wonly_cpu(const Options& options, BenchReport& report);
void bench_wonly_cuda(const Options& options, BenchReport& report);

// `qgemm bench attention`: CPU part (bench_attention.cpp) and, in CUDA
// builds, the GPU part with the bf16 cache and the copy bandwidth
// (bench_attention_cuda.cu).
int cmd_bench_attention(int argc, char** argv);
void bench_attention_cpu(const Options& options, BenchReport& report);
void bench_attention_cuda(const Options& options, BenchReport& report);

// `qgemm bench pdl` (GPU only): back-to-back calls with programmatic
// dependent launch off and on (bench_pdl_cuda.cu).
int cmd_bench_pdl(int argc, char** argv);
void bench_pdl_cuda(const Options& options, BenchReport& report);

}  // namespace qgemm::tools
