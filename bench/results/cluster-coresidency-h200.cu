// How many clusters of 2/4/8 CTAs (one CTA per SM: 200 KB of shared memory) are co-resident.
#include <cstdio>
#include <cuda_runtime.h>
__global__ void probe() { extern __shared__ char s[]; if (threadIdx.x == 9999) s[0] = 0; }
int main() {
  const int smem = 200 * 1024;
  cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaFuncSetAttribute(probe, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  int sms = 0; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  for (int c : {1, 2, 4, 8, 16}) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(c * 64); cfg.blockDim = dim3(384); cfg.dynamicSmemBytes = smem;
    cudaLaunchAttribute attr; attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = c; attr.val.clusterDim.y = 1; attr.val.clusterDim.z = 1;
    cfg.attrs = &attr; cfg.numAttrs = 1;
    int n = -1; cudaError_t e = cudaOccupancyMaxActiveClusters(&n, probe, &cfg);
    printf("SMs %d cluster %2d: max active clusters %d (%d CTAs) %s\n", sms, c, n, n * c, cudaGetErrorString(e));
  }
}
