// bench_wonly_variants.h — what `qgemm bench wonly` times on the GPU: the
// weight variants (--variants picks some of them) and the activation dtype
// (--dtype), shared by the command (which rejects a bad value before any
// benchmark runs) and its GPU part (bench_wonly_cuda.cu).
#pragma once

#include <string>
#include <vector>

#include "bench_common.h"
#include "qgemm/tensor.h"

namespace qgemm::tools {

struct WonlyVariant {
  std::string name;  // records "qgemm-<name>"; a forced kernel's "sweep-<name>-<kernel>"
  bool int4;
  int group;  // 0: per channel
  bool offsets;
  bool prepacked;
  bool params16;     // scales and offsets in the activation dtype instead of fp32
  bool group_major;  // scales and offsets group-major: [K/group, N] viewed as [N, K/group]
  DType param_dtype(DType activations) const { return params16 ? activations : DType::kFloat32; }
  size_t param_bytes() const { return params16 ? 2 : 4; }
};

// --dtype: bf16 (the default) or fp16 — activations, output, 16-bit
// parameters and the cuBLAS peer.
DType wonly_bench_dtype(const Options& options);

// Every variant for activations of `dtype`, in the order they are timed.
// Names of 16-bit-parameter variants say the dtype ("-bf16-params",
// "-fp16-params").
std::vector<WonlyVariant> wonly_variants(DType dtype);

// --variants NAME,...: those variants (names without "qgemm-"), in the
// table's order; absent: all of them. An unknown name is an error that lists
// the known ones.
std::vector<WonlyVariant> selected_wonly_variants(const Options& options, DType dtype);

}  // namespace qgemm::tools
