// qgemm — command line: `qgemm info`, `qgemm demo`, `qgemm dispatch`, `qgemm calibrate`,
// `qgemm bench <op>`.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "commands.h"

namespace {

void usage() {
  std::puts(
      "usage: qgemm <command> [options]\n"
      "  info                       version, build options, backends, CUDA devices\n"
      "  demo [--device cpu|cuda] [--tokens T] [--hidden K] [--out-features N]\n"
      "                             quantize a Llama-sized linear layer (W8A8) and run it\n"
      "  dispatch [--shapes MxNxK,...] [--gpu h100|h200|h100-pcie|a100|l40s] [--arch A] [--sms N]\n"
      "           [--dram-gbps G] [--no-workspace]\n"
      "                             the scaled-GEMM kernel the CUDA table picks per shape for\n"
      "                             that GPU, without one (default: the benchmark grid on an H100)\n"
      "  calibrate [--npy FILE,...] [--bins N] [--percentile P] [--batches B --tokens T --hidden H]\n"
      "                             a static activation scale by max / percentile / MSE / entropy\n"
      "                             for int8 and fp8, with each one's round-trip error (.npy batches,\n"
      "                             or synthetic heavy-tailed ones)\n"
      "  bench gemm [--device cpu|cuda|all] [--shapes MxNxK,...] [--json FILE]\n"
      "             [--warmup W] [--runs R] [--fp8 (cpu)] [--sweep] [--kernels name,...]\n"
      "             [--rounds N (also cpu)] [--cooldown MS] [--no-peers] [--no-workspace]\n"
      "             [--epilogue vectors|scalars|both (cuda)]\n"
      "                             time scaled_mm (and, on a GPU, its peers; --sweep: every\n"
      "                             kernel forced, or those --kernels names; --no-workspace:\n"
      "                             qgemm without its stream-K workspace; --epilogue scalars:\n"
      "                             per-tensor scales and no bias instead of per-token/channel + bias)\n"
      "  bench quant [--device cpu|cuda|all] [--shapes TxH,...] [--json FILE]\n"
      "             [--warmup W] [--runs R]\n"
      "                             time quantize / dequantize (GPU: vs copy bandwidth and peers)\n"
      "  bench fused [--device cpu|cuda] [--shapes TxH,...] [--ops name,...] [--sweep]\n"
      "             [--json FILE] [--warmup W] [--runs R]\n"
      "                             time the fused norm/activation + quantize ops (GPU: vs copy\n"
      "                             bandwidth and the unfused peer; --sweep: every launch config)\n"
      "  bench wonly [--device cpu|cuda|all] [--shapes NxK,...] [--tokens M,...] [--dtype bf16|fp16]\n"
      "             [--json FILE] [--warmup W] [--runs R] [--variants NAME,...] [--sweep] [--rounds N]\n"
      "             [--cooldown MS] (the last four: GPU)\n"
      "                             time weight_only_mm (W4A16, W8A16; GPU: vs cuBLAS in --dtype)\n"
      "  bench attention [--device cpu|cuda|all] [--shapes SxLxQHxKVHxD,...] [--json FILE]\n"
      "             [--warmup W] [--runs R] [--rounds N] [--cooldown MS]\n"
      "                             time paged_attention_decode over int8 / fp8 / bf16 KV caches\n"
      "                             (GPU: vs the bf16 cache and the copy bandwidth)\n"
      "  bench pdl [--json FILE] [--warmup W] [--runs R] [--batch B]\n"
      "                             back-to-back decode-size calls on the GPU with programmatic\n"
      "                             dependent launch off and on (qgemm/launch.h)\n"
      "-h, --help anywhere prints this; an option a command does not take is an error.");
}

bool asks_for_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "-h") || !std::strcmp(argv[i], "--help")) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace qgemm::tools;
  if (argc < 2 || asks_for_help(argc, argv)) {
    usage();
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  try {
    if (command == "info") return cmd_info(argc, argv);
    if (command == "demo") return cmd_demo(argc, argv);
    if (command == "dispatch") return cmd_dispatch(argc, argv);
    if (command == "calibrate") return cmd_calibrate(argc, argv);
    if (command == "bench" && argc >= 3) {
      const std::string op = argv[2];
      if (op == "gemm") return cmd_bench_gemm(argc, argv);
      if (op == "quant") return cmd_bench_quant(argc, argv);
      if (op == "fused") return cmd_bench_fused(argc, argv);
      if (op == "wonly") return cmd_bench_wonly(argc, argv);
      if (op == "attention") return cmd_bench_attention(argc, argv);
#if QGEMM_WITH_CUDA
      if (op == "pdl") return cmd_bench_pdl(argc, argv);
#endif
      std::fprintf(stderr, "qgemm bench: unknown op '%s'\n", op.c_str());
      return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "qgemm %s: error: %s\n", command.c_str(), e.what());
    return 1;
  }
  usage();
  return 2;
}
