// quant_cpu.h — CPU backend of quantize / dequantize (the reference).
#pragma once

#include "quant/quant_args.h"

namespace qgemm::detail {

void quantize_cpu(const QuantArgs& args);
void dequantize_cpu(const QuantArgs& args);

}  // namespace qgemm::detail
