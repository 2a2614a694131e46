// `qgemm info`: version, build options, backends and the CUDA devices found.
#include <cstdio>
#include <thread>

#include "bench_common.h"
#include "commands.h"
#include "qgemm/version.h"
#if QGEMM_WITH_CUDA
#include "cuda_bench.h"
#endif

namespace qgemm::tools {

int cmd_info(int argc, char** argv) {
  const Options options(argc, argv, 2, {});  // takes none: any option is an error
  std::printf("qgemm %s (commit %s)\n", qgemm::version(), commit_string().c_str());
  std::printf("backends: cpu%s\n", qgemm::built_with_cuda() ? ", cuda" : "");
  std::printf("cpu: %s, %u hardware threads\n", cpu_name().c_str(), std::thread::hardware_concurrency());
  if (!qgemm::built_with_cuda()) {
    std::printf("cuda: not built (no CUDA compiler was found at configure time)\n");
    return 0;
  }
  std::printf("cuda archs: %s\n", qgemm::cuda_archs());
  const int devices = qgemm::cuda_device_count();
  std::printf("cuda devices: %d\n", devices);
#if QGEMM_WITH_CUDA
  for (int d = 0; d < devices; ++d) {
    std::printf("  cuda:%d %s, peak DRAM %d GB/s\n", d, cuda::device_name(d).c_str(), cuda::peak_dram_gbps(d));
  }
#endif
  return 0;
}

}  // namespace qgemm::tools
