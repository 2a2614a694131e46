// qgemm/error.h — the one exception type every qgemm entry point throws.
#pragma once

#include <stdexcept>
#include <string>

namespace qgemm {

// What kind of mistake an Error reports. Bindings map kType to TypeError and
// the rest to ValueError / RuntimeError.
enum class ErrorKind {
  kValue,           // a shape, length, stride, alignment or value is wrong
  kType,            // a dtype is wrong
  kNotImplemented,  // valid request that no backend in this build can serve
  kBackend,         // a CUDA / runtime failure
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace qgemm
