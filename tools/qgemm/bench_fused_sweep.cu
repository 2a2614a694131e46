// `qgemm bench fused --sweep` (GPU): times the fused row kernel of a few ops
// under every (threads, items) launch that holds the row in registers, to
// derive or check the table of src/fused/cuda/fused_configs.h on a GPU. It
// calls the CUDA launchers directly with a hand-built FusedArgs (the public
// entries always take the table's choice); records carry impl
// "sweep-<threads>x<items>" and table_choice = 1 on the table's pick.
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_fused_ops.h"
#include "commands.h"
#include "cuda_bench.h"
#include "fused/cuda/fused_configs.h"
#include "fused/cuda/fused_cuda.h"

namespace qgemm::tools {
namespace {

using detail::FusedArgs;
using detail::FusedOp;

// The library op a bench op calls.
FusedOp library_op(FusedBenchOp op) {
  switch (op) {
    case FusedBenchOp::kRms:
    case FusedBenchOp::kAddRms: return FusedOp::kRmsNorm;
    case FusedBenchOp::kLayerNorm:
    case FusedBenchOp::kLayerNormInt32: return FusedOp::kLayerNorm;
    case FusedBenchOp::kSiluMul: return FusedOp::kSiluMul;
    default: return FusedOp::kGelu;
  }
}

// One op of the sweep: the library op, whether it reads a residual and
// whether its input is int32 all follow from the bench op.
struct SweepOp {
  const char* name;
  FusedBenchOp bench_op;
  FusedOp op;
  bool residual, int32_input;
  SweepOp(const char* op_name, FusedBenchOp bench)
      : name(op_name),
        bench_op(bench),
        op(library_op(bench)),
        residual(bench == FusedBenchOp::kAddRms || op == FusedOp::kLayerNorm),
        int32_input(bench == FusedBenchOp::kLayerNormInt32 || bench == FusedBenchOp::kGeluInt32) {}
};

const SweepOp kSweepOps[] = {
    {"rms_norm_quant", FusedBenchOp::kRms},
    {"add_rms_norm_quant", FusedBenchOp::kAddRms},
    {"layer_norm_quant", FusedBenchOp::kLayerNorm},  // with bias and residual, as the bench's
    {"layer_norm_quant_int32", FusedBenchOp::kLayerNormInt32},
    {"silu_and_mul_quant", FusedBenchOp::kSiluMul},
    {"bias_gelu_quant", FusedBenchOp::kGelu},  // erf form, with bias
};

}  // namespace

void bench_fused_sweep_cuda(const Options& options, BenchReport& report) {
  report.set_device_name(cuda::device_name(0));
  cudaStream_t stream = nullptr;
  const int warmup = options.get_int("warmup", 10), runs = options.get_int("runs", 100);
  const double copy_gbps = cuda::copy_bandwidth_gbps(size_t(1) << 30, stream);
  const auto shapes = options.get_shapes("shapes", {{256, 4096}, {4096, 4096}, {16384, 4096}, {4096, 8192}, {16384, 8192}});
  for (const auto& s : shapes) {
    if (s.size() != 2) throw std::invalid_argument("--shapes takes TxH pairs");
    const int64_t t = s[0], h = s[1];
    const size_t th = static_cast<size_t>(t * h);
    const int sets = cuda::rotation_sets(th * 10);
    // x: bf16 [T, 2H] (the int32 op reads the same bytes as int32 [T, H]);
    // residual: bf16 [T, H] (the int32 op reads its bytes as int8).
    cuda::DeviceBuffer x(th * 4 * sets), residual(th * 2 * sets), q(th * sets), scale(t * 4), params(h * 6),
        scale_w(h * 4);
    cuda::fill_random(x.get(), DType::kBFloat16, 2 * th * sets, -2, 2, 41, stream);
    cuda::fill_random(residual.get(), DType::kBFloat16, th * sets, -2, 2, 42, stream);
    cuda::fill_random(params.get(), DType::kBFloat16, 3 * h, 0.5, 1.5, 43, stream);  // weight, beta, bias
    cuda::fill_random(scale_w.get(), DType::kFloat32, h, 0.5, 1.5, 45, stream);
    for (const SweepOp& op : kSweepOps) {
      FusedArgs a;
      a.op = op.op;
      a.tokens = t;
      a.hidden = h;
      a.x_dtype = op.int32_input ? DType::kInt32 : DType::kBFloat16;
      a.ldx = op.op == FusedOp::kSiluMul ? 2 * h : h;
      a.param_dtype = DType::kBFloat16;
      a.weight = params.get();
      a.beta = params.as<uint16_t>() + h;
      const bool float_layer_norm = op.op == FusedOp::kLayerNorm && !op.int32_input;
      a.bias = float_layer_norm || op.op == FusedOp::kGelu ? params.as<uint16_t>() + 2 * h : nullptr;
      a.scale_a = scale.as<float>();  // any positive values: a timing, not a check
      a.scale_w = scale_w.as<float>();
      a.scale_w_per_channel = true;
      a.residual_scale = scale_w.as<float>();
      a.ld_residual = h;
      a.ldq = h;
      a.scale = scale.as<float>();
      a.dynamic = !op.int32_input;
      a.eps = 1e-6f;
      a.device = Device::cuda(0);
      cuda::fill_random(scale.get(), DType::kFloat32, t, 0.01, 0.02, 44, stream);
      const int vec = op.int32_input ? 4 : 8;
      int sm_count = 0;
      cuda::check(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0), "SM count");
      const auto table = detail::select_fused_launch(t, h, vec, true, sm_count,
                                                     detail::prefers_four_items(op.op, a.x_dtype, op.residual));
      for (int threads : {64, 128, 256, 512}) {
        for (int items : {1, 2, 4, 8}) {
          if (static_cast<int64_t>(threads) * items * vec < h || (items > 1 && threads * (items / 2) * vec >= h)) continue;
          const detail::FusedLaunch launch{threads, items, true};
          const auto stats = cuda::time_cuda(
              [&](int i) {
                const size_t set = static_cast<size_t>(i % sets);
                FusedArgs call = a;
                call.x = static_cast<uint8_t*>(x.get()) + set * th * 4;
                call.residual = op.residual ? static_cast<uint8_t*>(residual.get()) + set * th * 2 : nullptr;
                call.q = static_cast<uint8_t*>(q.get()) + set * th;
                if (op.op == FusedOp::kSiluMul || op.op == FusedOp::kGelu) {
                  detail::launch_fused_act(call, launch);
                } else {
                  detail::launch_fused_norm(call, launch);
                }
              },
              stream, warmup, runs);
          const double bytes = fused_op_bytes(op.bench_op, static_cast<double>(t), static_cast<double>(h), a.dynamic);
          BenchRecord r = timed_record(op.name, "sweep-" + std::to_string(threads) + "x" + std::to_string(items),
                                       std::to_string(t) + "x" + std::to_string(h), "cuda", stats);
          r.bytes = bytes;
          r.extra["frac_of_copy_bw"] = bytes / (stats.median_us * 1e3) / copy_gbps;
          r.extra["table_choice"] = table.threads == threads && table.items == items ? 1 : 0;
          report.add(r);
        }
      }
    }
  }
}

}  // namespace qgemm::tools
