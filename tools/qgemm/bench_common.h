// bench_common.h — what every `qgemm bench <op>` shares: command-line
// options, timing statistics, the result table and its JSON file (device,
// commit, command line, one record per op × shape × implementation).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace qgemm::tools {

// --key value / --flag options after the subcommand words. `accepted` names
// the keys the command reads; any other is rejected with a message that lists
// them (a mistyped option must not silently run the defaults).
class Options {
 public:
  Options(int argc, char** argv, int first, std::vector<std::string> accepted);
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  std::string get(const std::string& key, const std::string& fallback) const;
  int get_int(const std::string& key, int fallback) const;
  double get_double(const std::string& key, double fallback) const;
  // Comma-separated list of AxBxC shapes, e.g. "1024x1024x1024,16x4096x4096".
  std::vector<std::vector<int64_t>> get_shapes(const std::string& key,
                                               const std::vector<std::vector<int64_t>>& fallback) const;

 private:
  std::map<std::string, std::string> values_;
};

struct BenchRecord {
  std::string op;      // "scaled_mm", "quantize", ...
  std::string impl;    // "qgemm-int8", "cublaslt-int8", "torch-eager", ...
  std::string shape;   // "MxNxK" or "TxH"
  std::string device;  // "cpu" or "cuda"
  double median_us = 0;
  double min_us = 0;
  int runs = 0;
  double ops = 0;    // arithmetic operations (2·M·N·K for a GEMM); 0 if not meaningful
  double bytes = 0;  // bytes that must move through memory; 0 if not counted
  std::map<std::string, double> extra;  // e.g. {"speedup_vs_cublas_bf16", 1.9}
};

struct TimingStats {
  double median_us = 0;
  double min_us = 0;
  int runs = 0;
};

// A record of `op` on `shape` by `impl` on `device` ("cpu" | "cuda"),
// with the time, minimum and run count of `stats`.
BenchRecord timed_record(std::string op, std::string impl, std::string shape, std::string device,
                         const TimingStats& stats);
TimingStats summarize(std::vector<double> samples_us);

// Times fn on the CPU: `warmup` untimed calls, then `runs` timed calls.
TimingStats time_cpu(const std::function<void()>& fn, int warmup, int runs);

class BenchReport {
 public:
  BenchReport(std::string device_name, std::string command_line);
  void set_device_name(std::string name) { device_name_ = std::move(name); }
  void add(const BenchRecord& record);
  const std::vector<BenchRecord>& records() const { return records_; }
  // Fixed-width table on stdout: op, shape, impl, median, TOPS/GOPS, GB/s.
  void print_table() const;
  void write_json(const std::string& path) const;

 private:
  std::string device_name_;
  std::string command_line_;
  std::vector<BenchRecord> records_;
};

// R rounds that timed the same implementations in the same order (a
// benchmark's --rounds: every implementation of a shape timed R times,
// round-robin, so that a peer and qgemm see the same clocks), merged per
// implementation: median_us = the median of the round medians, min_us = the
// least sample, runs = all of them, every extra = its median over the rounds,
// plus extra "rounds" = R and "round_spread" = (max − min) / median of the
// round medians. Ratios of times (speedups, TOPS, bandwidth fractions) are
// the caller's to recompute from the merged medians. Throws if the rounds'
// records differ in number or implementation.
std::vector<BenchRecord> merge_rounds(const std::vector<BenchReport>& rounds);

std::string command_line_string(int argc, char** argv);

// One backend's part of a `qgemm bench <op>`.
using BenchPart = std::function<void(const Options&, BenchReport&)>;

// Runs the parts of a `qgemm bench <op>` that --device names: cpu, cuda or
// all (default: cuda where a GPU is present). `cuda` is empty in builds
// without the CUDA backend; asking for it there, or on a machine without a
// GPU, is an error. Prints the table and writes --json (default file name
// `default_json`); returns the exit code.
int run_bench_parts(const Options& options, const std::string& command_line, const BenchPart& cpu,
                    const BenchPart& cuda, const char* default_json);

// A GPU-only `qgemm bench <op>`: parses the options the command accepts,
// runs `bench`, prints the table and writes --json (default file name
// `default_json`); returns the exit code.
int run_gpu_bench_command(int argc, char** argv, std::vector<std::string> accepted,
                          const std::function<void(const Options&, BenchReport&)>& bench, const char* default_json);
std::string commit_string();
std::string cpu_name();

}  // namespace qgemm::tools
