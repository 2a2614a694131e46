// Experiment: paged_attention_mma_kernel at different register budgets
// (__launch_bounds__ min CTAs per SM), int8 and bf16 caches, unsplit.
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>
#include "kvcache/cuda/paged_attention_mma.cuh"
#include "kvcache/cuda/paged_attention_kernel.cuh"
using namespace qgemm;
using namespace qgemm::detail::attention;
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)

template <class K>
void run(const char* name, K kernel, Params p, dim3 grid, double bytes) {
  cudaFuncAttributes a; CK(cudaFuncGetAttributes(&a, kernel));
  int occ = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kernel, kThreads, 0));
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  for (int i = 0; i < 5; ++i) kernel<<<grid, kThreads>>>(p);
  CK(cudaDeviceSynchronize());
  std::vector<float> ts;
  for (int i = 0; i < 30; ++i) {
    cudaEventRecord(e0); kernel<<<grid, kThreads>>>(p); cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1); ts.push_back(ms * 1000);
  }
  std::sort(ts.begin(), ts.end());
  printf("%-28s regs %3d spill %4d occ %d  median %8.2f us  %6.0f GB/s\n", name, a.numRegs, (int)a.localSizeBytes, occ, ts[15], bytes / (ts[15] * 1e3));
}

int main(int argc, char** argv) {
  const bool profile = argc > 1;
  const int S = 32, L = 4096, QH = 32, KVH = 8, D = 128, BS = 16;
  const int bps = L / BS, blocks = S * bps;
  std::vector<int32_t> table(blocks); std::iota(table.begin(), table.end(), 0);
  std::shuffle(table.begin(), table.end(), std::mt19937_64(3));
  std::vector<int32_t> lens(S, L);
  std::vector<uint16_t> q(S * QH * D, 0x3f00);
  const size_t elems = (size_t)blocks * BS * KVH * D;
  std::vector<int8_t> codes(elems); std::mt19937_64 r(1); for (auto& c : codes) c = (int8_t)(r() % 255 - 127);
  std::vector<uint16_t> vals(elems); for (auto& v : vals) v = 0x3c00 + (r() % 256);
  std::vector<float> sc((size_t)blocks * BS * KVH, 0.01f);
  void *dq, *dout, *dt, *dl, *k8, *v8, *k16, *v16, *ks, *vs;
  CK(cudaMalloc(&dq, q.size() * 2)); CK(cudaMalloc(&dout, q.size() * 2));
  CK(cudaMalloc(&dt, table.size() * 4)); CK(cudaMalloc(&dl, S * 4));
  CK(cudaMalloc(&k8, elems)); CK(cudaMalloc(&v8, elems)); CK(cudaMalloc(&k16, elems * 2)); CK(cudaMalloc(&v16, elems * 2));
  CK(cudaMalloc(&ks, sc.size() * 4)); CK(cudaMalloc(&vs, sc.size() * 4));
  cudaMemcpy(dq, q.data(), q.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(dt, table.data(), table.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dl, lens.data(), S * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(k8, codes.data(), elems, cudaMemcpyHostToDevice); cudaMemcpy(v8, codes.data(), elems, cudaMemcpyHostToDevice);
  cudaMemcpy(k16, vals.data(), elems * 2, cudaMemcpyHostToDevice); cudaMemcpy(v16, vals.data(), elems * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(ks, sc.data(), sc.size() * 4, cudaMemcpyHostToDevice); cudaMemcpy(vs, sc.data(), sc.size() * 4, cudaMemcpyHostToDevice);
  Params p{};
  p.query = dq; p.query_seq_stride = QH * D; p.query_head_stride = D;
  p.out = dout; p.out_seq_stride = QH * D; p.out_head_stride = D;
  p.num_blocks = blocks; p.block_size = BS; p.kv_heads = KVH;
  p.block_tables = (int32_t*)dt; p.table_stride = bps; p.max_blocks = bps; p.seq_lens = (int32_t*)dl;
  p.scale_log2 = 0.1f; p.q_heads = QH; p.group = QH / KVH; p.head_chunks = 1; p.partitions = 1; p.partition_tokens = L;
  const dim3 grid(S * KVH, 1);
  const double b8 = 2.0 * S * L * KVH * (D + 4), b16 = 2.0 * S * L * KVH * D * 2;
  Params p8 = p; p8.key = k8; p8.value = v8; p8.key_scale = (float*)ks; p8.value_scale = (float*)vs;
  Params p16 = p; p16.key = k16; p16.value = v16;
  if (profile) {
    paged_attention_mma_kernel<CacheKind::kInt8, DType::kBFloat16, 128, 1><<<grid, kThreads>>>(p8);
    paged_attention_mma_kernel<CacheKind::kBFloat16, DType::kBFloat16, 128, 1><<<grid, kThreads>>>(p16);
    CK(cudaDeviceSynchronize());
    return 0;
  }
  // Correctness: the tensor-core kernel against the CUDA-core one (int8 cache).
  {
    std::vector<uint16_t> a(q.size()), b(q.size());
    paged_attention_mma_kernel<CacheKind::kInt8, DType::kBFloat16, 128, 1><<<grid, kThreads>>>(p8);
    CK(cudaDeviceSynchronize()); cudaMemcpy(a.data(), dout, a.size() * 2, cudaMemcpyDeviceToHost);
    Params p8c = p8; p8c.head_chunks = 1;
    paged_attention_kernel<CacheKind::kInt8, DType::kBFloat16, 128, 8><<<grid, kThreads>>>(p8c);
    CK(cudaDeviceSynchronize()); cudaMemcpy(b.data(), dout, b.size() * 2, cudaMemcpyDeviceToHost);
    double worst = 0, mx = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      float x, y; uint32_t ux = (uint32_t)a[i] << 16, uy = (uint32_t)b[i] << 16; memcpy(&x, &ux, 4); memcpy(&y, &uy, 4);
      worst = std::max(worst, (double)std::fabs(x - y)); mx = std::max(mx, (double)std::fabs(y));
    }
    printf("mma vs cuda-core int8: max |diff| %.3g, max |out| %.3g\n", worst, mx);
  }
  for (int rep = 0; rep < 2; ++rep) {
    run("int8 mma min1", paged_attention_mma_kernel<CacheKind::kInt8, DType::kBFloat16, 128, 1>, p8, grid, b8);
    run("int8 mma min2", paged_attention_mma_kernel<CacheKind::kInt8, DType::kBFloat16, 128, 2>, p8, grid, b8);
    run("bf16 mma min1", paged_attention_mma_kernel<CacheKind::kBFloat16, DType::kBFloat16, 128, 1>, p16, grid, b16);
    run("bf16 mma min2", paged_attention_mma_kernel<CacheKind::kBFloat16, DType::kBFloat16, 128, 2>, p16, grid, b16);
    Params p8c = p8; p8c.head_chunks = 1;
    run("int8 cuda-core tile8", paged_attention_kernel<CacheKind::kInt8, DType::kBFloat16, 128, 8>, p8c, grid, b8);
  }
  return 0;
}
