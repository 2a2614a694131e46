// npy.h — reads a NumPy .npy file (format 1.0 – 3.0) of little-endian
// float16, float32 or float64 in C order into fp32, for `qgemm calibrate`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace qgemm::tools {

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> data;  // row-major, converted to fp32
};

// Throws std::runtime_error naming the file and what is wrong with it.
NpyArray read_npy(const std::string& path);

}  // namespace qgemm::tools
