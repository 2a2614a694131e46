// qgemm/version.h — library version and what this build contains.
#pragma once

namespace qgemm {

const char* version();
// True when the library was built with the CUDA backend.
bool built_with_cuda();
// CUDA architectures compiled into the library ("90a;80"), or "" without CUDA.
const char* cuda_archs();
// Number of CUDA devices visible at run time (0 without CUDA or without a GPU).
int cuda_device_count();

}  // namespace qgemm
