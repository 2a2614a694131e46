// Experiment: paged_attention_mma_kernel (the heads-on-N form, 329be87 on) at two register
// budgets, int8 / fp8 / bf16 caches and bf16 / fp16 queries, unsplit, checked against the CUDA-core kernel.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>
#include "kvcache/cuda/paged_attention_mma.cuh"
#include "kvcache/cuda/paged_attention_kernel.cuh"
using namespace qgemm;
using namespace qgemm::detail::attention;
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)

template <class K>
float run(const char* name, K kernel, Params p, dim3 grid, double bytes) {
  cudaFuncAttributes a; CK(cudaFuncGetAttributes(&a, kernel));
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  for (int i = 0; i < 10; ++i) kernel<<<grid, kThreads>>>(p);
  CK(cudaDeviceSynchronize());
  std::vector<float> ts;
  for (int i = 0; i < 51; ++i) {
    cudaEventRecord(e0); kernel<<<grid, kThreads>>>(p); cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1); ts.push_back(ms * 1000);
  }
  std::sort(ts.begin(), ts.end());
  printf("%-22s regs %3d spill %4d  median %8.2f us  %6.0f GB/s\n", name, a.numRegs, (int)a.localSizeBytes, ts[25], bytes / (ts[25] * 1e3));
  return ts[25];
}

static float bf2f(uint16_t b) { uint32_t u = (uint32_t)b << 16; float f; memcpy(&f, &u, 4); return f; }
static uint16_t f2bf(float f) { uint32_t u; memcpy(&u, &f, 4); return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16); }

