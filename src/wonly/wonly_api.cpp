// Host entries of the weight-only GEMMs: validate every argument
// (core/check.h), build a WeightOnlyArgs and dispatch to the CPU twin or the
// CUDA backend. Nothing is validated anywhere else.
#include <string>

#include "core/check.h"
#include "qgemm/weight_only.h"
#include "wonly/cpu/wonly_cpu.h"
#include "wonly/wonly_args.h"
#if QGEMM_WITH_CUDA
#include "wonly/cuda/wonly_cuda.h"
#endif

namespace qgemm {
namespace {

using detail::check_dtype;
using detail::fail;
using detail::VectorOrientation;

constexpr int64_t kKMultiple = 32;

void check_common(const TensorView& t, const char* name, Device device) {
  detail::check_device(t, name, device, "out");
  detail::check_not_null(t, name);
  detail::check_element_aligned(t, name);
}

// The CUDA kernels read 16 bytes at a time.
void check_aligned16(const void* pointer, int64_t row_stride_bytes, bool many_rows,
                     const char* name) {
  const auto address = reinterpret_cast<uintptr_t>(pointer);
  if (address % 16 != 0) {
    fail(ErrorKind::kValue, std::string(name) + ": the CUDA kernels need a 16-byte aligned data "
                                                "pointer, got one at offset " +
                                std::to_string(address % 16) + " from 16");
  }
  if (many_rows && row_stride_bytes % 16 != 0) {
    fail(ErrorKind::kValue, std::string(name) + ": the CUDA kernels need a row stride that is a "
                                                "multiple of 16 bytes, got " +
                                std::to_string(row_stride_bytes) + " bytes");
  }
}

int64_t ceil_div(int64_t x, int64_t y) { return (x + y - 1) / y; }

// K from a plain weight's column count.
int64_t plain_k(const TensorView& w, bool int4) { return int4 ? 2 * w.size(1) : w.size(1); }

void check_k(int64_t k, const char* name) {
  if (k < kKMultiple || k % kKMultiple != 0) {
    fail(ErrorKind::kValue, std::string(name) + ": K=" + std::to_string(k) +
                                " must be a positive multiple of 32");
  }
}

void check_prepacked_shape(const TensorView& w, int64_t n, int64_t k, bool int4) {
  const PrepackedShape shape = weight_only_prepacked_shape(n, k, int4);
  if (w.size(0) != shape.row_blocks || w.size(1) != shape.k_tiles || w.size(2) != shape.tile_bytes) {
    fail(ErrorKind::kValue,
         std::string("w: a prepacked ") + (int4 ? "int4" : "int8") + " weight for N=" +
             std::to_string(n) + ", K=" + std::to_string(k) + " must have shape [" +
             std::to_string(shape.row_blocks) + ", " + std::to_string(shape.k_tiles) + ", " +
             std::to_string(shape.tile_bytes) + "], got " + detail::shape_string(w));
  }
  if (!w.is_contiguous()) {
    fail(ErrorKind::kValue, "w: a prepacked weight must be contiguous");
  }
}

// Scales / offsets: fp32 or the activation dtype, [N, G] row-major or
// group-major (each group's N values adjacent, strides (1, ld ≥ N): a [G, N]
// row-major tensor viewed transposed), or [N] / [N,1] when G == 1. Returns
// where (row, group) is: row·row + group·col.
detail::MatrixSteps check_params(const TensorView& t, const char* name, int64_t n, int64_t groups, DType act,
                                 Device device) {
  check_dtype(t, name, {DType::kFloat32, act});
  detail::MatrixSteps steps{groups, 1};
  if (groups == 1 && t.rank() == 1) {
    detail::check_vector(t, name, "N", n, VectorOrientation::kColumn);
  } else {
    steps = detail::check_row_or_col_major(t, name, "N", n, "K/group_size", groups);
  }
  check_common(t, name, device);
  return steps;
}

detail::WeightOnlyArgs validate(const TensorView& out, const TensorView& a, const TensorView& w,
                                const TensorView& scales, const std::optional<TensorView>& offsets,
                                int group_size, const std::optional<TensorView>& bias,
                                Stream stream) {
  const Device device = out.device();
  detail::check_backend_available(device, "weight_only_mm");
  check_dtype(out, "out", {DType::kBFloat16, DType::kFloat16});
  detail::check_rank(out, "out", 2);
  detail::check_rank(a, "a", 2);
  const int64_t m = out.size(0), n = out.size(1), k = a.size(1);
  detail::check_same_dtype(a, "a", out, "out");
  detail::check_row_major(out, "out", "M", m, "N", n);
  detail::check_row_major(a, "a", "M", m, "K", k);
  check_k(k, "a");

  if (group_size != k && group_size != 32 && group_size != 64 && group_size != 128) {
    fail(ErrorKind::kValue, "group_size: expected 32, 64, 128 or K=" + std::to_string(k) +
                                " (per channel), got " + std::to_string(group_size));
  }
  if (k % group_size != 0) {
    fail(ErrorKind::kValue, "group_size: K=" + std::to_string(k) +
                                " is not divisible by group_size=" + std::to_string(group_size));
  }
  const int64_t groups = k / group_size;

  check_dtype(w, "w", {DType::kInt8, DType::kUInt8});
  const bool int4 = w.dtype() == DType::kUInt8;
  detail::WeightOnlyArgs args;
  if (w.rank() == 2) {
    if (int4 && w.size(0) == n && w.size(1) == k) {
      fail(ErrorKind::kValue, "w: packed int4 weights must have shape [N=" + std::to_string(n) +
                                  ", K/2=" + std::to_string(k / 2) +
                                  "] (two 4-bit values per byte, see qgemm::pack_int4), got " +
                                  detail::shape_string(w) + ": unpacked int4?");
    }
    detail::check_row_major(w, "w", "N", n, int4 ? "K/2" : "K", int4 ? k / 2 : k);
    args.w_addr = detail::plain_addressing(n > 1 ? w.stride(0) : w.size(1));
  } else if (w.rank() == 3) {
    check_prepacked_shape(w, n, k, int4);
    args.w_addr = detail::prepacked_addressing(w.size(1));
    args.prepacked = true;
  } else {
    fail(ErrorKind::kValue, "w: expected a 2-D plain weight [N, K] (int8) / [N, K/2] (int4) or a "
                            "3-D prepacked one (weight_only_prepack), got shape " +
                                detail::shape_string(w));
  }

  check_common(out, "out", device);
  check_common(a, "a", device);
  check_common(w, "w", device);
  const detail::MatrixSteps scale_steps = check_params(scales, "scales", n, groups, out.dtype(), device);
  detail::MatrixSteps offset_steps{};
  if (offsets) {
    offset_steps = check_params(*offsets, "offsets", n, groups, out.dtype(), device);
    detail::check_same_dtype(*offsets, "offsets", scales, "scales");
  }
  if (bias) {
    detail::check_same_dtype(*bias, "bias", out, "out");
    detail::check_vector(*bias, "bias", "N", n, VectorOrientation::kRow);
    check_common(*bias, "bias", device);
  }
  if (device.is_cuda()) {
    check_aligned16(a.data(), (m > 1 ? a.stride(0) : k) * 2, m > 1, "a");
    check_aligned16(w.data(), args.w_addr.row_stride, !args.prepacked && n > 1, "w");
  }

  args.m = m;
  args.n = n;
  args.k = k;
  args.dtype = out.dtype();
  args.int4 = int4;
  args.group_size = group_size;
  args.a = a.data();
  args.lda = m > 1 ? a.stride(0) : k;
  args.w = static_cast<const uint8_t*>(w.data());
  args.scales = scales.data();
  args.ld_scales = scale_steps.row;
  args.params_group_stride = scale_steps.col;
  args.params16 = scales.dtype() != DType::kFloat32;
  if (offsets) {
    args.offsets = offsets->data();
    if (offset_steps.col != scale_steps.col) {
      fail(ErrorKind::kValue, "offsets: expected the scales' layout (group stride " + std::to_string(scale_steps.col) +
                                  ": " + (scale_steps.col == 1 ? "row-major" : "group-major") + "), got strides " +
                                  detail::strides_string(*offsets));
    }
    args.ld_offsets = offset_steps.row;
  }
  args.bias = bias ? bias->data() : nullptr;
  args.out = out.data();
  args.ldo = m > 1 ? out.stride(0) : n;
  args.device = device;
  args.stream = stream;
  return args;
}

}  // namespace

PrepackedShape weight_only_prepacked_shape(int64_t n, int64_t k, bool int4) {
  PrepackedShape shape;
  shape.row_blocks = ceil_div(n, 16);
  shape.k_tiles = ceil_div(k, int4 ? 128 : 64);
  return shape;
}

int64_t weight_only_workspace_bytes(Device device) {
  if (device.is_cpu()) return 0;
#if QGEMM_WITH_CUDA
  return detail::weight_only_workspace_bytes_cuda(device.index);
#else
  detail::check_backend_available(device, "weight_only_workspace_bytes");
  return 0;
#endif
}

int64_t weight_only_dense_workspace_bytes(Device device, int64_t n, int64_t k) {
  if (n < 0 || k < 0) {
    fail(ErrorKind::kValue, "weight_only_dense_workspace_bytes: expected n, k >= 0, got n=" + std::to_string(n) +
                                ", k=" + std::to_string(k));
  }
  if (device.is_cpu()) return 0;
#if QGEMM_WITH_CUDA
  return detail::weight_only_dense_workspace_bytes_cuda(device.index, n, k);
#else
  detail::check_backend_available(device, "weight_only_dense_workspace_bytes");
  return 0;
#endif
}

namespace {

void run(const detail::WeightOnlyArgs& args) {
  if (args.m == 0 || args.n == 0) return;
  if (args.device.is_cpu()) {
    detail::weight_only_mm_cpu(args);
    return;
  }
#if QGEMM_WITH_CUDA
  detail::weight_only_mm_cuda(args);
#endif
}

// The workspace of weight_only_mm: uint8, contiguous, 16-byte aligned, on
// out's device, at least weight_only_workspace_bytes(device) bytes, apart
// from every other tensor of the call.
void check_workspace(const TensorView& workspace, const TensorView& out, const TensorView& a,
                     const TensorView& w, const TensorView& scales, const std::optional<TensorView>& offsets,
                     const std::optional<TensorView>& bias) {
  detail::check_workspace(workspace, out.device(), weight_only_workspace_bytes(out.device()),
                          "weight_only_workspace_bytes(device)",
                          {{&out, "out"}, {&a, "a"}, {&w, "w"}, {&scales, "scales"},
                           {offsets ? &*offsets : nullptr, "offsets"}, {bias ? &*bias : nullptr, "bias"}});
}

}  // namespace

void weight_only_mm(const TensorView& out, const TensorView& a, const TensorView& w,
                    const TensorView& scales, const std::optional<TensorView>& offsets,
                    int group_size, const std::optional<TensorView>& bias, Stream stream) {
  run(validate(out, a, w, scales, offsets, group_size, bias, stream));
}

void weight_only_mm(const TensorView& out, const TensorView& a, const TensorView& w,
                    const TensorView& scales, const std::optional<TensorView>& offsets,
                    int group_size, const std::optional<TensorView>& bias, const TensorView& workspace,
                    Stream stream) {
  detail::WeightOnlyArgs args = validate(out, a, w, scales, offsets, group_size, bias, stream);
  check_workspace(workspace, out, a, w, scales, offsets, bias);
  args.workspace = workspace.size(0) > 0 ? workspace.data() : nullptr;
  args.workspace_bytes = workspace.size(0);
  run(args);
}

void weight_only_prepack(const TensorView& out, const TensorView& w, Stream stream) {
  const Device device = out.device();
  detail::check_backend_available(device, "weight_only_prepack");
  check_dtype(w, "w", {DType::kInt8, DType::kUInt8});
  detail::check_same_dtype(out, "out", w, "w");
  detail::check_rank(w, "w", 2);
  const bool int4 = w.dtype() == DType::kUInt8;
  const int64_t n = w.size(0), k = plain_k(w, int4);
  detail::check_row_major(w, "w", "N", n, int4 ? "K/2" : "K", w.size(1));
  check_k(k, "w");
  detail::check_rank(out, "out", 3);
  const PrepackedShape shape = weight_only_prepacked_shape(n, k, int4);
  if (out.size(0) != shape.row_blocks || out.size(1) != shape.k_tiles ||
      out.size(2) != shape.tile_bytes || !out.is_contiguous()) {
    fail(ErrorKind::kValue, "out: expected a contiguous [" + std::to_string(shape.row_blocks) +
                                ", " + std::to_string(shape.k_tiles) + ", 1024] tensor for N=" +
                                std::to_string(n) + ", K=" + std::to_string(k) + ", got " +
                                detail::shape_string(out));
  }
  check_common(out, "out", device);
  check_common(w, "w", device);
  if (device.is_cuda()) check_aligned16(out.data(), 0, false, "out");
  const int64_t ld_bytes = n > 1 ? w.stride(0) : w.size(1);
  if (n == 0) return;
  if (device.is_cpu()) {
    detail::weight_only_prepack_cpu(static_cast<uint8_t*>(out.data()),
                                    static_cast<const uint8_t*>(w.data()), n, k, ld_bytes, int4);
    return;
  }
#if QGEMM_WITH_CUDA
  detail::weight_only_prepack_cuda(static_cast<uint8_t*>(out.data()),
                                   static_cast<const uint8_t*>(w.data()), n, k, ld_bytes, int4,
                                   device, stream);
#else
  (void)stream;
#endif
}

}  // namespace qgemm
