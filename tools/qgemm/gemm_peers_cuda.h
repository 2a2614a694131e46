// gemm_peers_cuda.h — what an engine would run instead of qgemm's scaled_mm,
// for `qgemm bench gemm`: cuBLASLt int8 GEMM (int32 out) alone and followed by
// a separate dequantization kernel, cuBLAS bf16 GEMM (the unquantized
// baseline) and cuBLASLt fp8 with scalar scales. Same operand layouts as
// qgemm (A [M,K] row-major, B [K,N] column-major, D [M,N] row-major), which
// in cuBLAS's column-major terms is D^T = op_T(B) · A^T: the "TN" case that
// cuBLASLt's int8 and fp8 kernels require.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace qgemm::tools::cuda {

// One cuBLASLt matmul plan (descriptors + the heuristic's first algorithm)
// for a fixed shape and type; run() enqueues it with new pointers.
class LtMatmul {
 public:
  enum class Kind { kInt8ToInt32, kFp8ToBf16 };
  // scale_a / scale_b: device fp32 scalars (fp8 only; null for int8).
  // fast_accum: fp8 without periodic promotion to fp32 (CUBLASLT_MATMUL_DESC_FAST_ACCUM).
  LtMatmul(cublasLtHandle_t handle, Kind kind, int64_t m, int64_t n, int64_t k, void* workspace,
           size_t workspace_bytes, const float* scale_a = nullptr, const float* scale_b = nullptr,
           bool fast_accum = false);
  ~LtMatmul();
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;
  bool ok() const { return ok_; }
  void run(const void* a, const void* b, void* d, cudaStream_t stream) const;

 private:
  cublasLtHandle_t handle_;
  Kind kind_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  void* workspace_;
  size_t workspace_bytes_;
  bool ok_ = false;
};

// D = A·B in bf16 with fp32 accumulation (cublasGemmEx, default algorithm).
void cublas_bf16_gemm(cublasHandle_t handle, int64_t m, int64_t n, int64_t k, const void* a,
                      const void* b, void* d);

// The separate epilogue a user without qgemm writes after an int32 GEMM:
// out[m,n] = bf16(scale_a[m] · (scale_b[n] · float(acc[m,n])) + bias[n]).
void dequant_epilogue_bf16(const int32_t* acc, const float* scale_a, const float* scale_b,
                           const void* bias, void* out, int64_t m, int64_t n, cudaStream_t stream);

void check_cublas(cublasStatus_t status, const char* what);

}  // namespace qgemm::tools::cuda
