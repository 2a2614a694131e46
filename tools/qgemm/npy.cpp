#include "npy.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>
#include <stdexcept>

#include "core/numeric.h"

namespace qgemm::tools {
namespace {

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw std::runtime_error(path + ": " + what);
}

// The value of `key` in the header's Python dict literal, e.g. 'descr': '<f4'.
std::string field(const std::string& header, const std::string& key, const std::string& path) {
  const std::regex pattern("'" + key + "'\\s*:\\s*('[^']*'|True|False|\\([^)]*\\))");
  std::smatch match;
  if (!std::regex_search(header, match, pattern)) bad(path, "no '" + key + "' in the .npy header");
  return match[1];
}

}  // namespace

NpyArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) bad(path, "cannot open");
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) bad(path, "not a .npy file");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
    offset = 10;
  } else if ((major == 2 || major == 3) && bytes.size() >= 12) {
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    offset = 12;
  } else {
    bad(path, "unsupported .npy version " + std::to_string(major));
  }
  if (offset + header_len > bytes.size()) bad(path, "truncated header");
  const std::string header(bytes.data() + offset, header_len);
  const std::string descr = field(header, "descr", path);
  if (field(header, "fortran_order", path) != "False") bad(path, "expected C order (fortran_order False)");
  size_t element = 0;
  if (descr == "'<f2'") element = 2;
  else if (descr == "'<f4'") element = 4;
  else if (descr == "'<f8'") element = 8;
  else bad(path, "expected little-endian float16, float32 or float64, got dtype " + descr);

  NpyArray array;
  const std::string shape = field(header, "shape", path);
  int64_t count = 1;
  const std::regex number("\\d+");
  for (auto it = std::sregex_iterator(shape.begin(), shape.end(), number); it != std::sregex_iterator(); ++it) {
    array.shape.push_back(std::stoll(it->str()));
    count *= array.shape.back();
  }
  const char* data = bytes.data() + offset + header_len;
  if (static_cast<size_t>(count) * element > bytes.size() - offset - header_len) bad(path, "truncated data");
  array.data.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const char* p = data + i * element;
    if (element == 2) {
      uint16_t h;
      std::memcpy(&h, p, 2);
      array.data[i] = numeric::fp16_bits_to_float(h);
    } else if (element == 4) {
      std::memcpy(&array.data[i], p, 4);
    } else {
      double d;
      std::memcpy(&d, p, 8);
      array.data[i] = static_cast<float>(d);
    }
  }
  return array;
}

}  // namespace qgemm::tools
