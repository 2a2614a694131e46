// expect_error.h — asserts that a call throws qgemm::Error of a given kind
// whose message contains every expected piece.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "qgemm/error.h"

namespace qgemm::test {

inline void expect_error(const std::function<void()>& fn, ErrorKind kind,
                         const std::vector<std::string>& pieces) {
  try {
    fn();
    ADD_FAILURE() << "expected an error mentioning '" << pieces.front() << "'";
  } catch (const Error& e) {
    EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(kind)) << e.what();
    for (const auto& piece : pieces) {
      EXPECT_NE(std::string(e.what()).find(piece), std::string::npos)
          << "message '" << e.what() << "' lacks '" << piece << "'";
    }
  }
}

}  // namespace qgemm::test
