// quant_cuda.h — CUDA backend of quantize / dequantize (arguments validated).
#pragma once

#include "quant/quant_args.h"

namespace qgemm::detail {

void quantize_cuda(const QuantArgs& args);
void dequantize_cuda(const QuantArgs& args);

}  // namespace qgemm::detail
