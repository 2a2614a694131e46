// The variant table of `qgemm bench wonly` (bench_wonly_variants.h).
#include "bench_wonly_variants.h"

#include <sstream>
#include <stdexcept>

namespace qgemm::tools {

DType wonly_bench_dtype(const Options& options) {
  const std::string dtype = options.get("dtype", "bf16");
  if (dtype == "bf16") return DType::kBFloat16;
  if (dtype == "fp16") return DType::kFloat16;
  throw std::invalid_argument("--dtype: expected bf16 or fp16, got '" + dtype + "'");
}

std::vector<WonlyVariant> wonly_variants(DType dtype) {
  const std::string params16 = std::string("-") + dtype_name(dtype) + "-params";
  // {name, int4, group (0: per channel), offsets, prepacked, params16, group_major}
  return {
      {"w4a16-g128", true, 128, true, false, false, false},
      {"w4a16-g128-prepacked", true, 128, true, true, false, false},
      {"w8a16-channel", false, 0, false, false, false, false},
      {"w8a16-channel-prepacked", false, 0, false, true, false, false},
      {"w4a16-g128" + params16, true, 128, true, false, true, false},
      {"w4a16-g128-prepacked" + params16, true, 128, true, true, true, false},
      {"w4a16-g128-group-major", true, 128, true, false, false, true},
      {"w4a16-g128-prepacked-group-major", true, 128, true, true, false, true},
      {"w4a16-g128" + params16 + "-group-major", true, 128, true, false, true, true},
      {"w4a16-g128-prepacked" + params16 + "-group-major", true, 128, true, true, true, true},
  };
}

std::vector<WonlyVariant> selected_wonly_variants(const Options& options, DType dtype) {
  const std::vector<WonlyVariant> all = wonly_variants(dtype);
  if (!options.has("variants")) return all;
  std::vector<std::string> wanted;
  std::stringstream list(options.get("variants", ""));
  for (std::string name; std::getline(list, name, ',');) {
    bool known = false;
    for (const WonlyVariant& v : all) known = known || v.name == name;
    if (!known) {
      std::string names;
      for (const WonlyVariant& v : all) names += (names.empty() ? "" : ", ") + v.name;
      throw std::invalid_argument("--variants: unknown variant '" + name + "' for --dtype " + dtype_name(dtype) +
                                  " (known: " + names + ")");
    }
    wanted.push_back(name);
  }
  if (wanted.empty()) throw std::invalid_argument("--variants: expected NAME,... (none given)");
  std::vector<WonlyVariant> selected;
  for (const WonlyVariant& v : all) {
    for (const std::string& name : wanted) {
      if (v.name == name) {
        selected.push_back(v);
        break;
      }
    }
  }
  return selected;
}

}  // namespace qgemm::tools
