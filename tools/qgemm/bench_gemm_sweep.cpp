#include "bench_gemm_sweep.h"

#include <algorithm>
#include <stdexcept>

namespace qgemm::tools {

using detail::GemmKernel;

const std::vector<GemmKernel>& gemm_sweep_kernels() {
  static const std::vector<GemmKernel> kernels = {
      GemmKernel::kSkinny,       GemmKernel::kSm90SkinnyStream, GemmKernel::kSm90Small1x2, GemmKernel::kSm90Small2x1,
      GemmKernel::kSm90Narrow,   GemmKernel::kSm90Narrow2x1,    GemmKernel::kSm90Square,   GemmKernel::kSm90Wide,
      GemmKernel::kSm90Wide1x2,  GemmKernel::kSm90Wide192,      GemmKernel::kSm90Coop128,  GemmKernel::kSm80Small,
      GemmKernel::kSm80Large,    GemmKernel::kSm90Direct,       GemmKernel::kSm90StreamK,  GemmKernel::kSm90Decode,
      GemmKernel::kSm90Wide80,   GemmKernel::kSm90Wide96,       GemmKernel::kSm90Wide80x4, GemmKernel::kSm90Wide96x4,
      GemmKernel::kSm90Wide80Pairs,   GemmKernel::kSm90Wide96Pairs,
      GemmKernel::kSm90Thin48,   GemmKernel::kSm90DecodeWgmma,  GemmKernel::kSm90Swapped,  GemmKernel::kSm90SwappedStreamK,
      GemmKernel::kSm90SwappedHalves, GemmKernel::kSm90SwappedHalvesStreamK,
      GemmKernel::kFallback};
  return kernels;
}

std::vector<GemmKernel> gemm_sweep_selection(const std::string& names) {
  const std::vector<GemmKernel>& every = gemm_sweep_kernels();
  if (names.empty()) return every;
  std::vector<GemmKernel> chosen;
  size_t begin = 0;
  while (begin <= names.size()) {
    const size_t end = std::min(names.find(',', begin), names.size());
    const std::string name = names.substr(begin, end - begin);
    const auto match =
        std::find_if(every.begin(), every.end(), [&](GemmKernel k) { return name == detail::gemm_kernel_name(k); });
    if (match == every.end()) {
      std::string known;
      for (GemmKernel k : every) known += std::string(known.empty() ? "" : ", ") + detail::gemm_kernel_name(k);
      throw std::invalid_argument("--kernels: unknown kernel '" + name + "' (known: " + known + ")");
    }
    chosen.push_back(*match);
    begin = end + 1;
  }
  return chosen;
}

}  // namespace qgemm::tools
