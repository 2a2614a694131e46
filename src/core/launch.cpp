// launch.cpp — the process-wide programmatic dependent launch switch
// (qgemm/launch.h). Read on every launch, so an atomic.
#include "qgemm/launch.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace qgemm {
namespace {

bool pdl_from_environment() {
  const char* value = std::getenv("QGEMM_PDL");
  return value == nullptr || std::strcmp(value, "0") != 0;
}

std::atomic<bool>& pdl_switch() {
  static std::atomic<bool> enabled{pdl_from_environment()};
  return enabled;
}

}  // namespace

void set_programmatic_dependent_launch(bool enabled) { pdl_switch().store(enabled, std::memory_order_relaxed); }

bool programmatic_dependent_launch() { return pdl_switch().load(std::memory_order_relaxed); }

}  // namespace qgemm
