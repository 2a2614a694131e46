// Options parsing, timing statistics and the JSON/table report of bench_common.h.
#include "bench_common.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "qgemm/version.h"
#include "qgemm_commit.h"

namespace qgemm::tools {
namespace {

// The integer `text` spells in full ("12", "-3"), or nothing ("12x", "", "1e3",
// or beyond long long).
std::optional<long long> whole_integer(const std::string& text) {
  size_t used = 0;
  try {
    const long long value = std::stoll(text, &used);
    if (used == text.size()) return value;
  } catch (const std::logic_error&) {  // not a number, or out of range
  }
  return std::nullopt;
}

}  // namespace

Options::Options(int argc, char** argv, int first, std::vector<std::string> accepted) {
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) throw std::invalid_argument("unexpected argument '" + arg + "'");
    const std::string key = arg.substr(2);
    if (std::find(accepted.begin(), accepted.end(), key) == accepted.end()) {
      std::string names;
      for (const std::string& name : accepted) names += (names.empty() ? "--" : ", --") + name;
      throw std::invalid_argument("unknown option '" + arg + "' (accepted: " + (names.empty() ? "none" : names) + ")");
    }
    if (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) {
      values_[key] = argv[++i];
    } else {
      values_[key] = "";
    }
  }
}

std::string Options::get(const std::string& key, const std::string& fallback) const {
  auto it = values_.find(key);
  return it == values_.end() ? fallback : it->second;
}

int Options::get_int(const std::string& key, int fallback) const {
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  const std::optional<long long> value = whole_integer(it->second);
  if (!value || *value < std::numeric_limits<int>::min() || *value > std::numeric_limits<int>::max()) {
    throw std::invalid_argument("--" + key + ": expected an integer, got '" + it->second + "'");
  }
  return static_cast<int>(*value);
}

double Options::get_double(const std::string& key, double fallback) const {
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  size_t used = 0;
  try {
    const double value = std::stod(it->second, &used);
    if (used == it->second.size()) return value;
  } catch (const std::logic_error&) {  // not a number, or out of range
  }
  throw std::invalid_argument("--" + key + ": expected a number, got '" + it->second + "'");
}

std::vector<std::vector<int64_t>> Options::get_shapes(
    const std::string& key, const std::vector<std::vector<int64_t>>& fallback) const {
  auto it = values_.find(key);
  if (it == values_.end()) return fallback;
  std::vector<std::vector<int64_t>> shapes;
  std::stringstream list(it->second);
  std::string item;
  while (std::getline(list, item, ',')) {
    std::vector<int64_t> dims;
    std::stringstream dims_stream(item);
    std::string dim;
    while (std::getline(dims_stream, dim, 'x')) {
      const std::optional<long long> size = whole_integer(dim);
      if (!size) throw std::invalid_argument("--" + key + ": expected AxB or AxBxC sizes, got '" + item + "'");
      dims.push_back(*size);
    }
    shapes.push_back(dims);
  }
  return shapes;
}

TimingStats summarize(std::vector<double> samples_us) {
  TimingStats stats;
  if (samples_us.empty()) return stats;
  std::sort(samples_us.begin(), samples_us.end());
  const size_t n = samples_us.size();
  stats.median_us = n % 2 ? samples_us[n / 2] : 0.5 * (samples_us[n / 2 - 1] + samples_us[n / 2]);
  stats.min_us = samples_us.front();
  stats.runs = static_cast<int>(n);
  return stats;
}

BenchRecord timed_record(std::string op, std::string impl, std::string shape, std::string device,
                         const TimingStats& stats) {
  BenchRecord r;
  r.op = std::move(op);
  r.impl = std::move(impl);
  r.shape = std::move(shape);
  r.device = std::move(device);
  r.median_us = stats.median_us;
  r.min_us = stats.min_us;
  r.runs = stats.runs;
  return r;
}

TimingStats time_cpu(const std::function<void()>& fn, int warmup, int runs) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> samples;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    const auto stop = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double, std::micro>(stop - start).count());
  }
  return summarize(samples);
}

BenchReport::BenchReport(std::string device_name, std::string command_line)
    : device_name_(std::move(device_name)), command_line_(std::move(command_line)) {}

void BenchReport::add(const BenchRecord& record) { records_.push_back(record); }

void BenchReport::print_table() const {
  std::printf("device: %s\ncommit: %s\ncommand: %s\n", device_name_.c_str(), commit_string().c_str(),
              command_line_.c_str());
  std::printf("%-14s %-22s %-24s %12s %10s %10s %s\n", "op", "shape", "impl", "median_us", "TOPS",
              "GB/s", "extra");
  for (const auto& r : records_) {
    const double tops = r.ops > 0 ? r.ops / (r.median_us * 1e6) : 0.0;
    const double gbps = r.bytes > 0 ? r.bytes / (r.median_us * 1e3) : 0.0;
    std::ostringstream extra;
    for (const auto& [k, v] : r.extra) extra << k << "=" << std::setprecision(4) << v << " ";
    std::printf("%-14s %-22s %-24s %12.2f %10.3f %10.1f %s\n", r.op.c_str(), r.shape.c_str(),
                r.impl.c_str(), r.median_us, tops, gbps, extra.str().c_str());
  }
}

