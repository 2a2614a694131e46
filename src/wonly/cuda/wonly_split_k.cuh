// wonly_split_k.cuh — the weight-only kernels split K across a thread-block
// cluster (core/cuda_cluster.cuh) when a problem has too few output tiles to
// fill the GPU: the rank order of the sums is fixed, and every CTA adds
// them for its slice of the outputs (the decode kernel: wonly_gemv.cu; the
// tensor-core kernels: wonly_tile.cuh, reduce_and_store_split_k). How many
// CTAs split: wonly_split_plan.h.
#pragma once

#include "core/cuda_cluster.cuh"
#include "wonly/cuda/wonly_split_plan.h"
#include "wonly/wonly_args.h"
