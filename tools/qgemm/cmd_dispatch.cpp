// `qgemm dispatch`: which scaled-GEMM kernel the CUDA dispatch table
// (src/gemm/cuda/dispatch_table.h) picks for each shape, for a GPU described
// by its compute capability, SM count and peak DRAM bandwidth — no GPU
// needed. Shows what a table change moves (run it before and after) and what
// a shape will run on a card one does not have. Outputs are assumed to be
// aligned for TMA (otherwise scaled_mm_cuda sends the output to the
// direct-store twin: docs/gemm.md, "Outputs TMA cannot store").
#include <cstdio>
#include <stdexcept>
#include <string>

#include "bench_common.h"
#include "commands.h"
#include "gemm/cuda/dispatch_table.h"
#include "gemm/cuda/kernels.h"
#include "gemm_grid.h"

namespace qgemm::tools {
namespace {

struct Gpu {
  int arch;
  int sms;
  int64_t dram_gbps;  // peak, as cuda_peak_dram_gbps computes it (`qgemm info`)
};

// The cards the tables were measured on (docs/performance.md), and three
// from their data sheets (peak DRAM as peak_dram_gbps computes it from the
// memory clock and bus width).
Gpu named_gpu(const std::string& name) {
  if (name == "h100") return {90, 132, 3352};       // H100 SXM: 2619 MHz × 5120 bits
  if (name == "h200") return {90, 132, 4814};       // as the device tool's H200 reports it
  if (name == "h100-pcie") return {90, 114, 2039};  // 1593 MHz × 5120 bits
  if (name == "a100") return {80, 108, 2039};       // A100 80GB SXM
  if (name == "l40s") return {89, 142, 864};        // GDDR6, 384 bits
  throw std::invalid_argument("--gpu: expected h100, h200, h100-pcie, a100 or l40s, got '" + name + "'");
}

int positive(const Options& options, const std::string& key, int fallback) {
  const int value = options.get_int(key, fallback);
  if (value <= 0) throw std::invalid_argument("--" + key + ": expected a positive number, got " + std::to_string(value));
  return value;
}

// The kernel's name; for precise fp8 on Hopper kSm90Square's own tile
// (kernels.h), and for fp8 with fast accumulation whether it runs precise
// (fp8_fast_runs_precise: only the Hopper table says so).
std::string described(detail::GemmKernel kernel, bool int8, bool fast, int arch) {
  std::string name = detail::gemm_kernel_name(kernel);
  const bool hopper = arch / 10 == 9;
  if (hopper && !int8 && !fast && kernel == detail::GemmKernel::kSm90Square) name += " (64x128)";
  if (hopper && fast && detail::fp8_fast_runs_precise(kernel)) name += " (precise)";
  return name;
}

}  // namespace

int cmd_dispatch(int argc, char** argv) {
  const Options options(argc, argv, 2, {"shapes", "gpu", "arch", "sms", "dram-gbps", "no-workspace"});
  Gpu gpu = named_gpu(options.get("gpu", "h100"));
  gpu.arch = positive(options, "arch", gpu.arch);
  gpu.sms = positive(options, "sms", gpu.sms);
  gpu.dram_gbps = positive(options, "dram-gbps", static_cast<int>(gpu.dram_gbps));
  const bool workspace = !options.has("no-workspace");
  const auto shapes = options.get_shapes("shapes", gemm_grid_shapes());
  for (const auto& shape : shapes) {
    if (shape.size() != 3 || shape[0] <= 0 || shape[1] <= 0 || shape[2] <= 0) {
      throw std::invalid_argument("--shapes takes positive MxNxK triples");
    }
  }
  std::printf("sm_%d, %d SMs, peak DRAM %lld GB/s (%s), %s\n", gpu.arch, gpu.sms,
              static_cast<long long>(gpu.dram_gbps),
              detail::dram_fast_per_sm(gpu.dram_gbps, gpu.sms) ? "fast: more than 30 GB/s per SM" : "not fast",
              gpu.arch / 10 != 9 ? "no kernel takes a workspace off Hopper"
              : workspace       ? "with a stream-K workspace"
                                : "without a workspace");
  std::printf("%-18s %-32s %-32s %s\n", "MxNxK", "int8", "fp8", "fp8 fast");
  for (const auto& shape : shapes) {
    const int64_t m = shape[0], n = shape[1], k = shape[2];
    const auto pick = [&](bool int8, bool fast) {
      return detail::table_kernel(gpu.arch, int8, fast, m, n, k, gpu.sms, gpu.dram_gbps, workspace);
    };
    const std::string label = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    std::printf("%-18s %-32s %-32s %s\n", label.c_str(), described(pick(true, false), true, false, gpu.arch).c_str(),
                described(pick(false, false), false, false, gpu.arch).c_str(),
                described(pick(false, true), false, true, gpu.arch).c_str());
  }
  return 0;
}

}  // namespace qgemm::tools