static std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

void BenchReport::write_json(const std::string& path) const {
  std::ofstream os(path);
  if (!os) throw std::runtime_error("cannot write " + path);
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  os << std::setprecision(6);
  os << "{\n  \"device\": \"" << json_escape(device_name_) << "\",\n";
  os << "  \"commit\": \"" << json_escape(commit_string()) << "\",\n";
  os << "  \"command\": \"" << json_escape(command_line_) << "\",\n";
  os << "  \"qgemm_version\": \"" << qgemm::version() << "\",\n";
  os << "  \"date\": \"" << date << "\",\n  \"records\": [\n";
  for (size_t i = 0; i < records_.size(); ++i) {
    const auto& r = records_[i];
    os << "    {\"op\": \"" << r.op << "\", \"impl\": \"" << r.impl << "\", \"shape\": \"" << r.shape
       << "\", \"device\": \"" << r.device << "\", \"median_us\": " << r.median_us
       << ", \"min_us\": " << r.min_us << ", \"runs\": " << r.runs << ", \"ops\": " << r.ops
       << ", \"bytes\": " << r.bytes;
    for (const auto& [k, v] : r.extra) os << ", \"" << k << "\": " << v;
    os << "}" << (i + 1 < records_.size() ? "," : "") << "\n";
  }
  os << "  ]\n}\n";
  std::printf("wrote %s\n", path.c_str());
}

std::vector<BenchRecord> merge_rounds(const std::vector<BenchReport>& rounds) {
  if (rounds.empty()) return {};
  const std::vector<BenchRecord>& first = rounds.front().records();
  std::vector<BenchRecord> merged;
  merged.reserve(first.size());
  for (size_t i = 0; i < first.size(); ++i) {
    BenchRecord r = first[i];
    std::vector<double> medians;
    std::map<std::string, std::vector<double>> extras;
    r.runs = 0;
    for (const BenchReport& round : rounds) {
      if (round.records().size() != first.size() || round.records()[i].impl != first[i].impl ||
          round.records()[i].shape != first[i].shape) {
        throw std::logic_error("merge_rounds: the rounds timed different implementations or shapes");
      }
      const BenchRecord& x = round.records()[i];
      medians.push_back(x.median_us);
      r.min_us = std::min(r.min_us, x.min_us);
      r.runs += x.runs;
      for (const auto& [key, value] : x.extra) extras[key].push_back(value);
    }
    r.median_us = summarize(medians).median_us;
    for (auto& [key, values] : extras) r.extra[key] = summarize(values).median_us;
    const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
    r.extra["rounds"] = static_cast<double>(rounds.size());
    r.extra["round_spread"] = (*hi - *lo) / r.median_us;
    merged.push_back(std::move(r));
  }
  return merged;
}

int run_gpu_bench_command(int argc, char** argv, std::vector<std::string> accepted,
                          const std::function<void(const Options&, BenchReport&)>& bench, const char* default_json) {
  const Options options(argc, argv, 3, std::move(accepted));
  BenchReport report("", command_line_string(argc, argv));
  bench(options, report);
  report.print_table();
  if (options.has("json")) report.write_json(options.get("json", default_json));
  return 0;
}

int run_bench_parts(const Options& options, const std::string& command_line, const BenchPart& cpu,
                    const BenchPart& cuda, const char* default_json) {
  const std::string device = options.get("device", qgemm::cuda_device_count() > 0 ? "cuda" : "cpu");
  if (device != "cpu" && device != "cuda" && device != "all") {
    throw std::invalid_argument("--device: expected cpu, cuda or all, got '" + device + "'");
  }
  if (device != "cpu" && !cuda) throw std::runtime_error("--device " + device + ": this build has no CUDA backend");
  if (device != "cpu" && qgemm::cuda_device_count() == 0) {
    throw std::runtime_error("--device " + device + ": no CUDA GPU found");
  }
  BenchReport report(device == "cpu" ? cpu_name() : "", command_line);  // the GPU part names its device
  if (device != "cuda") cpu(options, report);
  if (device != "cpu") cuda(options, report);
  report.print_table();
  if (options.has("json")) report.write_json(options.get("json", default_json));
  return 0;
}

std::string command_line_string(int argc, char** argv) {
  std::string s = "qgemm";
  for (int i = 1; i < argc; ++i) s += std::string(" ") + argv[i];
  return s;
}

std::string commit_string() {
  // The device machine receives a copy of the tree without .git; the caller
  // then passes the commit in QGEMM_COMMIT.
  if (const char* env = std::getenv("QGEMM_COMMIT"); env != nullptr && *env) return env;
  return QGEMM_COMMIT;
}

std::string cpu_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown CPU";
}

}  // namespace qgemm::tools
