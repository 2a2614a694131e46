// The programmatic dependent launch switch (qgemm/launch.h) on any machine:
// it reads back what was set, and launches that follow see it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "qgemm/launch.h"

namespace qgemm::test {
namespace {

TEST(ProgrammaticDependentLaunch, DefaultFollowsTheEnvironment) {
  // The process-wide default: on unless QGEMM_PDL=0 (read once, at first use;
  // no test of this binary sets it before this one runs).
  const char* env = std::getenv("QGEMM_PDL");
  const bool expected = env == nullptr || std::strcmp(env, "0") != 0;
  EXPECT_EQ(programmatic_dependent_launch(), expected);
}

TEST(ProgrammaticDependentLaunch, SwitchReadsBackWhatWasSet) {
  const bool before = programmatic_dependent_launch();
  set_programmatic_dependent_launch(false);
  EXPECT_FALSE(programmatic_dependent_launch());
  set_programmatic_dependent_launch(true);
  EXPECT_TRUE(programmatic_dependent_launch());
  set_programmatic_dependent_launch(before);
}

}  // namespace
}  // namespace qgemm::test