int main() {
  const int S = 32, L = 4096, QH = 32, KVH = 8, D = 128, BS = 16;
  const int bps = L / BS, blocks = S * bps;
  std::vector<int32_t> table(blocks); std::iota(table.begin(), table.end(), 0);
  std::shuffle(table.begin(), table.end(), std::mt19937_64(3));
  std::vector<int32_t> lens(S, L);
  std::mt19937_64 r(1); std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<uint16_t> qb(S * QH * D), qh(S * QH * D);
  for (size_t i = 0; i < qb.size(); ++i) { float v = nd(r) * 3.0f; qb[i] = f2bf(v); __half h = __float2half(v); memcpy(&qh[i], &h, 2); }
  const size_t elems = (size_t)blocks * BS * KVH * D;
  std::vector<int8_t> codes(elems); for (auto& c : codes) c = (int8_t)(r() % 255 - 127);
  std::vector<uint8_t> f8(elems); for (auto& c : f8) { c = (uint8_t)(r() % 256); if ((c & 0x7f) == 0x7f) c = 0; }
  std::vector<uint16_t> vals(elems); for (auto& v : vals) v = f2bf(nd(r));
  std::vector<float> sc((size_t)blocks * BS * KVH); for (auto& s : sc) s = 0.01f * (1.0f + (r() % 100) / 100.0f);
  void *dqb, *dqh, *dout, *dt, *dl, *k8, *v8, *kf8, *vf8, *k16, *v16, *ks, *vs;
  CK(cudaMalloc(&dqb, qb.size() * 2)); CK(cudaMalloc(&dqh, qh.size() * 2)); CK(cudaMalloc(&dout, qb.size() * 2));
  CK(cudaMalloc(&dt, table.size() * 4)); CK(cudaMalloc(&dl, S * 4));
  CK(cudaMalloc(&k8, elems)); CK(cudaMalloc(&v8, elems)); CK(cudaMalloc(&kf8, elems)); CK(cudaMalloc(&vf8, elems));
  CK(cudaMalloc(&k16, elems * 2)); CK(cudaMalloc(&v16, elems * 2));
  CK(cudaMalloc(&ks, sc.size() * 4)); CK(cudaMalloc(&vs, sc.size() * 4));
  cudaMemcpy(dqb, qb.data(), qb.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(dqh, qh.data(), qh.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(dt, table.data(), table.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dl, lens.data(), S * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(k8, codes.data(), elems, cudaMemcpyHostToDevice);
  std::reverse(codes.begin(), codes.end());
  cudaMemcpy(v8, codes.data(), elems, cudaMemcpyHostToDevice);
  cudaMemcpy(kf8, f8.data(), elems, cudaMemcpyHostToDevice);
  std::reverse(f8.begin(), f8.end());
  cudaMemcpy(vf8, f8.data(), elems, cudaMemcpyHostToDevice);
  cudaMemcpy(k16, vals.data(), elems * 2, cudaMemcpyHostToDevice); cudaMemcpy(v16, vals.data(), elems * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(ks, sc.data(), sc.size() * 4, cudaMemcpyHostToDevice);
  std::reverse(sc.begin(), sc.end());
  cudaMemcpy(vs, sc.data(), sc.size() * 4, cudaMemcpyHostToDevice);
  Params p{};
  p.query = dqb; p.query_seq_stride = QH * D; p.query_head_stride = D;
  p.out = dout; p.out_seq_stride = QH * D; p.out_head_stride = D;
  p.num_blocks = blocks; p.block_size = BS; p.kv_heads = KVH;
  p.block_tables = (int32_t*)dt; p.table_stride = bps; p.max_blocks = bps; p.seq_lens = (int32_t*)dl;
  p.scale_log2 = 0.0883883f * 1.442695f; p.q_heads = QH; p.group = QH / KVH; p.head_chunks = 1; p.partitions = 1; p.partition_tokens = L;
  const dim3 grid(S * KVH, 1);
  const double b8 = 2.0 * S * L * KVH * (D + 4), b16 = 2.0 * S * L * KVH * D * 2;
  Params p8 = p; p8.key = k8; p8.value = v8; p8.key_scale = (float*)ks; p8.value_scale = (float*)vs;
  Params pf8 = p8; pf8.key = kf8; pf8.value = vf8;
  Params p8h = p8; p8h.query = dqh;
  Params p16 = p; p16.key = k16; p16.value = v16;
  // Correctness: tensor-core kernel against the CUDA-core kernel, same build.
  auto check = [&](const char* name, auto mma, auto core, Params pp, bool half) {
    std::vector<uint16_t> a(qb.size()), b(qb.size());
    mma<<<grid, kThreads>>>(pp); CK(cudaDeviceSynchronize()); cudaMemcpy(a.data(), dout, a.size() * 2, cudaMemcpyDeviceToHost);
    core<<<grid, kThreads>>>(pp); CK(cudaDeviceSynchronize()); cudaMemcpy(b.data(), dout, b.size() * 2, cudaMemcpyDeviceToHost);
    double worst = 0, mx = 0; size_t differ = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      float x, y;
      if (half) { __half hx, hy; memcpy(&hx, &a[i], 2); memcpy(&hy, &b[i], 2); x = __half2float(hx); y = __half2float(hy); }
      else { x = bf2f(a[i]); y = bf2f(b[i]); }
      worst = std::max(worst, (double)std::fabs(x - y)); mx = std::max(mx, (double)std::fabs(y)); differ += a[i] != b[i];
    }
    printf("check %-16s mma vs cuda-core: max |diff| %.3g, max |out| %.3g, %zu of %zu outputs differ\n", name, worst, mx, differ, a.size());
  };
  check("int8 bf16-q", paged_attention_mma_kernel<CacheKind::kInt8, DType::kBFloat16, 128, 1>, paged_attention_kernel<CacheKind::kInt8, DType::kBFloat16, 128, 8>, p8, false);
  check("fp8 bf16-q", paged_attention_mma_kernel<CacheKind::kFp8, DType::kBFloat16, 128, 1>, paged_attention_kernel<CacheKind::kFp8, DType::kBFloat16, 128, 8>, pf8, false);
  check("int8 fp16-q", paged_attention_mma_kernel<CacheKind::kInt8, DType::kFloat16, 128, 1>, paged_attention_kernel<CacheKind::kInt8, DType::kFloat16, 128, 8>, p8h, true);
  for (int rep = 0; rep < 3; ++rep) {
    run("int8 bf16-q", paged_attention_mma_kernel<CacheKind::kInt8, DType::kBFloat16, 128, 1>, p8, grid, b8);
    run("fp8 bf16-q", paged_attention_mma_kernel<CacheKind::kFp8, DType::kBFloat16, 128, 1>, pf8, grid, b8);
    run("int8 fp16-q", paged_attention_mma_kernel<CacheKind::kInt8, DType::kFloat16, 128, 1>, p8h, grid, b8);
    run("bf16 cache", paged_attention_mma_kernel<CacheKind::kBFloat16, DType::kBFloat16, 128, 1>, p16, grid, b16);
    run("int8 bf16-q 2cta", paged_attention_mma_kernel<CacheKind::kInt8, DType::kBFloat16, 128, 1, 2>, p8, grid, b8);
    run("fp8 bf16-q 2cta", paged_attention_mma_kernel<CacheKind::kFp8, DType::kBFloat16, 128, 1, 2>, pf8, grid, b8);
    run("bf16 cache 1cta", paged_attention_mma_kernel<CacheKind::kBFloat16, DType::kBFloat16, 128, 1, 1>, p16, grid, b16);
  }
  return 0;
}
