// quant_cuda.h — CUDA backend of quantize (quant_cuda.cu) and dequantize
// (dequant_cuda.cu); arguments already validated by quant_api.cpp.
#pragma once

#include "quant/quant_args.h"

namespace qgemm::detail {

void quantize_cuda(const QuantArgs& args);
void dequantize_cuda(const QuantArgs& args);

// Throws kValue when T or H exceed what the kernels index (T < 2^31 blocks,
// H < 2^27 elements per row).
void check_cuda_limits(const QuantArgs& args, const char* op);

}  // namespace qgemm::detail
