// cuBLAS / cuBLASLt peers and the unfused epilogue kernel of gemm_peers_cuda.h.
#include <cuda_bf16.h>

#include <stdexcept>
#include <string>

#include "cuda_bench.h"
#include "gemm_peers_cuda.h"

namespace qgemm::tools::cuda {

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(int(status)));
  }
}

LtMatmul::LtMatmul(cublasLtHandle_t handle, Kind kind, int64_t m, int64_t n, int64_t k, void* workspace,
                   size_t workspace_bytes, const float* scale_a, const float* scale_b, bool fast_accum)
    : handle_(handle), kind_(kind), workspace_(workspace), workspace_bytes_(workspace_bytes) {
  const bool int8 = kind == Kind::kInt8ToInt32;
  const cublasComputeType_t compute = int8 ? CUBLAS_COMPUTE_32I : CUBLAS_COMPUTE_32F;
  const cudaDataType_t scale_type = int8 ? CUDA_R_32I : CUDA_R_32F;
  const cudaDataType_t in = int8 ? CUDA_R_8I : CUDA_R_8F_E4M3;
  const cudaDataType_t out = int8 ? CUDA_R_32I : CUDA_R_16BF;
  check_cublas(cublasLtMatmulDescCreate(&desc_, compute, scale_type), "cublasLtMatmulDescCreate");
  const cublasOperation_t transpose = CUBLAS_OP_T, none = CUBLAS_OP_N;
  check_cublas(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof(transpose)), "TRANSA");
  check_cublas(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof(none)), "TRANSB");
  if (!int8) {
    // D^T = B^T A^T: cuBLAS's "A" is our B, so our scale_b is its A scale.
    check_cublas(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_b, sizeof(scale_b)), "A_SCALE");
    check_cublas(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_a, sizeof(scale_a)), "B_SCALE");
    const int8_t fast = fast_accum ? 1 : 0;
    check_cublas(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof(fast)), "FAST_ACCUM");
  }
  // cuBLAS column-major: "A" = our B stored K×N (ld K), transposed; "B" =
  // our A stored K×M (ld K); D = N×M (ld N), i.e. our row-major M×N.
  check_cublas(cublasLtMatrixLayoutCreate(&a_, in, k, n, k), "layout A");
  check_cublas(cublasLtMatrixLayoutCreate(&b_, in, k, m, k), "layout B");
  check_cublas(cublasLtMatrixLayoutCreate(&d_, out, n, m, n), "layout D");

  cublasLtMatmulPreference_t preference;
  check_cublas(cublasLtMatmulPreferenceCreate(&preference), "preference");
  check_cublas(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &workspace_bytes_, sizeof(workspace_bytes_)),
               "workspace pref");
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(handle_, desc_, a_, b_, d_, d_, preference, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  if (status == CUBLAS_STATUS_SUCCESS && found > 0) {
    algo_ = result.algo;
    ok_ = true;
  }
}

LtMatmul::~LtMatmul() {
  if (d_) cublasLtMatrixLayoutDestroy(d_);
  if (b_) cublasLtMatrixLayoutDestroy(b_);
  if (a_) cublasLtMatrixLayoutDestroy(a_);
  if (desc_) cublasLtMatmulDescDestroy(desc_);
}

void LtMatmul::run(const void* a, const void* b, void* d, cudaStream_t stream) const {
  const int32_t one_i = 1, zero_i = 0;
  const float one_f = 1.0f, zero_f = 0.0f;
  const bool int8 = kind_ == Kind::kInt8ToInt32;
  const void* alpha = int8 ? static_cast<const void*>(&one_i) : &one_f;
  const void* beta = int8 ? static_cast<const void*>(&zero_i) : &zero_f;
  check_cublas(cublasLtMatmul(handle_, desc_, alpha, b, a_, a, b_, beta, d, d_, d, d_, &algo_, workspace_,
                              workspace_bytes_, stream),
               "cublasLtMatmul");
}

void cublas_bf16_gemm(cublasHandle_t handle, int64_t m, int64_t n, int64_t k, const void* a, const void* b,
                      void* d) {
  const float one = 1.0f, zero = 0.0f;
  check_cublas(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                            static_cast<int>(k), &one, b, CUDA_R_16BF, static_cast<int>(k), a, CUDA_R_16BF,
                            static_cast<int>(k), &zero, d, CUDA_R_16BF, static_cast<int>(n), CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx bf16");
}

namespace {

// Four outputs per thread: one 16-byte int32 load, one 8-byte bf16 store.
__global__ void dequant_epilogue_kernel(const int4* acc, const float* scale_a, const float* scale_b,
                                        const __nv_bfloat16* bias, __nv_bfloat16* out, int64_t m, int64_t n) {
  const int64_t quads = m * n / 4;
  for (int64_t q = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; q < quads;
       q += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int4 v = acc[q];
    const int64_t row = q * 4 / n, col = q * 4 % n;
    const float sa = scale_a[row];
    const int values[4] = {v.x, v.y, v.z, v.w};
    __nv_bfloat16 r[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      r[i] = __float2bfloat16_rn(fmaf(sa, scale_b[col + i] * static_cast<float>(values[i]),
                                      __bfloat162float(bias[col + i])));
    }
    *reinterpret_cast<uint2*>(out + q * 4) = *reinterpret_cast<const uint2*>(r);
  }
}

}  // namespace

void dequant_epilogue_bf16(const int32_t* acc, const float* scale_a, const float* scale_b, const void* bias,
                           void* out, int64_t m, int64_t n, cudaStream_t stream) {
  const int64_t quads = m * n / 4;  // n % 4 == 0 at every benchmark shape
  const int blocks = static_cast<int>(std::min<int64_t>((quads + 255) / 256, 132 * 16));
  dequant_epilogue_kernel<<<blocks, 256, 0, stream>>>(reinterpret_cast<const int4*>(acc), scale_a, scale_b,
                                                      static_cast<const __nv_bfloat16*>(bias),
                                                      static_cast<__nv_bfloat16*>(out), m, n);
  check(cudaGetLastError(), "dequant_epilogue_kernel");
}

}  // namespace qgemm::tools::cuda
